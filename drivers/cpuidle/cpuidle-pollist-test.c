// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the pollist core on private lists: spreading entries over
 * the sub-lists, one poller at a time, unregistering while a CPU polls the
 * entry, leaving at once for a runnable task, work run only after the
 * polling state, a remote wakeup seen within one poll-loop check, and the
 * adaptive window.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/idle.h>

#include "cpuidle-pollist.h"

#define NR_ENTRIES	10

struct fake_entry {
	struct pollist_entry entry;
	struct kunit *test;
	atomic_t polls;
	atomic_t completes;
	atomic_t bad_context;	/* complete() not as an interrupt handler */
	bool work;		/* what poll() answers */
	bool resched;		/* poll() makes a task runnable */
	int order;		/* when poll() last ran, see seq */
	atomic_t *seq;
};

static bool fake_poll(struct pollist_entry *e)
{
	struct fake_entry *f = container_of(e, struct fake_entry, entry);

	atomic_inc(&f->polls);
	if (f->seq)
		f->order = atomic_inc_return(f->seq);
	if (f->resched)
		set_tsk_need_resched(current);
	return f->work;
}

/*
 * complete() runs in hard interrupt context on a CPU that has left the
 * polling state: a wakeup during the work it starts sends the IPI.
 */
static bool handed_over(void)
{
	return in_hardirq() && !test_thread_flag(TIF_POLLING_NRFLAG);
}

static void fake_complete(struct pollist_entry *e)
{
	struct fake_entry *f = container_of(e, struct fake_entry, entry);

	if (!handed_over())
		atomic_inc(&f->bad_context);
	atomic_inc(&f->completes);
}

static void fake_init(struct kunit *test, struct fake_entry *f)
{
	memset(f, 0, sizeof(*f));
	f->entry.poll = fake_poll;
	f->entry.complete = fake_complete;
	f->test = test;
}

/* Clear a need_resched() set by a fake entry, or by the scheduler. */
static void clear_resched(void)
{
	if (need_resched())
		schedule();
}

/*
 * A session as the idle loop runs it, then interrupts on again as the
 * cpuidle core turns them on: a hit's hand-over fires.  pollist_sync()
 * waits for it.
 */
static void session(struct pollist *pl, int cpu, u64 limit_ns,
		    struct pollist_session *s)
{
	pollist_poll_idle(pl, cpu, limit_ns, s);
	local_irq_enable();
}

/*
 * A session in a test thread, not in the idle loop: the scheduler may ask
 * for the CPU before or in the middle of it.  Retry until the session ends
 * for another reason (its window ran out, work, another poller).
 */
static void poll_window(struct pollist *pl, int cpu, u64 limit_ns,
			struct pollist_session *s)
{
	int tries = 20;

	do {
		clear_resched();
		session(pl, cpu, limit_ns, s);
	} while (s->outcome == POLLIST_RESCHED && --tries);
}

static struct pollist *new_list(struct kunit *test, unsigned int nr_subs)
{
	struct pollist *pl = kunit_kzalloc(test, sizeof(*pl), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pl);
	KUNIT_ASSERT_EQ(test, pollist_init_list(pl, nr_subs), 0);
	return pl;
}

static void spread_ok(struct kunit *test, struct pollist *pl)
{
	unsigned int i, lo = UINT_MAX, hi = 0, sum = 0;

	for (i = 0; i < pl->nr_subs; i++) {
		unsigned int n = 0;
		struct pollist_entry *e;

		list_for_each_entry(e, &pl->subs[i].head, node)
			n++;
		KUNIT_EXPECT_EQ(test, n, pl->subs[i].count);
		lo = min(lo, n);
		hi = max(hi, n);
		sum += n;
	}
	KUNIT_EXPECT_LE_MSG(test, hi - lo, 1U, "sub-lists from %u to %u", lo, hi);
	KUNIT_EXPECT_EQ(test, sum, (unsigned int)atomic_read(&pl->nr_entries));
}

static void pollist_test_spread(struct kunit *test)
{
	struct fake_entry *f = kunit_kcalloc(test, NR_ENTRIES, sizeof(*f), GFP_KERNEL);
	struct pollist *pl = new_list(test, 4);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	for (i = 0; i < NR_ENTRIES; i++) {
		fake_init(test, &f[i]);
		KUNIT_ASSERT_EQ(test, pollist_add(pl, &f[i].entry), 0);
		spread_ok(test, pl);
	}
	/* 10 over 4: two sub-lists of 3, two of 2. */
	KUNIT_EXPECT_EQ(test, atomic_read(&pl->nr_entries), NR_ENTRIES);

	/* Empty one sub-list: the next registrations refill it first. */
	for (i = 0; i < NR_ENTRIES; i++)
		if (f[i].entry.sub == &pl->subs[0])
			pollist_del(pl, &f[i].entry);
	KUNIT_EXPECT_EQ(test, pl->subs[0].count, 0U);
	for (i = 0; i < NR_ENTRIES; i++) {
		if (f[i].entry.sub)
			continue;
		KUNIT_EXPECT_EQ(test, pollist_add(pl, &f[i].entry), 0);
		KUNIT_EXPECT_PTR_EQ(test, f[i].entry.sub, &pl->subs[0]);
		break;
	}
	for (i = 0; i < NR_ENTRIES; i++)
		if (!f[i].entry.sub)
			KUNIT_EXPECT_EQ(test, pollist_add(pl, &f[i].entry), 0);
	spread_ok(test, pl);

	for (i = 0; i < NR_ENTRIES; i++) {
		pollist_del(pl, &f[i].entry);
		KUNIT_EXPECT_NULL(test, f[i].entry.sub);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&pl->nr_entries), 0);
	pollist_free_list(pl);
}

static void pollist_test_register_errors(struct kunit *test)
{
	struct pollist *pl = new_list(test, 1);
	struct fake_entry f;

	fake_init(test, &f);
	f.entry.complete = NULL;
	KUNIT_EXPECT_EQ(test, pollist_add(pl, &f.entry), -EINVAL);
	f.entry.complete = fake_complete;
	KUNIT_EXPECT_EQ(test, pollist_add(pl, &f.entry), 0);
	KUNIT_EXPECT_EQ(test, pollist_add(pl, &f.entry), -EBUSY);
	pollist_del(pl, &f.entry);
	/* Unregistering twice, or something never registered, is a no-op. */
	pollist_del(pl, &f.entry);
	KUNIT_EXPECT_EQ(test, atomic_read(&pl->nr_entries), 0);
	pollist_free_list(pl);
}

/* One walk under SRCU, as pollist_poll() does it. */
static bool walk(struct pollist *pl, unsigned int first,
		 struct pollist_entry **hit)
{
	bool done;
	int idx;

	*hit = NULL;
	idx = srcu_read_lock(&pl->srcu);
	done = pollist_walk(pl, first, hit);
	srcu_read_unlock(&pl->srcu, idx);
	return done;
}

/*
 * One whole pass from @first, the order of the polls noted in @f.  In a
 * test thread the scheduler may ask for the CPU in the middle of the pass
 * (need_resched() ends it): retry until a whole pass ran.
 */
static void walk_ordered(struct kunit *test, struct pollist *pl,
			 struct fake_entry *f, int nr, unsigned int first,
			 struct pollist_entry **hit)
{
	int i, tries;

	for (tries = 0; tries < 20; tries++) {
		clear_resched();
		atomic_set(f[0].seq, 0);
		for (i = 0; i < nr; i++)
			f[i].order = 0;
		if (walk(pl, first, hit))
			break;
	}
	KUNIT_ASSERT_LT_MSG(test, tries, 20, "no whole pass in 20 tries");
}

/*
 * Every sub-list is walked, the poller's own first, and the walk stops at
 * the first entry with work without running it.
 */
static void pollist_test_walk_order(struct kunit *test)
{
	struct pollist *pl = new_list(test, 3);
	struct pollist_entry *hit;
	struct fake_entry f[3];
	atomic_t seq = ATOMIC_INIT(0);
	int i;

	for (i = 0; i < 3; i++) {
		fake_init(test, &f[i]);
		f[i].seq = &seq;
		f[i].work = i == 0;
		KUNIT_ASSERT_EQ(test, pollist_add(pl, &f[i].entry), 0);
		KUNIT_ASSERT_PTR_EQ(test, f[i].entry.sub, &pl->subs[i]);
	}
	walk_ordered(test, pl, f, 3, 1, &hit);
	KUNIT_EXPECT_EQ(test, f[1].order, 1);
	KUNIT_EXPECT_EQ(test, f[2].order, 2);
	KUNIT_EXPECT_EQ(test, f[0].order, 3);
	KUNIT_EXPECT_PTR_EQ(test, hit, &f[0].entry);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, atomic_read(&f[i].completes), 0);

	/* An entry with work ends the pass: the next ones wait. */
	f[0].work = false;
	f[1].work = true;
	walk_ordered(test, pl, f, 3, 0, &hit);
	KUNIT_EXPECT_PTR_EQ(test, hit, &f[1].entry);
	KUNIT_EXPECT_EQ(test, f[0].order, 1);
	KUNIT_EXPECT_EQ(test, f[1].order, 2);
	KUNIT_EXPECT_EQ(test, f[2].order, 0);
	KUNIT_EXPECT_EQ(test, f[1].entry.hits, 0UL);

	for (i = 0; i < 3; i++)
		pollist_del(pl, &f[i].entry);
	pollist_free_list(pl);
}

/* A runnable task ends the pass before the next entry. */
static void pollist_test_need_resched(struct kunit *test)
{
	struct pollist *pl = new_list(test, 1);
	struct pollist_entry *hit;
	struct pollist_session s;
	struct fake_entry f[3];
	bool done;
	int i;

	for (i = 0; i < 3; i++) {
		fake_init(test, &f[i]);
		KUNIT_ASSERT_EQ(test, pollist_add(pl, &f[i].entry), 0);
	}
	f[1].resched = true;

	/* Retry if the scheduler, not f[1], cut the pass before f[1]. */
	for (i = 0; i < 20; i++) {
		atomic_set(&f[0].polls, 0);
		atomic_set(&f[1].polls, 0);
		atomic_set(&f[2].polls, 0);
		clear_resched();
		done = walk(pl, 0, &hit);
		clear_resched();
		if (atomic_read(&f[1].polls))
			break;
	}
	KUNIT_EXPECT_FALSE(test, done);
	KUNIT_EXPECT_EQ(test, atomic_read(&f[0].polls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f[1].polls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f[2].polls), 0);
	KUNIT_EXPECT_NULL(test, hit);

	/* A whole session: leaves on the first pass, well before the window. */
	for (i = 0; i < 20; i++) {
		atomic_set(&f[1].polls, 0);
		clear_resched();
		session(pl, 0, NSEC_PER_SEC, &s);
		clear_resched();
		if (atomic_read(&f[1].polls))
			break;
	}
	KUNIT_EXPECT_EQ(test, s.outcome, POLLIST_RESCHED);
	KUNIT_EXPECT_EQ(test, s.passes, 1U);
	KUNIT_EXPECT_LT(test, s.elapsed_ns, (u64)NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, atomic_read(&pl->poller), POLLIST_NO_POLLER);

	/* Without a runnable task the session lasts its window. */
	f[1].resched = false;
	f[1].work = false;
	poll_window(pl, 0, 2 * NSEC_PER_MSEC, &s);
	KUNIT_EXPECT_EQ(test, s.outcome, POLLIST_TIMEOUT);
	KUNIT_EXPECT_GE(test, s.elapsed_ns, 2 * NSEC_PER_MSEC);
	KUNIT_EXPECT_GT(test, s.passes, 1U);
	KUNIT_EXPECT_EQ(test, s.hits, 0U);

	for (i = 0; i < 3; i++)
		pollist_del(pl, &f[i].entry);
	pollist_free_list(pl);
}

/*
 * The poller only looks: a hit ends the session, and the entry's work runs
 * after it, in an interrupt on a CPU that no longer polls.
 */
static void pollist_test_work_after_polling(struct kunit *test)
{
	struct pollist *pl = new_list(test, 1);
	struct pollist_session s;
	struct fake_entry f[3];
	int i, tries;

	for (i = 0; i < 3; i++) {
		fake_init(test, &f[i]);
		KUNIT_ASSERT_EQ(test, pollist_add(pl, &f[i].entry), 0);
	}
	f[1].work = true;

	for (tries = 0; tries < 20; tries++) {
		for (i = 0; i < 3; i++)
			atomic_set(&f[i].polls, 0);
		clear_resched();
		pollist_poll_idle(pl, 0, NSEC_PER_SEC, &s);
		/* Nothing ran yet: interrupts are still off. */
		KUNIT_EXPECT_EQ(test, atomic_read(&f[1].completes), 0);
		KUNIT_EXPECT_FALSE(test, test_thread_flag(TIF_POLLING_NRFLAG));
		local_irq_enable();
		if (s.outcome == POLLIST_WORK)
			break;
		pollist_sync(pl);
	}
	KUNIT_ASSERT_EQ(test, s.outcome, POLLIST_WORK);
	pollist_sync(pl);
	KUNIT_EXPECT_EQ(test, s.hits, 1U);
	KUNIT_EXPECT_EQ(test, s.passes, 1U);
	KUNIT_EXPECT_EQ(test, atomic_read(&f[0].polls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f[1].polls), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f[2].polls), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f[1].completes), 1);
	KUNIT_EXPECT_EQ(test, f[1].entry.hits, 1UL);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, atomic_read(&f[i].bad_context), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&pl->poller), POLLIST_NO_POLLER);

	for (i = 0; i < 3; i++)
		pollist_del(pl, &f[i].entry);
	pollist_free_list(pl);
}

/*
 * A remote wakeup while the poller is busy with traffic.  The poller (this
 * thread, with the polling flag set as the idle task has it) runs sessions
 * over an entry that finds work at every WAKE_WORK_EVERY-th check.  A
 * thread on another CPU wakes it as the scheduler wakes a polling idle CPU:
 * it sets TIF_NEED_RESCHED and sends no IPI when the polling flag was set.
 * Every such wakeup must be seen within one poll-loop check (one poll()
 * call) of the waker seeing its flag set, and no work may run while the
 * flag is set.
 */
#define WAKE_ROUNDS		200
#define WAKE_WORK_EVERY		8

struct wake {
	struct pollist *pl;
	struct pollist_entry entry;
	struct task_struct *poller;
	atomic_t checks;	/* poll() calls: one per poll-loop check */
	atomic_t works;		/* complete() calls */
	atomic_t bad_context;	/* complete() while polling, or not in hardirq */
	atomic_t round;		/* the poller is ready for this round */
	atomic_t woken;		/* the waker woke the poller in this round */
	int checks_at_wake;	/* checks when the waker saw its wakeup set */
	bool was_polling;	/* the wakeup found the polling flag set */
	struct completion finished;
};

static bool wake_poll(struct pollist_entry *e)
{
	struct wake *w = container_of(e, struct wake, entry);

	return !(atomic_inc_return(&w->checks) % WAKE_WORK_EVERY);
}

static void wake_complete(struct pollist_entry *e)
{
	struct wake *w = container_of(e, struct wake, entry);

	if (!handed_over())
		atomic_inc(&w->bad_context);
	atomic_inc(&w->works);
}

/*
 * What resched_curr() does to a remote CPU: set TIF_NEED_RESCHED, and send
 * the IPI only if the polling flag was clear.  Return: the flag was set.
 */
static bool wake_polling(struct task_struct *p)
{
	unsigned long *flags = &task_thread_info(p)->flags;
	unsigned long old = READ_ONCE(*flags);

	while (!try_cmpxchg(flags, &old, old | _TIF_NEED_RESCHED))
		;
	return old & _TIF_POLLING_NRFLAG;
}

static int wake_thread(void *data)
{
	struct wake *w = data;
	int r;

	for (r = 1; r <= WAKE_ROUNDS; r++) {
		int start, spins = 0;

		while (atomic_read_acquire(&w->round) != r)
			cond_resched();
		/*
		 * Land the wakeup at a different point of the loop each time.
		 * The poller stops checking if the scheduler asks for its CPU
		 * first: then give up waiting.
		 */
		start = atomic_read(&w->checks);
		while (atomic_read(&w->checks) - start < 1 + r % 13 &&
		       ++spins < 100000)
			cpu_relax();
		w->was_polling = wake_polling(w->poller);
		smp_mb();	/* the flag is set before the checks are read */
		w->checks_at_wake = atomic_read(&w->checks);
		atomic_set_release(&w->woken, r);
	}
	complete(&w->finished);
	return 0;
}

static void pollist_test_remote_wakeup(struct kunit *test)
{
	struct wake *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	int cpu, other, r, polled = 0, late = 0, max_late = 0;
	struct pollist_session s;
	struct task_struct *t;

	KUNIT_ASSERT_NOT_NULL(test, w);
	w->pl = new_list(test, 2);
	w->entry.poll = wake_poll;
	w->entry.complete = wake_complete;
	w->poller = current;
	init_completion(&w->finished);
	KUNIT_ASSERT_EQ(test, pollist_add(w->pl, &w->entry), 0);

	migrate_disable();
	cpu = smp_processor_id();
	other = cpumask_any_but(cpu_online_mask, cpu);
	if (other >= nr_cpu_ids) {
		migrate_enable();
		pollist_del(w->pl, &w->entry);
		pollist_free_list(w->pl);
		kunit_skip(test, "needs two online CPUs");
	}
	t = kthread_create(wake_thread, w, "pollist-waker");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	kthread_bind(t, other);
	wake_up_process(t);

	for (r = 1; r <= WAKE_ROUNDS; r++) {
		int checks;

		clear_resched();
		atomic_set_release(&w->round, r);
		do {
			session(w->pl, cpu, NSEC_PER_MSEC, &s);
		} while (s.outcome != POLLIST_RESCHED);
		checks = atomic_read(&w->checks);
		/*
		 * Not polling now: should the wakeup be the scheduler's, the
		 * waker's comes later and finds the polling flag clear.
		 */
		while (atomic_read_acquire(&w->woken) != r)
			cpu_relax();
		if (!w->was_polling)
			continue;
		/* Seen within one check of the wakeup. */
		polled++;
		if (checks - w->checks_at_wake > 1)
			late++;
		max_late = max(max_late, checks - w->checks_at_wake);
	}
	clear_resched();
	migrate_enable();
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&w->finished, 60 * HZ), 0UL);
	pollist_sync(w->pl);

	kunit_info(test, "%d wakeups, %d found the poller polling, %d works, at most %d checks late\n",
		   WAKE_ROUNDS, polled, atomic_read(&w->works), max_late);
	KUNIT_EXPECT_GT(test, polled, 0);
	KUNIT_EXPECT_EQ(test, late, 0);
	KUNIT_EXPECT_GT(test, atomic_read(&w->works), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&w->bad_context), 0);

	pollist_del(w->pl, &w->entry);
	pollist_free_list(w->pl);
}

static void pollist_test_owner(struct kunit *test)
{
	struct pollist *pl = new_list(test, 2);
	struct pollist_session s;
	struct fake_entry f;

	fake_init(test, &f);
	KUNIT_ASSERT_EQ(test, pollist_add(pl, &f.entry), 0);

	KUNIT_EXPECT_TRUE(test, pollist_try_own(pl, 0));
	KUNIT_EXPECT_FALSE(test, pollist_try_own(pl, 1));
	KUNIT_EXPECT_FALSE(test, pollist_try_own(pl, 0));

	/*
	 * A second CPU does not poll while the first owns the list.  As a
	 * test thread it may be asked for the CPU first (POLLIST_RESCHED,
	 * seen in CI): poll_window() tries again then.
	 */
	poll_window(pl, 1, NSEC_PER_MSEC, &s);
	KUNIT_EXPECT_EQ(test, s.outcome, POLLIST_BUSY);
	KUNIT_EXPECT_EQ(test, s.passes, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&f.polls), 0);

	pollist_release(pl, 0);
	KUNIT_EXPECT_TRUE(test, pollist_try_own(pl, 1));
	pollist_release(pl, 1);

	poll_window(pl, 1, NSEC_PER_MSEC, &s);
	KUNIT_EXPECT_EQ(test, s.outcome, POLLIST_TIMEOUT);
	KUNIT_EXPECT_GT(test, atomic_read(&f.polls), 0);

	pollist_del(pl, &f.entry);
	pollist_free_list(pl);
}

/* Threads on every CPU poll the same list: never two at once. */
struct race {
	struct pollist *pl;
	struct pollist_entry entry;
	atomic_t inside;
	atomic_t max_inside;
	atomic_t sessions;
	atomic_t busy;
	atomic_t done;
	struct completion finished;
	int threads;
};

static bool race_poll(struct pollist_entry *e)
{
	struct race *r = container_of(e, struct race, entry);
	int in = atomic_inc_return(&r->inside);
	int old = atomic_read(&r->max_inside);

	while (in > old && !atomic_try_cmpxchg(&r->max_inside, &old, in))
		;
	udelay(5);
	atomic_dec(&r->inside);
	return false;
}

static void race_complete(struct pollist_entry *e)
{
}

static int race_thread(void *data)
{
	struct race *r = data;
	struct pollist_session s;
	int i;

	for (i = 0; i < 200; i++) {
		pollist_poll(r->pl, raw_smp_processor_id(), 20 * NSEC_PER_USEC, &s);
		local_irq_enable();
		if (s.outcome == POLLIST_BUSY)
			atomic_inc(&r->busy);
		else
			atomic_inc(&r->sessions);
		cond_resched();
	}
	if (atomic_inc_return(&r->done) == r->threads)
		complete(&r->finished);
	return 0;
}

static void pollist_test_one_poller(struct kunit *test)
{
	struct race *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	int cpu;

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->pl = new_list(test, num_possible_cpus());
	r->entry.poll = race_poll;
	r->entry.complete = race_complete;
	init_completion(&r->finished);
	KUNIT_ASSERT_EQ(test, pollist_add(r->pl, &r->entry), 0);

	r->threads = 2 * num_online_cpus();
	for (cpu = 0; cpu < r->threads; cpu++) {
		struct task_struct *t;

		t = kthread_create(race_thread, r, "pollist-race/%d", cpu);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
		kthread_bind(t, cpumask_nth(cpu % num_online_cpus(), cpu_online_mask));
		wake_up_process(t);
	}
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&r->finished, 60 * HZ), 0UL);

	KUNIT_EXPECT_EQ(test, atomic_read(&r->max_inside), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->sessions) + atomic_read(&r->busy),
			200 * r->threads);
	KUNIT_EXPECT_GT(test, atomic_read(&r->sessions), 0);
	kunit_info(test, "%d sessions, %d found the list busy\n",
		   atomic_read(&r->sessions), atomic_read(&r->busy));

	pollist_del(r->pl, &r->entry);
	pollist_free_list(r->pl);
}

/* Unregistering waits for the CPU that is polling the entry. */
struct unreg {
	struct pollist *pl;
	struct pollist_entry entry;
	struct completion inside;	/* the poller is in poll() */
	struct completion release;	/* poll() may return */
	struct completion polled;	/* the polling session ended */
	struct completion unregistered;	/* pollist_del() returned */
	atomic_t polls;
	bool released;
	bool until_polled;	/* the poller retries until poll() ran */
	bool nosync;		/* unlink, then wait for the pollers */
};

static bool unreg_poll(struct pollist_entry *e)
{
	struct unreg *u = container_of(e, struct unreg, entry);

	if (atomic_inc_return(&u->polls) == 1) {
		complete(&u->inside);
		/* The poller runs under SRCU: it may wait here. */
		wait_for_completion(&u->release);
		WRITE_ONCE(u->released, true);
	}
	return false;
}

static int unreg_poller(void *data)
{
	struct unreg *u = data;
	struct pollist_session s;
	int tries = 0;

	/*
	 * A kthread may be asked for its CPU before the walk reaches the
	 * entry (need_resched() ends a pass): the first poller retries.
	 */
	do {
		pollist_poll(u->pl, 0, NSEC_PER_MSEC, &s);
		local_irq_enable();
		cond_resched();
	} while (u->until_polled && !atomic_read(&u->polls) && ++tries < 1000);
	complete(&u->polled);
	return 0;
}

static int unreg_remover(void *data)
{
	struct unreg *u = data;

	if (u->nosync) {
		/* pollist_unregister_nosync() + pollist_synchronize() */
		pollist_unlink(u->pl, &u->entry);
		pollist_sync(u->pl);
	} else {
		pollist_del(u->pl, &u->entry);
	}
	complete(&u->unregistered);
	return 0;
}

static void unregister_while_polling(struct kunit *test, bool nosync)
{
	struct unreg *u = kunit_kzalloc(test, sizeof(*u), GFP_KERNEL);
	struct task_struct *t;
	int polls;

	KUNIT_ASSERT_NOT_NULL(test, u);
	u->nosync = nosync;
	u->pl = new_list(test, 2);
	u->entry.poll = unreg_poll;
	u->entry.complete = race_complete;
	init_completion(&u->inside);
	init_completion(&u->release);
	init_completion(&u->polled);
	init_completion(&u->unregistered);
	KUNIT_ASSERT_EQ(test, pollist_add(u->pl, &u->entry), 0);

	u->until_polled = true;
	t = kthread_run(unreg_poller, u, "pollist-poller");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&u->inside, 10 * HZ), 0UL);

	t = kthread_run(unreg_remover, u, "pollist-unreg");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* The entry is off the list at once, but the remover must wait. */
	msleep(100);
	KUNIT_EXPECT_FALSE(test, completion_done(&u->unregistered));
	KUNIT_EXPECT_EQ(test, atomic_read(&u->pl->nr_entries), 0);

	complete(&u->release);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&u->unregistered, 10 * HZ), 0UL);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(u->released));
	KUNIT_EXPECT_NULL(test, u->entry.sub);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&u->polled, 10 * HZ), 0UL);

	/* Never polled again. */
	u->until_polled = false;
	polls = atomic_read(&u->polls);
	reinit_completion(&u->polled);
	t = kthread_run(unreg_poller, u, "pollist-poller");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&u->polled, 10 * HZ), 0UL);
	KUNIT_EXPECT_EQ(test, atomic_read(&u->polls), polls);

	pollist_free_list(u->pl);
}

static void pollist_test_unregister_while_polling(struct kunit *test)
{
	unregister_while_polling(test, false);
}

/*
 * The batched form a driver with many entries uses: unlink without
 * waiting, then one grace period, which still waits for the poller.
 */
static void pollist_test_unlink_then_synchronize(struct kunit *test)
{
	unregister_while_polling(test, true);
}

static void pollist_test_adjust(struct kunit *test)
{
	struct pollist_tunables t = {
		.max_ns = 200000, .grow_start_ns = 50000, .grow = 2, .shrink = 2,
	};

	/* From zero: a short idle period starts polling at grow_start. */
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 0, 30000), 50000ULL);
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 0, 300000), 0ULL);
	/* An early hit keeps the window. */
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 100000, 10000), 100000ULL);
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 100000, 50000), 100000ULL);
	/* A hit shortly before the end, or an event soon after it: grow. */
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 50000, 45000), 100000ULL);
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 50000, 90000), 100000ULL);
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 150000, 160000), 200000ULL);
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 200000, 200000), 200000ULL);
	/* Nothing within max: shrink, and below grow_start stop polling. */
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 200000, 5000000), 100000ULL);
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 100000, 5000000), 50000ULL);
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 50000, 5000000), 0ULL);
	t.shrink = 0;
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 200000, 5000000), 0ULL);
	/* grow 1 and shrink 1 pin the window. */
	t.grow = 1;
	t.shrink = 1;
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 100000, 150000), 100000ULL);
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 100000, 5000000), 100000ULL);
	/* grow_start above max: max wins. */
	t.grow_start_ns = 300000;
	KUNIT_EXPECT_EQ(test, pollist_adjust(&t, 0, 100000), 200000ULL);
}

static struct kunit_case pollist_test_cases[] = {
	KUNIT_CASE(pollist_test_spread),
	KUNIT_CASE(pollist_test_register_errors),
	KUNIT_CASE(pollist_test_walk_order),
	KUNIT_CASE(pollist_test_need_resched),
	KUNIT_CASE(pollist_test_work_after_polling),
	KUNIT_CASE(pollist_test_remote_wakeup),
	KUNIT_CASE(pollist_test_owner),
	KUNIT_CASE(pollist_test_one_poller),
	KUNIT_CASE(pollist_test_unregister_while_polling),
	KUNIT_CASE(pollist_test_unlink_then_synchronize),
	KUNIT_CASE(pollist_test_adjust),
	{}
};

static struct kunit_suite pollist_test_suite = {
	.name = "cpuidle_pollist",
	.test_cases = pollist_test_cases,
};

kunit_test_suite(pollist_test_suite);

MODULE_DESCRIPTION("KUnit tests for the cpuidle polling list");
MODULE_LICENSE("GPL");
