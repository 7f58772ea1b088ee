// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep: a quiet nap.  The halted CPUs of a nap do not wake for
 * their timers.
 *
 * With user space frozen, what still wakes a napping CPU with no traffic
 * is the kernel's housekeeping: the soft lockup watchdog, the clocksource
 * watchdog, vmstat, the deadline server, delayed work.  s2idle silences
 * them by freezing the tick and timekeeping, which a nap cannot do: the
 * kept NIC's handlers and the network stack run during the nap and read
 * the time.  Instead each napping CPU defers its timers, up to
 * pseudosleep.timer_defer_ms: they behave like deferrable timers and run
 * when an interrupt wakes the CPU anyway, at the deadline, or when the
 * nap ends.  Timers armed by the handlers that run during the nap wait
 * like the others, unless they expire before the CPU halts again.
 *
 * The deadline bounds how late a timer can be.  A grace period needs two
 * steps of RCU's timer, so it is capped at a third of the RCU CPU stall
 * timeout (21 s by default, 3 s at least), and at the soft lockup
 * watchdog's sample period (4 s by default), so the lockup detectors see
 * no lockup: the perf NMI hard lockup detector reports a CPU whose
 * watchdog timer did not run between two of its checks, which are at
 * least 4/5 of watchdog_thresh apart.  Longer deadlines would also pass
 * the 5 s default transmit timeout of a kept NIC whose driver completes
 * transmissions from a timer.  The clocksource watchdog, whose check needs
 * its 0.5 s interval, pauses during the nap as it does during a suspend.
 */

#define pr_fmt(fmt) "pseudosleep: " fmt

#include <linux/alarmtimer.h>
#include <linux/clocksource.h>
#include <linux/hrtimer.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/nmi.h>
#include <linux/rcupdate.h>
#include <linux/tick.h>

#include "pseudosleep.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "pseudosleep."

#define TIMER_DEFER_MS_MAX	5000

static unsigned int timer_defer_ms = 4000;

/*
 * The deadlines of all CPUs are multiples of timer_defer_ms after the start
 * of the halt, so the CPUs wake together and the work their timers hand
 * to each other finds them awake.
 */
static ktime_t defer_epoch;
/* The first alarm timer, when the nap started: no deadline passes it. */
static ktime_t defer_alarm;
/* This nap's deferral in ms, 0 when its timers are not deferred. */
static unsigned int defer_period_ms;

/**
 * pseudosleep_parse_defer_ms - parse a pseudosleep.timer_defer_ms value
 * @val: decimal milliseconds, with an optional trailing newline
 * @ms: where the value goes; untouched on error
 *
 * Return: 0, -EINVAL for anything but a decimal number, -ERANGE above
 * TIMER_DEFER_MS_MAX (a longer deferral reaches the lockup detectors').
 */
int pseudosleep_parse_defer_ms(const char *val, unsigned int *ms)
{
	unsigned int v;
	int ret;

	ret = kstrtouint(val, 10, &v);	/* -EINVAL or -ERANGE */
	if (ret)
		return ret;
	if (v > TIMER_DEFER_MS_MAX)
		return -ERANGE;
	*ms = v;
	return 0;
}

static int timer_defer_ms_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret;

	ret = pseudosleep_parse_defer_ms(val, &v);
	if (ret)
		return ret;
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static const struct kernel_param_ops timer_defer_ms_ops = {
	.set = timer_defer_ms_set,
	.get = param_get_uint,
};
module_param_cb(timer_defer_ms, &timer_defer_ms_ops, &timer_defer_ms, 0644);
MODULE_PARM_DESC(timer_defer_ms,
		 "how long a napping CPU's timers may wait, 0-5000 ms (0: not at all; default 4000)");

/**
 * pseudosleep_defer_deadline - the deadline of a napping CPU's timers
 * @now: the current time
 * @epoch: when the CPUs started to halt
 * @ms: pseudosleep.timer_defer_ms, not 0
 *
 * Return: the first multiple of @ms after @epoch that is later than @now.
 */
ktime_t pseudosleep_defer_deadline(ktime_t now, ktime_t epoch, unsigned int ms)
{
	s64 period = (s64)ms * NSEC_PER_MSEC;
	s64 since = ktime_to_ns(ktime_sub(now, epoch));

	if (since < 0)
		since = 0;
	return ktime_add_ns(epoch, (div64_s64(since, period) + 1) * period);
}

/**
 * pseudosleep_timers_nap_start - the CPUs start to halt
 *
 * Fixes this nap's deferral: timer_defer_ms, but at most the soft lockup
 * watchdog's sample period (2/5 of twice watchdog_thresh), so the lockup
 * detectors, soft and hard (buddy), still see every CPU's watchdog timer
 * run between two of their checks, and at most a third of the RCU CPU
 * stall timeout, so a grace period that waits for two deadlines ends
 * before the stall detector, which runs from the tick, sees it as a
 * stall.  No deadline passes the first alarm
 * timer, which ends the nap (pseudosleep_alarm_fired()).  The clocksource
 * watchdog pauses while timers are deferred: its check needs its 0.5 s
 * interval.
 */
void pseudosleep_timers_nap_start(void)
{
	unsigned int ms = READ_ONCE(timer_defer_ms);

#ifdef CONFIG_LOCKUP_DETECTOR
	if (READ_ONCE(watchdog_thresh) > 0)
		ms = min_t(unsigned int, ms, READ_ONCE(watchdog_thresh) * 2 * MSEC_PER_SEC / 5);
#endif
	ms = min(ms, jiffies_to_msecs(rcu_jiffies_till_stall_check()) / 3);
	/* A nohz_full CPU may keep the timekeeping tick of the others. */
	if (tick_nohz_full_enabled())
		ms = 0;
	defer_epoch = ktime_get();
	defer_alarm = alarmtimer_first_expiry();
	WRITE_ONCE(defer_period_ms, ms);
	if (ms)
		clocksource_watchdog_pause();
}

/**
 * pseudosleep_timers_defer - defer this CPU's timers before it halts
 *
 * Called with interrupts disabled from the nap's idle routine.  A tick
 * that the idle loop kept running is deferred too: it is kept mostly for
 * the RCU callbacks queued on this CPU (rcu_needs_cpu()), which then run
 * at the deadline instead of waking the CPU every jiffy until their grace
 * period ends.  An interrupt brings jiffies up to date on entry, as for a
 * stopped tick (tick_nohz_irq_enter()), and the deadline never passes
 * timekeeping_max_deferment().
 */
void pseudosleep_timers_defer(void)
{
	unsigned int ms = READ_ONCE(defer_period_ms);
	ktime_t deadline;

	if (!ms)
		return;
	/*
	 * Without NO_HZ (HZ_PERIODIC, nohz=off) no interrupt brings jiffies
	 * up to date and idle time is counted in ticks: such a tick runs.
	 */
	if (!tick_nohz_tick_stopped() && !tick_nohz_enabled)
		return;
	deadline = min(pseudosleep_defer_deadline(ktime_get(), defer_epoch, ms),
		       defer_alarm);
	hrtimer_idle_defer(deadline);
}

/**
 * pseudosleep_timers_restore - program this CPU's first timer again
 *
 * Called after every halt of a napping CPU, with interrupts on, so the CPU
 * never runs a task, nor idles after the nap, with its timers deferred:
 * they run now if they came due.  Costs one per-CPU load when nothing
 * was deferred.
 */
void pseudosleep_timers_restore(void)
{
	if (!hrtimer_idle_deferred())
		return;
	local_irq_disable();
	hrtimer_idle_defer(0);
	local_irq_enable();
}

/**
 * pseudosleep_timers_nap_end - the nap is over
 *
 * Stops deferring (a CPU still halting programs its first timer event
 * when the end of the nap wakes it) and restarts the clocksource
 * watchdog, whose first run takes new reference readings, as after a
 * resume.
 */
void pseudosleep_timers_nap_end(void)
{
	if (!defer_period_ms)
		return;
	WRITE_ONCE(defer_period_ms, 0);
	clocksource_watchdog_unpause();
}
