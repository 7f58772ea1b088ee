/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internals of the pollist polling list, shared by its three parts and
 * its KUnit tests: the polling list with its per-CPU sub-lists, the poller
 * ownership and one polling session (cpuidle-pollist-list.c), the adaptive
 * window (cpuidle-pollist.c, with the cpuidle core hooks) and the
 * global list the clients register on (cpuidle-pollist-client.c).  The
 * list and the window do not touch the cpuidle core, so the tests can run
 * them on a private list.
 */
#ifndef _CPUIDLE_POLLIST_H
#define _CPUIDLE_POLLIST_H

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/cpuidle_pollist.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/srcu.h>
#include <linux/types.h>

struct dentry;

#define POLLIST_NO_POLLER	(-1)

/**
 * struct pollist_sub - one sub-list of the polling list
 * @lock: serializes changes to @head and @count; the poller never takes it
 * @head: the entries, walked under SRCU
 * @count: number of entries, read locklessly to spread registrations
 */
struct pollist_sub {
	spinlock_t lock;	/* writers only: the poller walks under SRCU */
	struct list_head head;
	unsigned int count;
} ____cacheline_aligned_in_smp;

/**
 * struct pollist_kick - hands the work a poller found to its own CPU
 * @work: a self-interrupt, queued when the poller leaves the polling state;
 *	its handler runs the entry's complete(), its exit the softirq that
 *	raised
 * @entry: the entry whose poll() found work, until the handler takes it
 */
struct pollist_kick {
	struct irq_work work;
	struct pollist_entry *entry;
};

/**
 * struct pollist - a polling list: one sub-list per CPU and one poller
 * @srcu: the poller walks under it; unregistration waits for it
 * @kicks: one hand-over per CPU; unregistration waits for it too
 * @subs: @nr_subs sub-lists
 * @nr_subs: number of sub-lists
 * @nr_entries: entries on all sub-lists
 * @rr: round-robin cursor breaking ties between equally loaded sub-lists
 * @poller: CPU that owns the list while it polls, or %POLLIST_NO_POLLER
 */
struct pollist {
	struct srcu_struct srcu;
	struct pollist_kick __percpu *kicks;
	struct pollist_sub *subs;
	unsigned int nr_subs;
	atomic_t nr_entries;
	atomic_t rr;
	atomic_t poller;
};

/**
 * struct pollist_tunables - the adaptive polling window
 * @max_ns: longest window; an event later than this shrinks the window
 * @grow_start_ns: first window after growing from zero, and the smallest
 *	window that shrinking keeps before dropping to zero
 * @grow: multiplier when growing
 * @shrink: divisor when shrinking; 0 drops the window to zero at once
 */
struct pollist_tunables {
	u64 max_ns;
	u64 grow_start_ns;
	unsigned int grow;
	unsigned int shrink;
};

/**
 * enum pollist_outcome - how a polling session ended
 * @POLLIST_NONE: no session since the last deeper state
 * @POLLIST_RESCHED: a task became runnable
 * @POLLIST_WORK: an entry had work: the session ended to hand it over
 * @POLLIST_TIMEOUT: the window expired; the governor's state comes next
 * @POLLIST_BUSY: another CPU owned the list; this one did not poll
 */
enum pollist_outcome {
	POLLIST_NONE,
	POLLIST_RESCHED,
	POLLIST_WORK,
	POLLIST_TIMEOUT,
	POLLIST_BUSY,
};

/**
 * struct pollist_session - result of one polling session
 * @outcome: why it ended
 * @hits: entries whose poll function found work: 0, or 1 with %POLLIST_WORK
 * @passes: walks over the sub-lists, the last one cut short by a hit or
 *	need_resched()
 * @elapsed_ns: time spent polling
 * @last_hit_ns: time from the start to the last hit, 0 without hits
 * @limit_ns: the time the session was given
 */
struct pollist_session {
	enum pollist_outcome outcome;
	unsigned int hits;
	unsigned int passes;
	u64 elapsed_ns;
	u64 last_hit_ns;
	u64 limit_ns;
};

/* cpuidle-pollist-list.c */
int pollist_init_list(struct pollist *pl, unsigned int nr_subs);
void pollist_free_list(struct pollist *pl);
unsigned int pollist_pick_sub(struct pollist *pl);
int pollist_add(struct pollist *pl, struct pollist_entry *entry);
void pollist_unlink(struct pollist *pl, struct pollist_entry *entry);
void pollist_del(struct pollist *pl, struct pollist_entry *entry);
void pollist_sync(struct pollist *pl);
bool pollist_try_own(struct pollist *pl, int cpu);
void pollist_release(struct pollist *pl, int cpu);
bool pollist_walk(struct pollist *pl, unsigned int first,
		  struct pollist_entry **hit);
void pollist_poll(struct pollist *pl, int cpu, u64 limit_ns,
		  struct pollist_session *s);
void pollist_poll_idle(struct pollist *pl, int cpu, u64 limit_ns,
		       struct pollist_session *s);

/* cpuidle-pollist.c */
u64 pollist_adjust(const struct pollist_tunables *t, u64 cur_ns,
		   u64 event_ns);
void pollist_hooks_update(void);
bool pollist_polled(void);

/* cpuidle-pollist-client.c: the list of the clients, polled once set up at boot */
extern struct pollist pollist_global;
void pollist_clients_open(void);
void pollist_clients_debugfs(struct dentry *dir);

#endif /* _CPUIDLE_POLLIST_H */
