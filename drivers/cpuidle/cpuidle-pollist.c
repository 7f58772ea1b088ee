// SPDX-License-Identifier: GPL-2.0
/*
 * pollist: a cpuidle driver whose polling state walks a polling list.
 *
 * Device drivers register poll requests (a cheap read-only check and a
 * callback to run when the check finds work).  The list is split into one
 * sub-list per CPU, each with its own lock, and registrations are spread
 * over the sub-lists.  An idle CPU that wins the poller ownership walks all
 * the sub-lists until an entry has work, a task becomes runnable or its
 * polling window expires; the other idle CPUs halt at once, since one
 * poller is enough.  The poller only looks: work it finds runs after the
 * CPU has left the polling state, from an interrupt of its own, so a
 * wakeup is never left waiting behind it.  The window adapts per CPU like
 * the haltpoll governor's.
 *
 * Selected at boot with cpuidle_pollist.enable=1; see
 * Documentation/pollist.rst.
 */

#define pr_fmt(fmt) "pollist: " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpuidle.h>
#include <linux/cpuidle_pollist.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/idle.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include <asm/processor.h>

#include "cpuidle-pollist.h"

/* ------------------------------------------------------------------------
 * The polling list
 */

/*
 * The hand-over of a hit, in hard interrupt context on the CPU that polled,
 * right after it left the polling state: complete() does what the device's
 * interrupt handler would, and a softirq it raises runs on this interrupt's
 * exit.  The entry stays valid: unregistration waits for this handler.
 */
static void pollist_kick_fn(struct irq_work *work)
{
	struct pollist_kick *kick = container_of(work, struct pollist_kick, work);
	struct pollist_entry *entry = kick->entry;

	kick->entry = NULL;
	if (!entry)
		return;
	entry->complete(entry);
	WRITE_ONCE(entry->hits, entry->hits + 1);
}

/* Wait for the hand-overs queued so far to run. */
static void pollist_flush_kicks(struct pollist *pl)
{
	int cpu;

	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu_ptr(pl->kicks, cpu)->work);
}

/**
 * pollist_init_list - set up an empty polling list
 * @pl: the list
 * @nr_subs: number of sub-lists, at least 1
 *
 * Return: 0, -EINVAL for no sub-list or -ENOMEM.
 */
int pollist_init_list(struct pollist *pl, unsigned int nr_subs)
{
	unsigned int i;
	int cpu, ret;

	if (!nr_subs)
		return -EINVAL;
	pl->subs = kcalloc(nr_subs, sizeof(*pl->subs), GFP_KERNEL);
	if (!pl->subs)
		return -ENOMEM;
	pl->kicks = alloc_percpu(struct pollist_kick);
	if (!pl->kicks) {
		ret = -ENOMEM;
		goto err_subs;
	}
	ret = init_srcu_struct(&pl->srcu);
	if (ret)
		goto err_kicks;
	for_each_possible_cpu(cpu)
		per_cpu_ptr(pl->kicks, cpu)->work =
			IRQ_WORK_INIT_HARD(pollist_kick_fn);
	for (i = 0; i < nr_subs; i++) {
		spin_lock_init(&pl->subs[i].lock);
		INIT_LIST_HEAD(&pl->subs[i].head);
	}
	pl->nr_subs = nr_subs;
	atomic_set(&pl->nr_entries, 0);
	atomic_set(&pl->rr, 0);
	atomic_set(&pl->poller, POLLIST_NO_POLLER);
	return 0;

err_kicks:
	free_percpu(pl->kicks);
	pl->kicks = NULL;
err_subs:
	kfree(pl->subs);
	pl->subs = NULL;
	return ret;
}

/**
 * pollist_free_list - free an empty polling list
 * @pl: the list, set up by pollist_init_list()
 */
void pollist_free_list(struct pollist *pl)
{
	WARN_ON(atomic_read(&pl->nr_entries));
	pollist_flush_kicks(pl);
	cleanup_srcu_struct(&pl->srcu);
	free_percpu(pl->kicks);
	pl->kicks = NULL;
	kfree(pl->subs);
	pl->subs = NULL;
	pl->nr_subs = 0;
}

/**
 * pollist_pick_sub - choose the sub-list for a new entry
 * @pl: the list
 *
 * The least loaded sub-list; among equally loaded ones the search starts
 * at a round-robin cursor, so successive registrations go to successive
 * sub-lists.  The counts are read without locks: concurrent registrations
 * may pick the same sub-list, which only unbalances by one.
 *
 * Return: index of the sub-list.
 */
unsigned int pollist_pick_sub(struct pollist *pl)
{
	unsigned int start, best, best_count = UINT_MAX, i;

	start = (unsigned int)atomic_fetch_inc(&pl->rr) % pl->nr_subs;
	best = start;
	for (i = 0; i < pl->nr_subs; i++) {
		unsigned int idx = (start + i) % pl->nr_subs;
		unsigned int count = READ_ONCE(pl->subs[idx].count);

		if (count < best_count) {
			best = idx;
			best_count = count;
		}
	}
	return best;
}

/**
 * pollist_sync - wait for the pollers and their hand-overs
 * @pl: the list
 *
 * On return every poll() that started before has returned, and so has the
 * complete() of every hit such a poll() found.  Sleeps.
 */
void pollist_sync(struct pollist *pl)
{
	synchronize_srcu(&pl->srcu);
	pollist_flush_kicks(pl);
}

/*
 * An entry unlinked without waiting may still be under a poller until the
 * grace period noted by pollist_unlink(), and then in a hand-over: wait for
 * both before the entry is reused.  Sleeps if that grace period has not
 * ended.
 */
static void pollist_wait_unlinked(struct pollist *pl,
				  struct pollist_entry *entry)
{
	if (!entry->unlinked)
		return;
	if (!poll_state_synchronize_srcu(&pl->srcu, entry->unlink_gp))
		synchronize_srcu(&pl->srcu);
	pollist_flush_kicks(pl);
	entry->unlinked = false;
}

/**
 * pollist_add - put an entry on the least loaded sub-list
 * @pl: the list
 * @entry: the entry, with @poll and @complete set
 *
 * Return: 0, -EINVAL without callbacks, -EBUSY if already registered.
 */
int pollist_add(struct pollist *pl, struct pollist_entry *entry)
{
	struct pollist_sub *sub;

	if (!entry->poll || !entry->complete)
		return -EINVAL;
	if (entry->sub)
		return -EBUSY;
	pollist_wait_unlinked(pl, entry);

	sub = &pl->subs[pollist_pick_sub(pl)];
	entry->hits = 0;
	spin_lock(&sub->lock);
	entry->sub = sub;
	list_add_tail_rcu(&entry->node, &sub->head);
	WRITE_ONCE(sub->count, sub->count + 1);
	spin_unlock(&sub->lock);
	atomic_inc(&pl->nr_entries);
	return 0;
}

/**
 * pollist_unlink - take an entry off its sub-list, without waiting
 * @pl: the list
 * @entry: the entry; nothing happens if it is not registered
 *
 * A poller may still run the entry's callbacks until pollist_sync()
 * returns; until then the entry must not be freed.  Adding it again, or
 * pollist_del(), waits for the pollers first.
 *
 * Context: process context; the caller serialises calls for one entry.
 */
void pollist_unlink(struct pollist *pl, struct pollist_entry *entry)
{
	struct pollist_sub *sub = entry->sub;

	if (!sub)
		return;

	spin_lock(&sub->lock);
	list_del_rcu(&entry->node);
	WRITE_ONCE(sub->count, sub->count - 1);
	spin_unlock(&sub->lock);
	atomic_dec(&pl->nr_entries);
	entry->sub = NULL;
	entry->unlink_gp = get_state_synchronize_srcu(&pl->srcu);
	entry->unlinked = true;
}

/**
 * pollist_del - take an entry off its sub-list and wait for the poller
 * @pl: the list
 * @entry: the entry; nothing happens if it is not registered
 *
 * On return no CPU runs or will run the entry's callbacks.  Sleeps.
 */
void pollist_del(struct pollist *pl, struct pollist_entry *entry)
{
	might_sleep();
	pollist_unlink(pl, entry);
	/* A poller may still be looking at the entry: wait until it leaves. */
	pollist_wait_unlinked(pl, entry);
}

/**
 * pollist_try_own - become the one CPU polling the list
 * @pl: the list
 * @cpu: the caller's CPU
 *
 * Return: true if @cpu now owns the list and must pollist_release() it.
 */
bool pollist_try_own(struct pollist *pl, int cpu)
{
	int none = POLLIST_NO_POLLER;

	return atomic_try_cmpxchg_acquire(&pl->poller, &none, cpu);
}

/**
 * pollist_release - give up the poller ownership
 * @pl: the list
 * @cpu: the owner
 */
void pollist_release(struct pollist *pl, int cpu)
{
	WARN_ON_ONCE(atomic_read(&pl->poller) != cpu);
	atomic_set_release(&pl->poller, POLLIST_NO_POLLER);
}

/**
 * pollist_walk - look at every sub-list until an entry has work
 * @pl: the list, owned by the caller inside an SRCU read-side critical
 *	section on @pl->srcu, which keeps *@hit valid
 * @first: sub-list to start with (the poller's own); the others follow
 * @hit: set to the first entry whose poll function found work
 *
 * need_resched() is checked before each entry: a runnable task ends the
 * pass at once.  Only the poll functions run: the pass ends at the first
 * hit, whose work the caller hands over.  Must be called with interrupts
 * enabled.
 *
 * Return: false if the pass was cut short by need_resched().
 */
bool pollist_walk(struct pollist *pl, unsigned int first,
		  struct pollist_entry **hit)
{
	struct pollist_entry *entry;
	unsigned int i;

	first %= pl->nr_subs;
	for (i = 0; i < pl->nr_subs; i++) {
		struct pollist_sub *sub = &pl->subs[(first + i) % pl->nr_subs];

		list_for_each_entry_srcu(entry, &sub->head, node,
					 srcu_read_lock_held(&pl->srcu)) {
			if (need_resched())
				return false;
			if (entry->poll(entry)) {
				*hit = entry;
				return true;
			}
		}
	}
	return true;
}

/*
 * Queue the hit for this CPU's hand-over, with interrupts disabled and
 * inside the SRCU read-side critical section of the walk that found it.
 * The interrupt fires when the caller enables interrupts again.  Should the
 * previous hand-over still be pending, the device's own interrupt, which
 * the poller leaves enabled, reports this work instead.
 */
static bool pollist_hand_over(struct pollist *pl, struct pollist_entry *entry)
{
	struct pollist_kick *kick = this_cpu_ptr(pl->kicks);

	lockdep_assert_irqs_disabled();
	if (kick->entry)
		return false;
	kick->entry = entry;
	irq_work_queue(&kick->work);
	return true;
}

/**
 * pollist_poll - one polling session
 * @pl: the list
 * @cpu: the polling CPU
 * @limit_ns: the window: the session ends when it is over
 * @s: filled with the outcome and what the session saw
 *
 * Takes the poller ownership or ends at once with %POLLIST_BUSY, then
 * walks the list until an entry has work, need_resched() or the end of
 * the window.  The session only calls poll functions.  It ends at the
 * first hit and disables interrupts before it queues the hit's complete()
 * for an interrupt of this CPU, which fires when the caller enables them:
 * the caller leaves the polling state first.
 *
 * Context: called with interrupts enabled, returns with them disabled.
 */
void pollist_poll(struct pollist *pl, int cpu, u64 limit_ns,
		  struct pollist_session *s)
{
	struct pollist_entry *hit = NULL;
	u64 start, now;
	int idx;

	memset(s, 0, sizeof(*s));
	if (!pollist_try_own(pl, cpu)) {
		s->outcome = POLLIST_BUSY;
		local_irq_disable();
		return;
	}

	idx = srcu_read_lock(&pl->srcu);
	start = local_clock();
	for (;;) {
		bool done = pollist_walk(pl, cpu, &hit);

		s->passes++;
		now = local_clock();
		if (hit) {
			s->outcome = POLLIST_WORK;
			s->last_hit_ns = now - start;
			break;
		}
		if (!done || need_resched()) {
			s->outcome = POLLIST_RESCHED;
			break;
		}
		if (now - start >= limit_ns) {
			s->outcome = POLLIST_TIMEOUT;
			break;
		}
		cpu_relax();
	}
	s->elapsed_ns = now - start;
	local_irq_disable();
	if (hit && pollist_hand_over(pl, hit))
		s->hits = 1;
	srcu_read_unlock(&pl->srcu, idx);
	pollist_release(pl, cpu);
}

/**
 * pollist_poll_idle - a polling session the way the idle loop runs it
 * @pl: the list
 * @cpu: the polling CPU
 * @limit_ns: the window
 * @s: filled with the outcome and what the session saw
 *
 * As poll_idle() does: the session runs with the polling flag set, so that
 * a remote wakeup only sets need_resched(), which the session checks before
 * every entry, and no IPI is sent.  The flag is cleared before interrupts
 * are enabled again, so the work a hit hands over runs in an interrupt on
 * a CPU that no longer polls: a wakeup aimed at it during that work sends
 * the IPI, and the work is not time spent in the idle state.
 *
 * Context: called with interrupts enabled, returns with them disabled and
 * the polling flag clear.
 */
void pollist_poll_idle(struct pollist *pl, int cpu, u64 limit_ns,
		       struct pollist_session *s)
{
	if (current_set_polling_and_test()) {
		memset(s, 0, sizeof(*s));
		s->outcome = POLLIST_RESCHED;
		local_irq_disable();
	} else {
		pollist_poll(pl, cpu, limit_ns, s);
	}
	current_clr_polling();
}

/**
 * pollist_adjust - the next polling window of a CPU
 * @t: the tunables
 * @cur_ns: the current window, 0 when the CPU does not poll
 * @event_ns: when the event that ended the idle period came, from the
 *	start of the window: a hit, or the window plus the following halt
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
MODULE_PARM_DESC(enable, "Register the pollist cpuidle driver at boot");

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
MODULE_PARM_DESC(poll_shrink, "Window divisor after a long halt, 0 to stop polling at once (0-16)");

static void pollist_get_tunables(struct pollist_tunables *t)
{
	t->max_ns = READ_ONCE(poll_limit_ns.val);
	t->grow_start_ns = READ_ONCE(poll_grow_start_ns.val);
	t->grow = READ_ONCE(poll_grow.val);
	t->shrink = READ_ONCE(poll_shrink.val);
}

/* ------------------------------------------------------------------------
 * The cpuidle driver and its governor
 */

enum {
	POLLIST_STATE_POLL,
	POLLIST_STATE_HALT,
};

/**
 * struct pollist_cpu - per-CPU governor state and statistics
 * @limit_ns: current polling window
 * @window_ns: length of the last session
 * @outcome: how the last session ended, %POLLIST_NONE after a halt
 * @must_poll: PM QoS forbids halting: poll even without the ownership
 * @polls: sessions that owned the list
 * @hits: entries found with work
 * @poll_ns: time spent in sessions
 * @fallbacks: sessions whose window expired, followed by a halt
 * @resched: sessions ended by a runnable task
 * @busy: idle periods that halted because another CPU was polling
 * @halts: halt state entries
 *
 * Written by its CPU only; debugfs reads it from any CPU.
 */
struct pollist_cpu {
	u64 limit_ns;
	u64 window_ns;
	enum pollist_outcome outcome;
	bool must_poll;
	u64 polls;
	u64 hits;
	u64 poll_ns;
	u64 fallbacks;
	u64 resched;
	u64 busy;
	u64 halts;
};

static DEFINE_PER_CPU(struct pollist_cpu, pollist_cpus);
static struct pollist pollist_global;
static bool pollist_on __read_mostly;
static struct cpuidle_device __percpu *pollist_devices;

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

/* Plain polling for need_resched(), when PM QoS forbids halting. */
static void pollist_spin(u64 limit_ns, struct pollist_session *s)
{
	u64 start = local_clock();

	while (!need_resched()) {
		cpu_relax();
		if (local_clock() - start >= limit_ns) {
			s->outcome = POLLIST_TIMEOUT;
			return;
		}
	}
	s->outcome = POLLIST_RESCHED;
}

static void pollist_account(struct pollist_cpu *pc, u64 limit_ns,
			    const struct pollist_session *s)
{
	struct pollist_tunables t;

	pc->outcome = s->outcome;
	pc->window_ns = s->elapsed_ns;
	if (s->outcome == POLLIST_BUSY) {
		pollist_inc(&pc->busy);
		return;
	}

	pollist_inc(&pc->polls);
	pollist_add_to(&pc->hits, s->hits);
	pollist_add_to(&pc->poll_ns, s->elapsed_ns);
	if (s->outcome == POLLIST_TIMEOUT)
		pollist_inc(&pc->fallbacks);
	else if (s->outcome == POLLIST_RESCHED)
		pollist_inc(&pc->resched);

	if (s->outcome == POLLIST_WORK) {
		pollist_get_tunables(&t);
		pc->limit_ns = pollist_adjust(&t, limit_ns, s->last_hit_ns);
	}
}

/*
 * The polling state.  CPUIDLE_FLAG_RCU_IDLE: RCU keeps watching this CPU,
 * as the poll functions read RCU-protected driver state; the CPU never
 * enters an RCU extended quiescent state here and a session is bounded by
 * the window.  The work a hit hands over runs after this returns, when the
 * cpuidle core enables interrupts: it is not counted in the state's
 * residency, nor by NOHZ as idle time.
 */
static int pollist_enter_poll(struct cpuidle_device *dev,
			      struct cpuidle_driver *drv, int index)
{
	struct pollist_cpu *pc = this_cpu_ptr(&pollist_cpus);
	u64 limit_ns = pollist_window(pc);
	struct pollist_session s;

	dev->poll_time_limit = false;
	local_irq_enable();
	pollist_poll_idle(&pollist_global, dev->cpu, limit_ns, &s);
	if (s.outcome == POLLIST_BUSY && pc->must_poll) {
		local_irq_enable();
		if (!current_set_polling_and_test())
			pollist_spin(limit_ns ?: TICK_NSEC, &s);
		local_irq_disable();
		current_clr_polling();
	}

	if (s.outcome == POLLIST_TIMEOUT)
		dev->poll_time_limit = true;
	pollist_account(pc, limit_ns, &s);
	return index;
}

static __cpuidle int pollist_enter_halt(struct cpuidle_device *dev,
					struct cpuidle_driver *drv, int index)
{
	if (current_clr_polling_and_test())
		return index;

	arch_cpu_idle();
	return index;
}

static struct cpuidle_driver pollist_driver = {
	.name = "pollist",
	.governor = "pollist",
	.owner = THIS_MODULE,
	.states = {
		[POLLIST_STATE_POLL] = {
			.enter			= pollist_enter_poll,
			.exit_latency		= 0,
			.target_residency	= 0,
			.power_usage		= -1,
			.flags			= CPUIDLE_FLAG_POLLING |
						  CPUIDLE_FLAG_RCU_IDLE,
			.name			= "POLLIST",
			.desc			= "pollist: walk the polling list",
		},
		[POLLIST_STATE_HALT] = {
			.enter			= pollist_enter_halt,
			.exit_latency		= 1,
			.target_residency	= 1,
			.power_usage		= -1,
			.name			= "HLT",
			.desc			= "pollist: architecture halt",
		},
	},
	.state_count = 2,
};

static int pollist_select(struct cpuidle_driver *drv,
			  struct cpuidle_device *dev, bool *stop_tick)
{
	struct pollist_cpu *pc = this_cpu_ptr(&pollist_cpus);
	s64 latency_req = cpuidle_governor_latency_req(dev->cpu);

	/* Chosen by hand for another driver: its deepest allowed state. */
	if (drv != &pollist_driver)
		return cpuidle_find_deepest_state(drv, dev, latency_req);

	pc->must_poll = latency_req == 0 ||
			dev->states_usage[POLLIST_STATE_HALT].disable;
	if (pc->must_poll) {
		*stop_tick = false;
		return POLLIST_STATE_POLL;
	}
	if (dev->states_usage[POLLIST_STATE_POLL].disable)
		return POLLIST_STATE_HALT;

	/* The window of the last session expired: halt. */
	if (pc->outcome == POLLIST_TIMEOUT || pc->outcome == POLLIST_BUSY)
		return POLLIST_STATE_HALT;

	if (!pollist_window(pc) ||
	    !atomic_read(&pollist_global.nr_entries))
		return POLLIST_STATE_HALT;

	/* One poller is enough. */
	if (atomic_read(&pollist_global.poller) != POLLIST_NO_POLLER) {
		pollist_inc(&pc->busy);
		return POLLIST_STATE_HALT;
	}

	*stop_tick = false;
	return POLLIST_STATE_POLL;
}

static void pollist_reflect(struct cpuidle_device *dev, int index)
{
	struct pollist_cpu *pc = this_cpu_ptr(&pollist_cpus);
	struct pollist_tunables t;
	u64 event_ns;

	dev->last_state_idx = index;
	if (index != POLLIST_STATE_HALT)
		return;

	pollist_inc(&pc->halts);
	if (pc->outcome == POLLIST_TIMEOUT)
		event_ns = pc->window_ns + dev->last_residency_ns;
	else if (!pc->limit_ns)
		event_ns = dev->last_residency_ns;
	else
		event_ns = 0;
	pc->outcome = POLLIST_NONE;
	if (!event_ns)
		return;

	pollist_get_tunables(&t);
	pc->limit_ns = pollist_adjust(&t, pollist_window(pc), event_ns);
}

static int pollist_gov_enable(struct cpuidle_driver *drv,
			      struct cpuidle_device *dev)
{
	struct pollist_cpu *pc = per_cpu_ptr(&pollist_cpus, dev->cpu);

	pc->limit_ns = min(READ_ONCE(poll_grow_start_ns.val),
			   READ_ONCE(poll_limit_ns.val));
	pc->outcome = POLLIST_NONE;
	pc->must_poll = false;
	return 0;
}

static struct cpuidle_governor pollist_governor = {
	.name		= "pollist",
	.rating		= 9,
	.enable		= pollist_gov_enable,
	.select		= pollist_select,
	.reflect	= pollist_reflect,
};

/* ------------------------------------------------------------------------
 * The API for device drivers
 */

/**
 * pollist_active - whether the pollist driver polls registered entries
 *
 * Return: true once the driver was chosen at boot and registered.
 */
bool pollist_active(void)
{
	return READ_ONCE(pollist_on);
}
EXPORT_SYMBOL_GPL(pollist_active);

/**
 * pollist_register - ask the idle CPUs to poll an entry
 * @entry: the poll request; @poll, @complete and @name set by the caller,
 *	the rest zeroed.  It must stay valid until pollist_unregister()
 *	returns.
 *
 * The entry goes to the least loaded per-CPU sub-list.  From now on the
 * idle CPU that polls calls @entry->poll, and @entry->complete when the
 * poll finds work.  The device's interrupt is not touched: it stays the
 * backstop for the times nobody polls.
 *
 * Context: process context; may be called from any CPU.
 * Return: 0, -ENODEV if the pollist driver is not running, -EINVAL
 * without callbacks, -EBUSY if @entry is already registered.
 */
int pollist_register(struct pollist_entry *entry)
{
	if (!pollist_active())
		return -ENODEV;
	return pollist_add(&pollist_global, entry);
}
EXPORT_SYMBOL_GPL(pollist_register);

/**
 * pollist_unregister - stop polling an entry
 * @entry: an entry given to pollist_register(), or one that never was
 *	(then nothing happens)
 *
 * On return no CPU is running or will run @entry's callbacks, even if a
 * CPU was polling it when this was called, and @entry may be freed.
 * Entries on the sub-list of an offline CPU are polled like the others
 * and unregistered the same way.
 *
 * Context: process context, sleeps (waits for an SRCU grace period).
 */
void pollist_unregister(struct pollist_entry *entry)
{
	if (!entry->sub && !entry->unlinked)
		return;
	pollist_del(&pollist_global, entry);
}
EXPORT_SYMBOL_GPL(pollist_unregister);

/**
 * pollist_unregister_nosync - stop polling an entry, without waiting
 * @entry: an entry given to pollist_register(), or one that never was
 *	(then nothing happens)
 *
 * For a driver that unregisters many entries at once: unlink each with
 * this, then wait once with pollist_synchronize().  Until that returns a
 * CPU may still run @entry's callbacks and @entry must not be freed;
 * pollist_register() or pollist_unregister() on it before then wait for
 * the pollers themselves.
 *
 * Context: process context.
 */
void pollist_unregister_nosync(struct pollist_entry *entry)
{
	pollist_unlink(&pollist_global, entry);
}
EXPORT_SYMBOL_GPL(pollist_unregister_nosync);

/**
 * pollist_synchronize - wait for the poll callbacks in progress
 *
 * On return every call of a @poll callback that started before has
 * returned, and so has the @complete of the work it found.  A driver
 * whose @poll first checks that it owns the device state it reads (NAPI
 * not scheduled, hence not disabled) calls this after taking that state
 * away and before freeing it: a ring resize or reset with NAPI disabled.
 * Also completes pollist_unregister_nosync().
 *
 * Context: process context, sleeps (an SRCU grace period and the
 * hand-overs) unless the pollist driver is not running.
 */
void pollist_synchronize(void)
{
	if (pollist_active())
		pollist_sync(&pollist_global);
}
EXPORT_SYMBOL_GPL(pollist_synchronize);

/* ------------------------------------------------------------------------
 * Statistics: /sys/kernel/debug/pollist/
 */

static int pollist_stats_show(struct seq_file *m, void *v)
{
	int cpu;

	seq_puts(m, "cpu polls hits poll_ns fallbacks resched busy halts limit_ns\n");
	for_each_possible_cpu(cpu) {
		struct pollist_cpu *pc = per_cpu_ptr(&pollist_cpus, cpu);

		seq_printf(m, "%d %llu %llu %llu %llu %llu %llu %llu %llu\n", cpu,
			   READ_ONCE(pc->polls), READ_ONCE(pc->hits),
			   READ_ONCE(pc->poll_ns), READ_ONCE(pc->fallbacks),
			   READ_ONCE(pc->resched), READ_ONCE(pc->busy),
			   READ_ONCE(pc->halts), READ_ONCE(pc->limit_ns));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pollist_stats);

static int pollist_entries_show(struct seq_file *m, void *v)
{
	struct pollist *pl = &pollist_global;
	struct pollist_entry *entry;
	unsigned int i;
	int idx;

	seq_puts(m, "sublist name hits\n");
	idx = srcu_read_lock(&pl->srcu);
	for (i = 0; i < pl->nr_subs; i++) {
		list_for_each_entry_srcu(entry, &pl->subs[i].head, node,
					 srcu_read_lock_held(&pl->srcu))
			seq_printf(m, "%u %s %lu\n", i, entry->name,
				   READ_ONCE(entry->hits));
	}
	srcu_read_unlock(&pl->srcu, idx);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pollist_entries);

static void __init pollist_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("pollist", NULL);

	debugfs_create_file("stats", 0444, dir, NULL, &pollist_stats_fops);
	debugfs_create_file("entries", 0444, dir, NULL, &pollist_entries_fops);
}

/* ------------------------------------------------------------------------
 * Boot
 */

static int pollist_cpu_online(unsigned int cpu)
{
	struct cpuidle_device *dev = per_cpu_ptr(pollist_devices, cpu);

	if (!dev->registered) {
		dev->cpu = cpu;
		if (cpuidle_register_device(dev)) {
			pr_notice("cpuidle_register_device %u failed\n", cpu);
			return -EIO;
		}
	}
	return 0;
}

static int pollist_cpu_offline(unsigned int cpu)
{
	struct cpuidle_device *dev = per_cpu_ptr(pollist_devices, cpu);

	if (dev->registered)
		cpuidle_unregister_device(dev);
	return 0;
}

/*
 * Before device_initcall: the ACPI and intel_idle drivers register there
 * and step aside when a driver is already registered.
 */
static int __init pollist_init(void)
{
	int ret;

	if (!pollist_enable)
		return 0;
	if (boot_option_idle_override != IDLE_NO_OVERRIDE) {
		pr_info("not loading: idle= given\n");
		return -ENODEV;
	}
	if (cpuidle_get_driver()) {
		pr_info("not loading: %s already registered\n",
			cpuidle_get_driver()->name);
		return -EBUSY;
	}

	ret = pollist_init_list(&pollist_global, nr_cpu_ids);
	if (ret)
		return ret;

	ret = cpuidle_register_governor(&pollist_governor);
	if (ret)
		goto err_list;

	ret = cpuidle_register_driver(&pollist_driver);
	if (ret) {
		pr_err("cpuidle_register_driver failed: %d\n", ret);
		goto err_list;
	}

	pollist_devices = alloc_percpu(struct cpuidle_device);
	if (!pollist_devices) {
		ret = -ENOMEM;
		goto err_driver;
	}

	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "cpuidle/pollist:online",
				pollist_cpu_online, pollist_cpu_offline);
	if (ret < 0)
		goto err_devices;

	pollist_debugfs_init();
	WRITE_ONCE(pollist_on, true);
	pr_info("polling list with %u sub-lists, window up to %u ns\n",
		pollist_global.nr_subs, READ_ONCE(poll_limit_ns.val));
	return 0;

err_devices:
	free_percpu(pollist_devices);
	pollist_devices = NULL;
err_driver:
	cpuidle_unregister_driver(&pollist_driver);
err_list:
	pollist_free_list(&pollist_global);
	return ret;
}
subsys_initcall_sync(pollist_init);
