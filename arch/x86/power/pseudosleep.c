// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep CPU halt for x86: STI;HLT until the nap ends.
 *
 * HLT stops the logical CPU until the next interrupt; all hyperthreads of a
 * core must halt before the core saves power, which is why every CPU is sent
 * here.  An interrupt that is not an armed wake IRQ runs its handler on the
 * way out of HLT and the loop halts again; an armed one ends the nap and
 * every CPU gets an IPI that sets need_resched, which ends the loop.
 */

#include <linux/irqflags.h>
#include <linux/pseudosleep.h>
#include <linux/sched.h>

unsigned long __cpuidle arch_pseudosleep_halt(void)
{
	unsigned long wakeups = 0;

	while (pseudosleep_cpu_napping() && !need_resched()) {
		raw_safe_halt();		/* sti; hlt */
		raw_local_irq_disable();
		if (pseudosleep_cpu_napping())
			wakeups++;
	}
	return wakeups;
}
