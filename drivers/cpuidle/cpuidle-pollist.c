// SPDX-License-Identifier: GPL-2.0
/*
 * pollist: the polling list polled from the platform's polling state: the
 * poller's adaptive window and the cpuidle core hooks that run it.
 *
 * Device drivers register poll requests on the global polling list
 * (cpuidle-pollist-client.c), which has one sub-list per CPU
 * (cpuidle-pollist-list.c).  An idle CPU that wins the poller ownership
 * walks all the sub-lists until an entry has work, a task becomes runnable
 * or its polling window expires; the other idle CPUs enter the state their
 * governor chose at once, since one poller is enough.  The poller only
 * looks: work it finds runs after the CPU has left the polling state, from
 * an interrupt of its own, so a wakeup is never left waiting behind it.
 * The window adapts per CPU like the haltpoll governor's.
 *
 * The list is polled from the polling state 0 of the platform's own
 * cpuidle driver (intel_idle, acpi_idle, haltpoll), so that driver's
 * deeper states stay reachable; cpuidle_pollist.enable=1 turns it on
 * (Documentation/pollist.rst).
 */

#define pr_fmt(fmt) "pollist: " fmt

#include <linux/cpuidle.h>
#include <linux/cpuidle_pollist.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/sysfs.h>

#include "cpuidle.h"
#include "cpuidle-pollist.h"

#define CREATE_TRACE_POINTS
#include "pollist_trace.h"

/* ------------------------------------------------------------------------
 * The adaptive window
 */

/**
 * pollist_adjust - the next polling window of a CPU
 * @t: the tunables
 * @cur_ns: the current window, 0 when the CPU does not poll
 * @event_ns: when the event that ended the idle period came, from the
 *	start of the window: a hit, or the window plus the idle period after it
 *
 * An event in the second half of the window or after it, but within
 * @t->max_ns, grows the window: a slightly shorter one would have missed
 * it.  An event later than @t->max_ns shrinks it: polling was wasted.  An
 * early hit keeps it.
 *
 * Return: the new window in ns.
 */
u64 pollist_adjust(const struct pollist_tunables *t, u64 cur_ns, u64 event_ns)
{
	u64 val;

	if (event_ns <= cur_ns / 2)
		return cur_ns;

	if (event_ns <= t->max_ns) {
		val = cur_ns * t->grow;
		val = max(val, t->grow_start_ns);
		return min(val, t->max_ns);
	}

	if (!t->shrink)
		return 0;
	val = div_u64(cur_ns, t->shrink);
	return val < t->grow_start_ns ? 0 : val;
}

/* ------------------------------------------------------------------------
 * Parameters: /sys/module/cpuidle_pollist/parameters/
 */

static bool pollist_enable __ro_after_init;
module_param_named(enable, pollist_enable, bool, 0444);
MODULE_PARM_DESC(enable, "Poll the list from the cpuidle driver's polling state");

/* An unsigned int parameter with a range, checked when it is written. */
struct pollist_param {
	unsigned int val;
	unsigned int min;
	unsigned int max;
};

static int pollist_param_set(const char *buf, const struct kernel_param *kp)
{
	struct pollist_param *p = kp->arg;
	unsigned int val;
	int ret;

	ret = kstrtouint(buf, 0, &val);
	if (ret)
		return ret;
	if (val < p->min || val > p->max)
		return -ERANGE;
	WRITE_ONCE(p->val, val);
	return 0;
}

static int pollist_param_get(char *buf, const struct kernel_param *kp)
{
	const struct pollist_param *p = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(p->val));
}

static const struct kernel_param_ops pollist_param_ops = {
	.set = pollist_param_set,
	.get = pollist_param_get,
};

#define POLLIST_MAX_WINDOW_NS	(10 * NSEC_PER_MSEC)

static struct pollist_param poll_limit_ns = {
	.val = 200 * NSEC_PER_USEC, .min = 0, .max = POLLIST_MAX_WINDOW_NS,
};
module_param_cb(poll_limit_ns, &pollist_param_ops, &poll_limit_ns, 0644);
MODULE_PARM_DESC(poll_limit_ns, "Longest polling window in ns, 0 to never poll (0-10000000)");

static struct pollist_param poll_grow_start_ns = {
	.val = 50 * NSEC_PER_USEC, .min = 1000, .max = POLLIST_MAX_WINDOW_NS,
};
module_param_cb(poll_grow_start_ns, &pollist_param_ops, &poll_grow_start_ns, 0644);
MODULE_PARM_DESC(poll_grow_start_ns, "First window when growing from zero, in ns (1000-10000000)");

static struct pollist_param poll_grow = {
	.val = 2, .min = 1, .max = 16,
};
module_param_cb(poll_grow, &pollist_param_ops, &poll_grow, 0644);
MODULE_PARM_DESC(poll_grow, "Window multiplier on a late event (1-16)");

static struct pollist_param poll_shrink = {
	.val = 2, .min = 0, .max = 16,
};
module_param_cb(poll_shrink, &pollist_param_ops, &poll_shrink, 0644);
MODULE_PARM_DESC(poll_shrink, "Window divisor after a long idle period, 0 to stop polling at once (0-16)");

static void pollist_get_tunables(struct pollist_tunables *t)
{
	t->max_ns = READ_ONCE(poll_limit_ns.val);
	t->grow_start_ns = READ_ONCE(poll_grow_start_ns.val);
	t->grow = READ_ONCE(poll_grow.val);
	t->shrink = READ_ONCE(poll_shrink.val);
}

/* ------------------------------------------------------------------------
 * The window and the statistics of each CPU
 */

/**
 * enum pollist_pick - who chose the polling state, for the cpuidle hooks
 * @POLLIST_PICK_NONE: the select hook did not run in this idle period
 *	(forced idle, the suspend-to-idle fallback) or it has ended
 * @POLLIST_PICK_GOVERNOR: the hook ran and left the governor's choice
 * @POLLIST_PICK_HOOK: the hook turned the governor's choice into polling
 */
enum pollist_pick {
	POLLIST_PICK_NONE,
	POLLIST_PICK_GOVERNOR,
	POLLIST_PICK_HOOK,
};

/**
 * struct pollist_cpu - per-CPU window state and statistics
 * @limit_ns: current polling window
 * @session_ns: length of the last session
 * @outcome: how the last session the select hook chose ended,
 *	%POLLIST_NONE after a deeper state
 * @pick: who chose the polling state in this idle period, as the platform
 *	select hook saw it
 * @polls: sessions that owned the list
 * @hits: entries found with work
 * @poll_ns: time spent in sessions
 * @fallbacks: sessions whose window expired, followed by a deeper state
 * @resched: sessions ended by a runnable task
 * @busy: idle periods that did not poll the list because another CPU
 *	owned it
 * @deep: idle periods in a state deeper than polling
 *
 * Written by its CPU only; debugfs reads it from any CPU.
 */
struct pollist_cpu {
	u64 limit_ns;
	u64 session_ns;
	enum pollist_outcome outcome;
	enum pollist_pick pick;
	u64 polls;
	u64 hits;
	u64 poll_ns;
	u64 fallbacks;
	u64 resched;
	u64 busy;
	u64 deep;
};

static DEFINE_PER_CPU(struct pollist_cpu, pollist_cpus);

/* Counters have one writer, their CPU, and are read from any CPU. */
static void pollist_inc(u64 *counter)
{
	WRITE_ONCE(*counter, *counter + 1);
}

static void pollist_add_to(u64 *counter, u64 val)
{
	WRITE_ONCE(*counter, *counter + val);
}

/* The window of this CPU, capped by the current poll_limit_ns. */
static u64 pollist_window(const struct pollist_cpu *pc)
{
	return min_t(u64, pc->limit_ns, READ_ONCE(poll_limit_ns.val));
}

/*
 * The window learns from an event @event_ns after the start of a window of
 * @old_ns, the effective one (capped by poll_limit_ns): a change of the cap
 * alone is not traced.
 */
static void pollist_learn(struct pollist_cpu *pc, u64 old_ns, u64 event_ns)
{
	struct pollist_tunables t;
	u64 new_ns;

	pollist_get_tunables(&t);
	new_ns = pollist_adjust(&t, old_ns, event_ns);
	if (new_ns != old_ns)
		trace_pollist_window(old_ns, new_ns, event_ns);
	pc->limit_ns = new_ns;
}

/*
 * Counts a session.  Only one the select hook chose, for this CPU's window
 * @window_ns, teaches that window: one the governor chose ran for the
 * governor's own limit.
 */
static void pollist_account(struct pollist_cpu *pc, u64 window_ns,
			    const struct pollist_session *s, bool chosen)
{
	trace_pollist_session(s);
	if (s->outcome == POLLIST_BUSY) {
		pollist_inc(&pc->busy);
	} else {
		pollist_inc(&pc->polls);
		pollist_add_to(&pc->hits, s->hits);
		pollist_add_to(&pc->poll_ns, s->elapsed_ns);
		if (s->outcome == POLLIST_TIMEOUT)
			pollist_inc(&pc->fallbacks);
		else if (s->outcome == POLLIST_RESCHED)
			pollist_inc(&pc->resched);
	}
	if (!chosen)
		return;

	pc->outcome = s->outcome;
	pc->session_ns = s->elapsed_ns;
	if (s->outcome == POLLIST_WORK)
		pollist_learn(pc, window_ns, s->last_hit_ns);
}

/* Whether this CPU polls the list in its next idle period. */
static bool pollist_may_poll(struct pollist_cpu *pc)
{
	/* The window of the last session expired, or another CPU polled. */
	if (pc->outcome == POLLIST_TIMEOUT || pc->outcome == POLLIST_BUSY)
		return false;

	if (!pollist_window(pc) || !atomic_read(&pollist_global.nr_entries))
		return false;

	/* One poller is enough. */
	if (atomic_read(&pollist_global.poller) != POLLIST_NO_POLLER) {
		pollist_inc(&pc->busy);
		return false;
	}
	return true;
}

/*
 * After an idle period in a state deeper than polling: a window that
 * expired before it, or a window of zero, learns when the event came.
 */
static void pollist_after_deep(struct pollist_cpu *pc,
			       struct cpuidle_device *dev)
{
	u64 event_ns;

	pollist_inc(&pc->deep);
	if (pc->outcome == POLLIST_TIMEOUT)
		event_ns = pc->session_ns + dev->last_residency_ns;
	else if (!pc->limit_ns)
		event_ns = dev->last_residency_ns;
	else
		event_ns = 0;
	pc->outcome = POLLIST_NONE;
	if (event_ns)
		pollist_learn(pc, pollist_window(pc), event_ns);
}

/* ------------------------------------------------------------------------
 * Polling from the platform driver's polling state
 *
 * The platform driver and the governor the user chose stay.  While the
 * list has entries, the cpuidle core calls three hooks: after the
 * governor's select, from the polling state's poll_idle() before it
 * spins, and after the governor's reflect.  A CPU that may own the list
 * polls it instead of entering the state the governor chose, for at most
 * its window; when the window expires, the next idle period is the
 * governor's own choice, so the deep states are reached after at most one
 * window.
 */

DEFINE_STATIC_KEY_FALSE(pollist_hooks_key);

/* Serializes turning the key on and off with the count of entries. */
static DEFINE_MUTEX(pollist_hooks_lock);

/**
 * pollist_hooks_update - turn the cpuidle hooks on while entries exist
 *
 * Called after each registration and unregistration of an entry on the
 * global list (entries exist only with cpuidle_pollist.enable=1).
 *
 * Context: process context, sleeps; takes cpus_read_lock(), so it must
 * not be called from a CPU hotplug callback or with that lock held.
 */
void pollist_hooks_update(void)
{
	mutex_lock(&pollist_hooks_lock);
	if (atomic_read(&pollist_global.nr_entries))
		static_branch_enable(&pollist_hooks_key);
	else
		static_branch_disable(&pollist_hooks_key);
	mutex_unlock(&pollist_hooks_lock);
}

/**
 * pollist_polled - whether the cpuidle driver can poll the global list
 *
 * The cpuidle driver is looked up each time: it may register after this
 * code's initcall (a module) or change.  The hooks check the polling
 * state in every idle period anyway.  pollist_active() adds that the list
 * was set up (cpuidle_pollist.enable=1).
 *
 * Return: true while the current cpuidle driver has a polling state 0
 * and a deeper one.
 */
bool pollist_polled(void)
{
	struct cpuidle_driver *drv;
	bool polled;

	spin_lock(&cpuidle_driver_lock);
	drv = cpuidle_get_driver();
	polled = drv && drv->state_count > 1 &&
		 (drv->states[0].flags & CPUIDLE_FLAG_POLLING);
	spin_unlock(&cpuidle_driver_lock);
	return polled;
}

/**
 * pollist_idle_select - poll the list instead of the governor's state
 * @drv: the platform driver
 * @dev: this CPU's cpuidle device
 * @index: the state the governor chose
 * @stop_tick: the governor's wish to stop the tick, cleared when polling
 *
 * Context: the idle loop, interrupts disabled.
 * Return: 0, the polling state, when this CPU polls the list next, or
 * @index.
 */
int pollist_idle_select(struct cpuidle_driver *drv,
			struct cpuidle_device *dev, int index,
			bool *stop_tick)
{
	struct pollist_cpu *pc = this_cpu_ptr(&pollist_cpus);

	pc->pick = POLLIST_PICK_GOVERNOR;
	if (!index || !(drv->states[0].flags & CPUIDLE_FLAG_POLLING) ||
	    dev->states_usage[0].disable || !pollist_may_poll(pc))
		return index;

	pc->pick = POLLIST_PICK_HOOK;
	*stop_tick = false;
	return 0;
}

/**
 * pollist_idle_enter - walk the list from the polling state
 * @dev: this CPU's cpuidle device
 * @drv: the platform driver
 * @index: the polling state
 *
 * Called by poll_idle() with RCU watching, since the entries' poll()
 * functions read RCU-protected driver state.  The list is walked only in
 * an idle period whose state the select hook saw (not for forced idle or
 * the suspend-to-idle fallback), for this CPU's window when the hook
 * chose polling, and for poll_idle()'s limit when the governor did.
 *
 * Context: the idle loop, interrupts disabled on entry and on return.
 * Return: @index after a session; -EBUSY when the hook chose polling but
 * another CPU polls the list, so that the governor's state comes next;
 * -ENOENT when the list was not walked: poll_idle() then spins.
 */
int pollist_idle_enter(struct cpuidle_device *dev,
		       struct cpuidle_driver *drv, int index)
{
	struct pollist_cpu *pc = this_cpu_ptr(&pollist_cpus);
	bool chosen = pc->pick == POLLIST_PICK_HOOK;
	bool selected = pc->pick != POLLIST_PICK_NONE;
	u64 window_ns = pollist_window(pc);
	struct pollist_session s;
	u64 limit_ns;

	pc->pick = POLLIST_PICK_NONE;
	if (!selected || (!chosen && !READ_ONCE(poll_limit_ns.val)))
		return -ENOENT;

	limit_ns = chosen ? window_ns : cpuidle_poll_time(drv, dev);
	local_irq_enable();
	pollist_poll_idle(&pollist_global, dev->cpu, limit_ns, &s);
	pollist_account(pc, window_ns, &s, chosen);
	if (s.outcome == POLLIST_BUSY)
		return chosen ? -EBUSY : -ENOENT;
	if (s.outcome == POLLIST_TIMEOUT)
		dev->poll_time_limit = true;
	return index;
}

/**
 * pollist_idle_reflect - learn from an idle period in a deeper state
 * @dev: this CPU's cpuidle device
 * @index: the state entered, negative when none was; the hooks only
 *	ever turn to state 0
 *
 * Context: the idle loop, interrupts enabled.
 */
void pollist_idle_reflect(struct cpuidle_device *dev, int index)
{
	struct pollist_cpu *pc = this_cpu_ptr(&pollist_cpus);

	pc->pick = POLLIST_PICK_NONE;
	if (index > 0)
		pollist_after_deep(pc, dev);
}

/* ------------------------------------------------------------------------
 * Statistics: /sys/kernel/debug/pollist/
 */

static int pollist_stats_show(struct seq_file *m, void *v)
{
	int cpu;

	seq_puts(m, "cpu polls hits poll_ns fallbacks resched busy deep limit_ns\n");
	for_each_possible_cpu(cpu) {
		struct pollist_cpu *pc = per_cpu_ptr(&pollist_cpus, cpu);

		seq_printf(m, "%d %llu %llu %llu %llu %llu %llu %llu %llu\n", cpu,
			   READ_ONCE(pc->polls), READ_ONCE(pc->hits),
			   READ_ONCE(pc->poll_ns), READ_ONCE(pc->fallbacks),
			   READ_ONCE(pc->resched), READ_ONCE(pc->busy),
			   READ_ONCE(pc->deep), READ_ONCE(pc->limit_ns));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pollist_stats);

static void __init pollist_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("pollist", NULL);

	debugfs_create_file("stats", 0444, dir, NULL, &pollist_stats_fops);
	pollist_clients_debugfs(dir);
}

/* ------------------------------------------------------------------------
 * Boot
 */

/*
 * The list is set up whether or not a cpuidle driver registered yet:
 * entries register at run time (napi_idle_poll) and only while the
 * current driver has a polling state (pollist_polled()).
 */
static int __init pollist_init(void)
{
	u64 start_ns = min(READ_ONCE(poll_grow_start_ns.val),
			   READ_ONCE(poll_limit_ns.val));
	int cpu, ret;

	if (!pollist_enable)
		return 0;

	ret = pollist_init_list(&pollist_global, nr_cpu_ids);
	if (ret)
		return ret;

	for_each_possible_cpu(cpu)
		per_cpu_ptr(&pollist_cpus, cpu)->limit_ns = start_ns;
	pollist_debugfs_init();
	pollist_clients_open();
	pr_info("polling list with %u sub-lists, polled from the cpuidle driver's polling state\n",
		pollist_global.nr_subs);
	return 0;
}
device_initcall(pollist_init);
