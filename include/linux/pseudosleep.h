/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pseudo-sleep: a suspend to idle that keeps chosen devices running, with
 * the tick, and that chosen IRQs end besides the usual wakeups.  See
 * Documentation/pseudosleep.rst.
 */
#ifndef _LINUX_PSEUDOSLEEP_H
#define _LINUX_PSEUDOSLEEP_H

#include <linux/printk.h>
#include <linux/suspend.h>
#include <linux/types.h>

struct device;
struct device_attribute;
struct wakeup_source;

/* Where a nap is; written by the suspending task and the waking IRQ. */
enum pseudosleep_phase {
	PSEUDOSLEEP_IDLE,	/* no nap in progress */
	PSEUDOSLEEP_ENTERING,	/* freezing, suspending devices */
	PSEUDOSLEEP_NAPPING,	/* in s2idle_loop(): the CPUs idle */
	PSEUDOSLEEP_RESUMING,	/* woken: resuming devices, thawing */
};

#ifdef CONFIG_PM_PSEUDOSLEEP

extern enum pseudosleep_phase pseudosleep_phase;
extern struct device_attribute dev_attr_nosleep;

void pseudosleep_irq_hit(unsigned int irq);

/**
 * pseudosleep_in_progress - true from the start to the end of a nap attempt
 *
 * The PM core's messages printed at every system sleep transition become
 * debug messages then (pm_sleep_pr_info()): a server may nap many times a
 * second.  Built-in code only; modules use pseudosleep_hide_nap().
 *
 * Return: true from the start to the end of a nap attempt, else false.
 */
static inline bool pseudosleep_in_progress(void)
{
	return READ_ONCE(pseudosleep_phase) != PSEUDOSLEEP_IDLE;
}

void __pseudosleep_ws_activated(struct wakeup_source *ws);

/**
 * pseudosleep_ws_activated - a wakeup source became active
 * @ws: the wakeup source
 *
 * Called by wakeup_source_activate(), under @ws->lock, on the source's
 * inactive-to-active transition only, and before the event is counted:
 * an entry that sees the event pending must find the nap claimed.  While
 * a nap is entered or lasts, the activation ends it as a hard wakeup
 * would: work has come for a frozen task (a server's socket watched with
 * EPOLLWAKEUP became ready).
 * Outside a nap one load.
 */
static inline void pseudosleep_ws_activated(struct wakeup_source *ws)
{
	if (pseudosleep_in_progress())
		__pseudosleep_ws_activated(ws);
}

enum s2idle_states pseudosleep_s2idle_state(void);
void pseudosleep_begin(void);
int pseudosleep_keep_devices(bool *console_kept);
void pseudosleep_release_devices(void);
void pseudosleep_end(int error);
bool pseudosleep_irq_kept(unsigned int irq);
void pseudosleep_kept_resume_request(struct device *dev);
bool pseudosleep_hide_nap(void);
void pseudosleep_skip_mark(void);
void pseudosleep_skip_unmark(void);

/**
 * pseudosleep_alarm_fired - an alarm timer came due
 *
 * Called by alarmtimer_fired().  An alarm (CLOCK_BOOTTIME_ALARM,
 * CLOCK_REALTIME_ALARM) that comes due during a nap ends it, as it ends a
 * suspend: it is how user space schedules a wakeup.  Outside a nap one load.
 */
static inline void pseudosleep_alarm_fired(void)
{
	if (pseudosleep_in_progress())
		pm_system_wakeup();
}

#else /* !CONFIG_PM_PSEUDOSLEEP */

static inline void pseudosleep_irq_hit(unsigned int irq) { }
static inline void pseudosleep_ws_activated(struct wakeup_source *ws) { }
static inline bool pseudosleep_in_progress(void) { return false; }
#ifdef CONFIG_SUSPEND
static inline enum s2idle_states pseudosleep_s2idle_state(void)
{
	return S2IDLE_STATE_ENTER;
}
#endif
static inline void pseudosleep_begin(void) { }
static inline int pseudosleep_keep_devices(bool *console_kept) { return 0; }
static inline void pseudosleep_release_devices(void) { }
static inline void pseudosleep_end(int error) { }
static inline bool pseudosleep_irq_kept(unsigned int irq) { return false; }
static inline bool pseudosleep_hide_nap(void) { return false; }
static inline void pseudosleep_skip_mark(void) { }
static inline void pseudosleep_skip_unmark(void) { }
static inline void pseudosleep_alarm_fired(void) { }

#endif /* CONFIG_PM_PSEUDOSLEEP */

/*
 * pr_info() and pr_notice() for the messages printed at every system sleep
 * transition; pm_pr_dbg() during a pseudo-sleep nap.
 */
#ifdef CONFIG_PM_PSEUDOSLEEP
__printf(2, 3) void pm_sleep_printk(int level, const char *fmt, ...);
#define pm_sleep_pr_info(fmt, ...) \
	pm_sleep_printk(LOGLEVEL_INFO, pr_fmt(fmt), ##__VA_ARGS__)
#define pm_sleep_pr_notice(fmt, ...) \
	pm_sleep_printk(LOGLEVEL_NOTICE, pr_fmt(fmt), ##__VA_ARGS__)
#else
#define pm_sleep_pr_info(fmt, ...) pr_info(fmt, ##__VA_ARGS__)
#define pm_sleep_pr_notice(fmt, ...) pr_notice(fmt, ##__VA_ARGS__)
#endif

#endif /* _LINUX_PSEUDOSLEEP_H */
