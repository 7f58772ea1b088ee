// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep: "echo pseudo > /sys/power/mem_sleep; echo mem >
 * /sys/power/state" naps the machine without firmware system sleep.
 *
 * enter_state() syncs and freezes tasks as for any suspend.  Then devices
 * suspend as usual except those kept awake (pseudosleep_keep.c), every
 * online CPU is kicked into the idle loop's default halt, bypassing the
 * cpuidle governor, and the suspending task waits until an armed wake IRQ
 * (pseudosleep_irq.c) ends the nap.  Interrupts that are not armed run
 * their handlers and the CPU halts again.  The CPUs halt from the idle
 * loop, with RCU told the CPU is idle, so long naps raise no RCU stall,
 * soft lockup or hung task reports; their timers wait for a common
 * deadline (pseudosleep_timers.c).  Unlike s2idle the timekeeping is not
 * suspended: handlers of the devices kept awake run during the nap and
 * may read the time.
 */

#define pr_fmt(fmt) "pseudosleep: " fmt

#include <linux/atomic.h>
#include <linux/console.h>
#include <linux/cpu.h>
#include <linux/cpuidle.h>
#include <linux/cpumask.h>
#include <linux/init.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/pm.h>
#include <linux/sched/idle.h>
#include <linux/smp.h>
#include <linux/suspend.h>
#include <linux/swait.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>
#include <trace/events/power.h>

#include "power.h"
#include "pseudosleep.h"

enum pseudosleep_phase pseudosleep_phase;
struct pseudosleep_times pseudosleep_times;

/* Halt loop bookkeeping: which nap a CPU last entered, wakeups counted. */
static unsigned int nap_gen;
static DEFINE_PER_CPU(unsigned int, cpu_nap_gen);
static atomic_t cpus_halted;
static atomic_long_t nap_wakeups;

static bool pseudosleep_phase_is_not(enum pseudosleep_phase phase)
{
	return READ_ONCE(pseudosleep_phase) != phase;
}

static u64 now(void)
{
	return ktime_get_mono_fast_ns();
}

/* First entry of this CPU into the halt loop of the current nap. */
void pseudosleep_cpu_enter(void)
{
	unsigned int gen = READ_ONCE(nap_gen);

	if (this_cpu_read(cpu_nap_gen) == gen)
		return;
	this_cpu_write(cpu_nap_gen, gen);
	if (atomic_inc_return(&cpus_halted) == num_online_cpus())
		WRITE_ONCE(pseudosleep_times.all_halted, now());
}

/**
 * pseudosleep_cpu_idle - the idle routine of every CPU during a nap
 *
 * Called by cpuidle_idle_call() with interrupts off, the tick stopped or
 * kept (for RCU callbacks queued here); returns with interrupts on.
 * Halts through default_idle_call(), so the platform's choice of halt
 * (x86_idle: HLT, or the AMD E400 and MWAIT variants), the
 * critical-timings and cpu_idle trace hooks and the RCU idle state all
 * stay the idle loop's own.  The idle loop calls it again
 * for as long as the nap lasts and no task is runnable, re-evaluating the
 * tick each time.  The CPU's timers are deferred while it halts
 * (pseudosleep_timers.c) and programmed again after each halt, so timers
 * that came due run when an interrupt wakes the CPU anyway.
 */
void pseudosleep_cpu_idle(void)
{
	pseudosleep_cpu_enter();
	pseudosleep_timers_defer();
	default_idle_call();
	pseudosleep_timers_restore();
	/* Still napping: an interrupt that is not armed woke us. */
	if (pseudosleep_cpu_napping())
		atomic_long_inc(&nap_wakeups);
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
 * during a nap instead of the default halt.
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
 * pseudosleep_cpu_deep_idle - should a napping CPU use the cpuidle governor
 *
 * Read by the idle loop only while a nap is in progress.  When true, the
 * CPU only counts its entry into the nap and then idles as usual.
 *
 * Return: the value of the pseudosleep.deep_idle parameter.
 */
bool pseudosleep_cpu_deep_idle(void)
{
	return READ_ONCE(deep_idle);
}

/**
 * pseudosleep_valid - can a pseudo nap be entered now
 *
 * Only the "freezer" pm_test level applies: the others test firmware and
 * CPU offlining, which a nap does not use.
 *
 * Return: 0 or -EAGAIN.
 */
int pseudosleep_valid(void)
{
#ifdef CONFIG_PM_DEBUG
	if (pm_test_level != TEST_NONE && pm_test_level != TEST_FREEZER) {
		pr_warn("only pm_test levels none and freezer apply to pseudo\n");
		return -EAGAIN;
	}
#endif
	return 0;
}

/**
 * pseudosleep_begin - a nap starts (enter_state(), before the sync)
 * @state: the state being entered; anything but pseudo is ignored
 *
 * From here on an armed IRQ (wake_on=task: its work for a user socket)
 * ends the nap, whatever phase it is in.
 */
void pseudosleep_begin(suspend_state_t state)
{
	if (state != PM_SUSPEND_PSEUDO)
		return;
	memset(&pseudosleep_times, 0, sizeof(pseudosleep_times));
	pseudosleep_times.begin = now();
	pseudosleep_wake_reset();
	atomic_set(&cpus_halted, 0);
	atomic_long_set(&nap_wakeups, 0);
	WRITE_ONCE(nap_gen, nap_gen + 1);
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_ENTERING);
	smp_mb();	/* phase before any check of the armed IRQs' record */
}

/* enter_state(): filesystems synced, tasks are about to freeze. */
void pseudosleep_synced(suspend_state_t state)
{
	if (state == PM_SUSPEND_PSEUDO)
		pseudosleep_times.synced = now();
}

/*
 * Halt every CPU until an armed IRQ.  The phase is published before the
 * last look at the record of armed IRQs, and the IRQ side records before it
 * looks at the phase, so either this sees the IRQ or the IRQ sees the nap.
 */
static int pseudosleep_halt(void)
{
	int error = 0;

	trace_suspend_resume(TPS("machine_suspend"), PM_SUSPEND_PSEUDO, true);
	cpus_read_lock();
	pseudosleep_times.kicked = now();
	pseudosleep_timers_nap_start();
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_NAPPING);
	smp_mb();	/* pairs with atomic_xchg() in pseudosleep_wake() */
	if (pseudosleep_woken() || pm_wakeup_pending()) {
		cmpxchg(&pseudosleep_phase, PSEUDOSLEEP_NAPPING,
			PSEUDOSLEEP_RESUMING);
		error = -EBUSY;
	} else {
		/* IPI every idle CPU so it leaves its HLT for the nap loop. */
		wake_up_all_idle_cpus();
		swait_event_idle_exclusive(pseudosleep_wait,
					   pseudosleep_phase_is_not(PSEUDOSLEEP_NAPPING));
	}
	pseudosleep_times.woken = now();
	/*
	 * The waking IRQ only woke this task; take the other CPUs out of
	 * their halt loop from here, as s2idle does, not from hard IRQ.  Also
	 * after -EBUSY: a CPU that went idle while the phase said napping
	 * may have halted with its timers deferred.
	 */
	wake_up_all_idle_cpus();
	pseudosleep_timers_nap_end();
	cpus_read_unlock();
	trace_suspend_resume(TPS("machine_suspend"), PM_SUSPEND_PSEUDO, false);
	return error;
}

/**
 * pseudosleep_devices_and_enter - suspend_devices_and_enter() for pseudo
 *
 * The same device phases as a suspend to idle, with no platform callbacks
 * and the kept devices skipped.
 *
 * Return: 0 after a nap ended by an armed IRQ or a system wakeup event,
 * or a negative error code (-EBUSY when a wakeup arrived before the CPUs
 * halted).
 */
int pseudosleep_devices_and_enter(void)
{
	bool consoles_up;
	int error;

	/* Only enter_state() starts a nap (not hibernation's suspend mode). */
	if (READ_ONCE(pseudosleep_phase) != PSEUDOSLEEP_ENTERING)
		return -EINVAL;
	WRITE_ONCE(pseudosleep_times.frozen, now());
	/*
	 * An armed IRQ (wake_on=task: its work) during the sync or the
	 * freeze: the freezer cleared the PM core's record of it
	 * (pm_wakeup_clear()), the nap's own is still there.  Give up before
	 * any device suspends.  Later ones, and system wakeup events from now
	 * on (pseudosleep_system_wakeup()), are seen by pm_wakeup_pending() in
	 * the device phases and pseudosleep_halt().
	 */
	if (pseudosleep_woken()) {
		pseudosleep_times.resumed = now();
		return -EBUSY;
	}
	/*
	 * To drivers a nap is a suspend to idle: no firmware is involved and
	 * memory, links and the platform stay powered.  Drivers that compare
	 * pm_suspend_target_state with PM_SUSPEND_TO_IDLE (virtio-mem, UFS,
	 * xHCI, amdgpu, i915...) must not take it for S3.
	 */
	pm_suspend_target_state = PM_SUSPEND_TO_IDLE;
	pm_set_suspend_no_platform();
	error = pseudosleep_keep_mark();
	if (error)
		goto out;
	pseudosleep_sci_wake_arm();

	/*
	 * suspend_console() stops printing because console drivers must not
	 * touch suspended hardware; it costs a flush and an SRCU grace period
	 * each way.  A nap keeps the devices of the consoles awake, so they
	 * keep printing, unless some console's device could not be found.
	 */
	consoles_up = pseudosleep_keep_consoles();
	if (!consoles_up)
		suspend_console();
	error = dpm_suspend_start(PMSG_SUSPEND);
	if (error) {
		pm_pr_dbg("some devices failed to suspend, or early wake event\n");
		goto resume_devices;
	}
	error = dpm_suspend_end(PMSG_SUSPEND);
	if (error)
		goto resume_devices;
	pseudosleep_times.suspended = now();

	error = pseudosleep_halt();

	dpm_resume_start(PMSG_RESUME);
resume_devices:
	if (!pseudosleep_times.woken)
		pseudosleep_times.woken = now();
	dpm_resume_end(PMSG_RESUME);
	if (!consoles_up) {
		trace_suspend_resume(TPS("resume_console"), PM_SUSPEND_PSEUDO,
				     true);
		resume_console();
		trace_suspend_resume(TPS("resume_console"), PM_SUSPEND_PSEUDO,
				     false);
	}
	pseudosleep_sci_wake_disarm();
	pseudosleep_keep_unmark();
out:
	pseudosleep_times.resumed = now();
	pm_suspend_target_state = PM_SUSPEND_ON;
	return error;
}

/**
 * pseudosleep_end - the nap is over (enter_state(), tasks thawed)
 * @state: the state that was entered; anything but pseudo is ignored
 * @error: what enter_state() returns
 */
void pseudosleep_end(suspend_state_t state, int error)
{
	if (state != PM_SUSPEND_PSEUDO)
		return;
	pseudosleep_times.end = now();
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_IDLE);
	if (error)
		pseudosleep_stats_abort();
	else if (pseudosleep_times.kicked)	/* not a pm_test=freezer run */
		pseudosleep_stats_nap(atomic_long_read(&nap_wakeups));
}

static int __init pseudosleep_init(void)
{
	int ret;

	ret = pseudosleep_irq_init();
	if (!ret)
		ret = pseudosleep_stats_init();
	if (ret)
		pr_err("sysfs setup failed: %d\n", ret);
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
