// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep: "echo pseudo > /sys/power/mem_sleep; echo mem >
 * /sys/power/state" naps the machine: a suspend to idle with the
 * pseudo-sleep flag set (pm_suspend_pseudo()).
 *
 * enter_state() syncs and freezes tasks, suspend_devices_and_enter()
 * suspends the devices and s2idle_loop() sends every CPU into idle, as for
 * any suspend to idle.  The flag changes three things.  The devices marked
 * power/nosleep, with what they need, keep running (pseudosleep_keep.c).
 * s2idle_enter() does not freeze the tick and timekeeping: the CPUs halt in
 * the default idle routine (or use the cpuidle states with
 * pseudosleep.deep_idle) and their timers fire on time, because the kept
 * devices' drivers need them.  Besides every wakeup that ends a suspend to
 * idle, the IRQs written to /sys/power/wake_irq end the nap
 * (pseudosleep_irq.c); the kept devices' other interrupts are handled and
 * the CPUs halt again.
 *
 * enter_state() tells us where a nap begins and ends.  The timestamps of
 * its phases come from the PM core's own suspend_resume trace events,
 * which also move the nap's phase (pseudosleep_phase) from entering to
 * napping to resuming.
 */

#define pr_fmt(fmt) "pseudosleep: " fmt

#include <linux/cpumask.h>
#include <linux/init.h>
#include <linux/interrupt.h>
#include <linux/kernel_stat.h>
#include <linux/moduleparam.h>
#include <linux/pm.h>
#include <linux/string.h>
#include <linux/suspend.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>
#include <trace/events/power.h>

#include "power.h"
#include "pseudosleep.h"

enum pseudosleep_phase pseudosleep_phase;
struct pseudosleep_times pseudosleep_times;

/* Interrupts served by all CPUs when the CPUs were sent into idle. */
static u64 irqs_at_kick;
static u64 nap_irqs;

static u64 now(void)
{
	return ktime_get_mono_fast_ns();
}

/* Interrupts of every kind served so far, device IRQs and the arch's own. */
static u64 irqs_served(void)
{
	u64 sum = 0;
	int cpu;

	for_each_online_cpu(cpu)
		sum += kstat_cpu_irqs_sum(cpu) + arch_irq_stat_cpu(cpu);
	return sum;
}

/*
 * Probe on the suspend_resume trace event: the phases of a nap as the PM
 * core reports them.  Outside a nap it returns at the first test.  Runs
 * with preemption off; stores only.
 */
static void pseudosleep_trace_phase(void *data, const char *action, int val,
				    bool start)
{
	struct pseudosleep_times *t = &pseudosleep_times;
	u64 ts;

	if (!pseudosleep_in_progress())
		return;
	ts = now();
	if (!strcmp(action, "machine_suspend")) {
		/* s2idle_enter(), once or more (spurious SCI wakeups) */
		if (start) {
			if (!t->kicked) {
				t->kicked = ts;
				irqs_at_kick = irqs_served();
			}
			WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_NAPPING);
		} else {
			/*
			 * Still napping: s2idle_loop() enters idle again
			 * after a wakeup that is not one (a spurious SCI), and
			 * work that comes between two rounds must end the nap.
			 */
			t->woken = ts;
			nap_irqs = irqs_served() - irqs_at_kick;
		}
	} else if (start) {
		/*
		 * The devices resume, after a nap or an entry that failed:
		 * events from then on belong to the way back, not to the
		 * cause.
		 */
		if (READ_ONCE(pseudosleep_phase) != PSEUDOSLEEP_RESUMING &&
		    (!strcmp(action, "dpm_resume_noirq") ||
		     !strcmp(action, "dpm_resume_early") ||
		     !strcmp(action, "dpm_resume") ||
		     !strcmp(action, "thaw_processes")))
			WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_RESUMING);
		return;
	} else if (!strcmp(action, "sync_filesystems")) {
		t->synced = ts;
	} else if (!strcmp(action, "freeze_processes")) {
		t->frozen = ts;
		if (!t->synced)		/* sync_on_suspend=0: no sync */
			t->synced = t->begin;
	} else if (!strcmp(action, "dpm_suspend_noirq")) {
		t->suspended = ts;
	} else if (!strcmp(action, "dpm_complete")) {
		t->resumed = ts;
	}
}

/* Boolean parameters parsed as strictly as power/nosleep. */
static int strict_bool_set(const char *val, const struct kernel_param *kp)
{
	bool v;
	int ret;

	ret = pseudosleep_parse_bool(val, &v);
	if (ret)
		return ret;
	WRITE_ONCE(*(bool *)kp->arg, v);
	return 0;
}

static int strict_bool_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(*(bool *)kp->arg));
}

static const struct kernel_param_ops strict_bool_ops = {
	.set = strict_bool_set,
	.get = strict_bool_get,
};

/*
 * pseudosleep.deep_idle: let the cpuidle governor pick the CPUs' idle states
 * during a nap instead of the default halt.  Read at each s2idle_enter().
 */
static bool deep_idle;
module_param_cb(deep_idle, &strict_bool_ops, &deep_idle, 0644);
MODULE_PARM_DESC(deep_idle,
		 "1: napping CPUs use the cpuidle governor's states, 0: the default halt (default)");

/*
 * pseudosleep.report_buttons: a server's nap is invisible to its users, so
 * the buttons that end one act as they would on an awake machine.
 */
static bool report_buttons = true;
module_param_cb(report_buttons, &strict_bool_ops, &report_buttons, 0644);
MODULE_PARM_DESC(report_buttons,
		 "1: a button press that ends a nap is reported as a press (default), 0: as the wake press of a suspend");

/*
 * pseudosleep.skip_no_pm_work: devices with no PM callback sit out a nap's
 * device phases (pseudosleep_keep.c).  0 walks every device through them,
 * as a suspend does: for comparison, or should a driver turn out to need it.
 */
static bool skip_no_pm_work = true;
module_param_cb(skip_no_pm_work, &strict_bool_ops, &skip_no_pm_work, 0644);
MODULE_PARM_DESC(skip_no_pm_work,
		 "1: devices with no PM callback sit out a nap's device phases (default), 0: every device takes part");

/**
 * pseudosleep_skip_no_pm_work - may a nap leave out devices with no PM work
 *
 * Read once per nap, when the keep set is chosen.
 *
 * Return: the value of the pseudosleep.skip_no_pm_work parameter.
 */
bool pseudosleep_skip_no_pm_work(void)
{
	return READ_ONCE(skip_no_pm_work);
}

/**
 * pseudosleep_hide_nap - should a button driver keep a nap from user space
 *
 * A suspend marks the ACPI buttons suspended, so that the press that wakes
 * the machine is not reported, and reports KEY_WAKEUP on resume.  During a
 * nap with pseudosleep.report_buttons set, the button driver skips both:
 * a press that ends the nap is a press, and a nap reports nothing.  A
 * laptop that uses pseudo as its suspend clears the parameter.
 *
 * Context: the device suspend and resume callbacks.
 * Return: true during a nap with pseudosleep.report_buttons set.
 */
bool pseudosleep_hide_nap(void)
{
	return pseudosleep_in_progress() && READ_ONCE(report_buttons);
}
EXPORT_SYMBOL_GPL(pseudosleep_hide_nap);

/**
 * pseudosleep_s2idle_state - how the CPUs idle during a nap
 *
 * Called by s2idle_enter() for a nap instead of moving to
 * S2IDLE_STATE_ENTER, whose idle states freeze the tick.
 *
 * Return: S2IDLE_STATE_NAP_HALT, every CPU halts in the default idle
 * routine (the seed's design), or S2IDLE_STATE_NAP with
 * pseudosleep.deep_idle, the cpuidle governor picks the states as usual.
 */
enum s2idle_states pseudosleep_s2idle_state(void)
{
	return READ_ONCE(deep_idle) ? S2IDLE_STATE_NAP : S2IDLE_STATE_NAP_HALT;
}

/**
 * pseudosleep_begin - a nap starts (enter_state(), before the sync)
 *
 * From here on an armed IRQ or a wakeup source's activation ends the nap,
 * whatever phase it is in.
 */
void pseudosleep_begin(void)
{
	memset(&pseudosleep_times, 0, sizeof(pseudosleep_times));
	pseudosleep_times.begin = now();
	nap_irqs = 0;
	pseudosleep_wake_reset();
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_ENTERING);
	smp_mb();	/* phase before any check of the armed IRQs' record */
	/* Without the wakeup_count handshake the lines are not armed yet. */
	irq_wake_handled_arm();
	pseudosleep_check_arm_counts();
}

/**
 * pseudosleep_keep_devices - keep the nosleep devices running for a nap
 * @console_kept: set when every console's device is kept: the console
 *	then need not be suspended
 *
 * Called by suspend_devices_and_enter() for a nap, before the devices
 * suspend.  An armed IRQ or a marked wakeup source's activation during
 * the sync or the freeze ends the attempt here: the freezer cleared the PM
 * core's record of it (pm_wakeup_clear()), the nap's own is still there.
 * So does a marked source that is still active from before the nap.
 * Later ones are seen by pm_wakeup_pending() in the device phases and in
 * s2idle_loop().
 *
 * Return: 0, -EBUSY after an armed IRQ or with work pending, or the error
 * of choosing the devices to keep (-EINVAL for an armed IRQ without a
 * device).
 */
int pseudosleep_keep_devices(bool *console_kept)
{
	int error;

	if (pseudosleep_woken() || pseudosleep_ws_pending())
		return -EBUSY;
	error = pseudosleep_keep_mark();
	if (error)
		return error;
	*console_kept = pseudosleep_keep_consoles();
	return 0;
}

/**
 * pseudosleep_release_devices - the nap's devices have resumed
 *
 * Called by suspend_devices_and_enter() after dpm_resume_end(), when
 * pseudosleep_keep_devices() succeeded.
 */
void pseudosleep_release_devices(void)
{
	pseudosleep_keep_unmark();
}

/**
 * pseudosleep_end - the nap is over (enter_state(), tasks thawed)
 * @error: what enter_state() returns
 *
 * A suspend that returns 0 counts as a nap, as in suspend_stats, also when
 * a wakeup came after the devices suspended and before the CPUs were sent
 * into idle (s2idle_loop() returns 0 then, and the nap's length is 0); one
 * that fails counts as aborted, and a pm_test run as neither.
 */
void pseudosleep_end(int error)
{
	pseudosleep_times.end = now();
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_IDLE);
	if (error) {
		pseudosleep_stats_abort();
		return;
	}
	/* A pm_test run stops before the CPUs idle: no nap, no abort. */
	if (pm_test_level != TEST_NONE)
		return;
	if (!pseudosleep_times.irq)	/* ended by a wakeup not of ours */
		pseudosleep_times.irq = pseudosleep_times.woken;
	/* All but the interrupt that ended the nap. */
	pseudosleep_stats_nap(nap_irqs ? nap_irqs - 1 : 0);
}

static int __init pseudosleep_init(void)
{
	int ret;

	ret = register_trace_suspend_resume(pseudosleep_trace_phase, NULL);
	if (!ret)
		ret = pseudosleep_irq_init();
	if (!ret)
		ret = pseudosleep_stats_init();
	if (ret)
		pr_err("setup failed: %d\n", ret);
	return ret;
}
late_initcall(pseudosleep_init);

/* The callers' pr_fmt() is already applied to the format. */
#undef pr_fmt
#define pr_fmt(fmt) fmt

/**
 * pm_sleep_printk - print a message of every system sleep transition
 * @level: the level outside a nap, LOGLEVEL_INFO or LOGLEVEL_NOTICE
 * @fmt: printf format, with the caller's pr_fmt() applied
 *
 * A server may nap many times a second: during a nap the message is a
 * debug message (pm_pr_dbg(), shown with /sys/power/pm_debug_messages).
 * Use it through pm_sleep_pr_info() and pm_sleep_pr_notice().
 */
void pm_sleep_printk(int level, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	if (pseudosleep_in_progress())
		pm_pr_dbg("%pV", &vaf);
	else if (level == LOGLEVEL_NOTICE)
		pr_notice("%pV", &vaf);
	else
		pr_info("%pV", &vaf);
	va_end(args);
}
