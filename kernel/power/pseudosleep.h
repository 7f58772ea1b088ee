/* SPDX-License-Identifier: GPL-2.0 */
/* Pseudo-sleep internals shared by kernel/power/pseudosleep*.c. */
#ifndef _KERNEL_POWER_PSEUDOSLEEP_H
#define _KERNEL_POWER_PSEUDOSLEEP_H

#include <linux/ktime.h>
#include <linux/pseudosleep.h>
#include <linux/types.h>

/*
 * Timestamps of the current nap, ktime_get_mono_fast_ns(), from the
 * suspend_resume trace events but for begin, irq and end.
 */
struct pseudosleep_times {
	u64 begin;		/* enter_state() started */
	u64 synced;		/* filesystems synced */
	u64 frozen;		/* tasks frozen, device suspend starts */
	u64 suspended;		/* devices suspended (through noirq) */
	u64 kicked;		/* CPUs sent into idle (s2idle_enter()) */
	u64 irq;		/* the armed IRQ or wakeup source came */
	u64 woken;		/* s2idle_enter() returned */
	u64 resumed;		/* devices resumed (dpm_complete()) */
	u64 end;		/* tasks thawed, back to user space */
};

extern struct pseudosleep_times pseudosleep_times;

/* pseudosleep_irq.c: the armed wake IRQs */
int pseudosleep_parse_irqs(const char *buf, unsigned long *bits,
			   unsigned int nbits, bool (*usable)(unsigned int irq));
bool pseudosleep_irq_armed(unsigned int irq);
int pseudosleep_arm(const unsigned long *bits, unsigned int nbits);
int pseudosleep_copy_armed(unsigned long *bits, unsigned int nbits);
void pseudosleep_wake_reset(void);
bool pseudosleep_woken(void);
unsigned int pseudosleep_wake_irq(void);
void pseudosleep_wake_source(char *buf, size_t len);
bool pseudosleep_ws_pending(void);
void pseudosleep_note_event(void);
unsigned long pseudosleep_ws_events(void);	/* KUnit only */
int pseudosleep_irq_init(void);
int pseudosleep_report_arm(void);
void pseudosleep_check_arm_counts(void);
extern struct kobj_attribute pseudosleep_arm_attr;

/* pseudosleep_keep.c: devices kept awake during a nap */
int pseudosleep_parse_bool(const char *buf, bool *val);
int pseudosleep_keep_mark(void);
bool pseudosleep_keep_consoles(void);
void pseudosleep_keep_unmark(void);
bool pseudosleep_skip_no_pm_work(void);

/* pseudosleep_stats.c: /sys/power/pseudosleep/ */
void pseudosleep_stats_nap(unsigned long wakeups);
void pseudosleep_stats_abort(void);
int pseudosleep_stats_init(void);

#endif /* _KERNEL_POWER_PSEUDOSLEEP_H */
