// SPDX-License-Identifier: GPL-2.0
/*
 * pollist: the polling list.
 *
 * One sub-list per CPU, each with its own lock; registrations are spread
 * over the sub-lists.  One CPU at a time owns the list and walks it in a
 * polling session: it only calls the entries' poll functions, and hands the
 * first entry with work to an interrupt of its own CPU, which runs the
 * entry's complete() once the CPU has left the polling state.  Nothing here
 * touches the cpuidle core: the KUnit tests run it on private lists.
 */

#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/idle.h>
#include <linux/slab.h>

#include <asm/processor.h>

#include "cpuidle-pollist.h"

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
	s->limit_ns = limit_ns;
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
		s->limit_ns = limit_ns;
		s->outcome = POLLIST_RESCHED;
		local_irq_disable();
	} else {
		pollist_poll(pl, cpu, limit_ns, s);
	}
	current_clr_polling();
}
