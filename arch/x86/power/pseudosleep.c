// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep CPU halt for x86: one STI;HLT of the nap's halt loop.
 *
 * HLT stops the logical CPU until the next interrupt; all hyperthreads of a
 * core must halt before the core saves power, which is why every CPU is sent
 * here.  The loop around it is the idle loop: an interrupt that is not an
 * armed wake IRQ runs its handler on the way out of HLT, the idle loop
 * re-arms the tick for the timers that handler may have queued and halts
 * again; an armed one ends the nap and every CPU gets an IPI that sets
 * need_resched.
 */

#include <linux/irqflags.h>
#include <linux/pseudosleep.h>

void __cpuidle arch_pseudosleep_halt(void)
{
	raw_safe_halt();		/* sti; hlt */
	raw_local_irq_disable();
}
