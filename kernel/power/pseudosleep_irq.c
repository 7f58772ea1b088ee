// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep wake IRQs: /sys/power/wake_irq and what genirq reports.
 *
 * Only the IRQs armed here end a nap; any other interrupt runs its handler
 * and the CPUs halt again.  The record of what is armed is genirq's own:
 * each IRQ written to wake_irq is marked IRQS_WAKE_HANDLED
 * (irq_set_wake_handled()), and the mark goes with the line's last handler.
 * A marked line is armed (IRQD_WAKEUP_ARMED) by the handshake's arm step
 * (/sys/power/pseudosleep/arm), when a nap starts and when
 * suspend_device_irqs() keeps it on; its next interrupt is reported here
 * by the flow handler's wakeup check and the handler runs.  An unarmed
 * line costs nothing.
 *
 * The first armed IRQ after each arm step counts as a wakeup event, so the
 * wakeup_count handshake of a napping daemon (arm, check, read and write
 * the count, sleep) refuses to nap once a request has arrived after the
 * arm step.  Reading wakeup_count has no side effect.  An armed IRQ that
 * the read has already counted disarms the line, so the nap's start also
 * compares the lines' interrupt counts with the arm step's: any interrupt
 * since then ends the nap before the devices suspend.
 *
 * Besides the armed IRQs, the activation of any wakeup source ends a nap
 * while it is entered or lasts (pseudosleep_ws_activated()): that is how
 * work for a frozen server is seen without arming the NIC, so that the
 * frames the kernel answers on its own (ARP, neighbour solicitations,
 * pings) do not end naps.  A daemon watches the servers' sockets or epoll
 * instances with EPOLLWAKEUP.
 */

#define pr_fmt(fmt) "pseudosleep: " fmt

#include <linux/bitmap.h>
#include <linux/cpu.h>
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/irq.h>
#include <linux/irqnr.h>
#include <linux/kernel_stat.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/pm_wakeup.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/suspend.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>

#include "power.h"
#include "pseudosleep.h"

/* Serializes changes of the marks made through wake_irq. */
static DEFINE_MUTEX(pseudosleep_armed_lock);

static struct wakeup_source *pseudosleep_ws;
static atomic_t pseudosleep_woken_flag;
static unsigned int pseudosleep_seen_irq;	/* last armed IRQ seen */
static unsigned int pseudosleep_woken_irq;	/* the IRQ that ended the nap */
/*
 * The wakeup source that ended the nap, "" if none did; with the phase
 * check and the claim of the nap's end, under pseudosleep_woken_lock, so
 * that a late waker of one nap cannot end the next under its old name.
 */
static char pseudosleep_woken_ws[64];
static DEFINE_RAW_SPINLOCK(pseudosleep_woken_lock);
/* The next armed IRQ is reported as a wakeup event (the arm step). */
static int pseudosleep_report_armed;
/* Since the last arm step: an armed IRQ arrived. */
static int pseudosleep_event_seen;

/*
 * The wake lines' interrupt counts (genirq's statistics) at the arm step,
 * for the nap that follows it.  The arm step reports only the first armed
 * IRQ.  When that one comes before the wakeup_count read, the read counts
 * it and the line is disarmed, so a request arriving between the read and
 * the nap would make no event; the nap's start compares these counts
 * instead, at no cost to the interrupt path.  Under pseudosleep_armed_lock.
 */
struct arm_counts {
	unsigned int nr;
	struct {
		unsigned int irq;
		unsigned int count;
	} line[];
};

static struct arm_counts *pseudosleep_arm_counts;

/**
 * pseudosleep_parse_irqs - parse and check a list of wake IRQs
 * @buf: a kernel list ("24", "24,25", "30-32"); blank clears
 * @bits: bitmap of @nbits bits that receives the list
 * @nbits: number of IRQ numbers that exist (nr_irqs)
 * @usable: tells whether an IRQ exists and has a handler
 *
 * Return: 0, -ERANGE for a number past the last IRQ, -EINVAL for anything
 * else that is not a list of IRQs with handlers.
 */
int pseudosleep_parse_irqs(const char *buf, unsigned long *bits,
			   unsigned int nbits, bool (*usable)(unsigned int irq))
{
	unsigned int irq;
	int ret;

	ret = bitmap_parselist(buf, bits, nbits);
	if (ret)
		return ret == -ERANGE ? -ERANGE : -EINVAL;
	for_each_set_bit(irq, bits, nbits)
		if (!usable(irq))
			return -EINVAL;
	return 0;
}

/**
 * pseudosleep_irq_armed - is an IRQ one of the wake IRQs
 * @irq: Linux IRQ number
 *
 * Return: true if @irq is marked wake-handled (written to wake_irq).
 */
bool pseudosleep_irq_armed(unsigned int irq)
{
	return irq_wake_handled(irq);
}

/* copy_armed() without the lock, for pseudosleep_arm(). */
static int copy_marked(unsigned long *bits, unsigned int nbits)
{
	unsigned int irq;
	int n = 0;

	bitmap_zero(bits, nbits);
	for_each_active_irq(irq) {
		if (irq < nbits && irq_wake_handled(irq)) {
			__set_bit(irq, bits);
			n++;
		}
	}
	return n;
}

/* Copy the armed set into @bits (cleared first); returns how many. */
int pseudosleep_copy_armed(unsigned long *bits, unsigned int nbits)
{
	guard(mutex)(&pseudosleep_armed_lock);
	return copy_marked(bits, nbits);
}

void pseudosleep_wake_reset(void)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&pseudosleep_woken_lock, flags);
	atomic_set(&pseudosleep_woken_flag, 0);
	WRITE_ONCE(pseudosleep_woken_irq, 0);
	pseudosleep_woken_ws[0] = '\0';
	raw_spin_unlock_irqrestore(&pseudosleep_woken_lock, flags);
}

bool pseudosleep_woken(void)
{
	return atomic_read(&pseudosleep_woken_flag);
}

unsigned int pseudosleep_wake_irq(void)
{
	return READ_ONCE(pseudosleep_woken_irq);
}

/* Copy the name of the wakeup source that ended the nap ("" if none). */
void pseudosleep_wake_source(char *buf, size_t len)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&pseudosleep_woken_lock, flags);
	strscpy(buf, pseudosleep_woken_ws, len);
	raw_spin_unlock_irqrestore(&pseudosleep_woken_lock, flags);
}

/*
 * Claim the end of the nap for an armed IRQ (@name NULL: in any phase of
 * the nap) or a wakeup source (@name: while it is entered or its CPUs
 * idle), and record it.  Under pseudosleep_woken_lock, with the phase
 * check, so that a late waker of one nap cannot end the next.
 */
static bool claim_wake(unsigned int irq, const char *name)
{
	enum pseudosleep_phase phase;
	bool in_time, first = false;
	unsigned long flags;

	raw_spin_lock_irqsave(&pseudosleep_woken_lock, flags);
	phase = READ_ONCE(pseudosleep_phase);
	if (name)
		in_time = phase == PSEUDOSLEEP_ENTERING ||
			  phase == PSEUDOSLEEP_NAPPING;
	else
		in_time = phase != PSEUDOSLEEP_IDLE;
	if (in_time && !atomic_xchg(&pseudosleep_woken_flag, 1)) {
		first = true;
		pseudosleep_times.irq = ktime_get_mono_fast_ns();
		WRITE_ONCE(pseudosleep_woken_irq, irq);
		strscpy(pseudosleep_woken_ws, name ?: "",
			sizeof(pseudosleep_woken_ws));
	}
	raw_spin_unlock_irqrestore(&pseudosleep_woken_lock, flags);
	return first;
}

/*
 * End the nap on an armed IRQ: record the IRQ with the PM core
 * (pm_wakeup_irq(), the abort of a suspend still in progress), which wakes
 * s2idle_enter() through s2idle_wake() as any system wakeup does.
 * Context: hard IRQ under the irq_desc lock, irq_work, or the nap's start
 * in process context (pseudosleep_check_arm_counts()).
 */
static void pseudosleep_wake(unsigned int irq)
{
	if (claim_wake(irq, NULL))
		pm_system_irq_wakeup(irq);
}

/*
 * The wakeup event for the wakeup_count handshake is reported from irq_work:
 * wakeup sources take a spinlock_t, which must not nest in the raw irq_desc
 * lock held where the IRQ statistics are updated.  If this runs late (a
 * preempted vCPU) and a nap has started meanwhile, the pending event ends it.
 */
static void pseudosleep_event_fn(struct irq_work *work)
{
	if (pm_mem_sleep_pseudo())
		pm_wakeup_ws_event(pseudosleep_ws, 0, false);
	if (READ_ONCE(pseudosleep_phase) != PSEUDOSLEEP_IDLE &&
	    pm_wakeup_pending())
		pseudosleep_wake(READ_ONCE(pseudosleep_seen_irq));
}

static DEFINE_IRQ_WORK(pseudosleep_event_work, pseudosleep_event_fn);

/* Replace the arm step's counts; under pseudosleep_armed_lock. */
static void set_arm_counts(struct arm_counts *c)
{
	kfree(pseudosleep_arm_counts);
	pseudosleep_arm_counts = c;
}

/* The arm step's counts of the wake lines.  Return: 0 or -ENOMEM. */
static int take_arm_counts(void)
{
	unsigned int irq, n = 0;
	struct arm_counts *c;

	guard(mutex)(&pseudosleep_armed_lock);
	for_each_active_irq(irq)
		n += irq_wake_handled(irq);
	c = kzalloc(struct_size(c, line, n), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	for_each_active_irq(irq) {
		if (c->nr == n)
			break;
		if (!irq_wake_handled(irq))
			continue;
		c->line[c->nr].irq = irq;
		c->line[c->nr].count = kstat_irqs_usr(irq);
		c->nr++;
	}
	set_arm_counts(c);
	return 0;
}

/**
 * pseudosleep_check_arm_counts - end a nap that a wake IRQ has outrun
 *
 * Called by pseudosleep_begin() once the lines are armed: an interrupt
 * counted before the arm took a line's lock is seen here, and one that
 * takes it after finds the line armed and is reported.  genirq does not
 * count an interrupt that arrives while the handler runs on another CPU
 * (replayed or dropped by that CPU's flow handler); such an interrupt can
 * still go unseen if it is also the one that disarmed the line, which
 * takes a handler running across the whole handshake.
 *
 * If the nap follows the wakeup_count handshake (events_check_enabled) and
 * a wake line has taken an interrupt since the arm step, the request it
 * brought may be one the check of the servers did not see: the nap's end
 * is claimed for it, and the nap stops before the devices suspend.  A
 * line genirq no longer marks is skipped: it is no wake line any more.
 * Either its last handler went, and its number may belong to another
 * device now (a driver that reallocated its vectors), or it became shared
 * (wake_irq_dropped counts both).  The counts serve one nap.
 *
 * Context: process context (the nap's start), with the wake lines armed.
 */
void pseudosleep_check_arm_counts(void)
{
	bool check = READ_ONCE(events_check_enabled);
	unsigned int i, irq = 0;
	struct arm_counts *c;

	/* Under the lock: a wake_irq write would change the marks. */
	scoped_guard(mutex, &pseudosleep_armed_lock) {
		c = pseudosleep_arm_counts;
		pseudosleep_arm_counts = NULL;
		for (i = 0; check && c && i < c->nr && !irq; i++)
			if (irq_wake_handled(c->line[i].irq) &&
			    kstat_irqs_usr(c->line[i].irq) != c->line[i].count)
				irq = c->line[i].irq;
	}
	kfree(c);
	if (irq)
		pseudosleep_wake(irq);
}

/**
 * pseudosleep_report_arm - the handshake's arm step
 *
 * Forget the armed IRQs seen so far: the caller's check of its servers,
 * which comes next, sees their requests.  With "pseudo" selected, arm the
 * wake IRQs' lines and make the next armed IRQ a wakeup event, so that a
 * request arriving from now on makes the wakeup_count write, or the nap,
 * fail.  One that came while arming is
 * reported here.  The handshake assumes one suspend manager: a second
 * one's arm forgets what the first one has not checked yet.
 *
 * Return: 0, -EINVAL when "pseudo" is not selected, or -ENOMEM when the
 * wake lines' counts cannot be kept.  A failed step arms nothing, reports
 * nothing and drops the previous step's counts; lines that step armed
 * stay armed until their next interrupt.
 */
int pseudosleep_report_arm(void)
{
	int ret;

	WRITE_ONCE(pseudosleep_event_seen, 0);
	ret = pm_mem_sleep_pseudo() ? take_arm_counts() : -EINVAL;
	if (ret) {
		/* The nap that follows is not the previous step's handshake. */
		WRITE_ONCE(pseudosleep_report_armed, 0);
		scoped_guard(mutex, &pseudosleep_armed_lock)
			set_arm_counts(NULL);
		return ret;
	}
	irq_wake_handled_arm();
	WRITE_ONCE(pseudosleep_report_armed, 1);
	smp_mb();	/* pairs with smp_mb() in pseudosleep_note_event() */
	if (READ_ONCE(pseudosleep_event_seen) &&
	    xchg(&pseudosleep_report_armed, 0))
		pm_wakeup_ws_event(pseudosleep_ws, 0, false);
	return 0;
}

/* /sys/power/pseudosleep/arm: "1" is the arm step of the handshake. */
static ssize_t arm_store(struct kobject *kobj, struct kobj_attribute *attr,
			 const char *buf, size_t n)
{
	int ret;

	if (!sysfs_streq(buf, "1"))
		return -EINVAL;
	ret = pseudosleep_report_arm();
	return ret ? ret : n;
}

struct kobj_attribute pseudosleep_arm_attr = __ATTR_WO(arm);

/**
 * pseudosleep_note_event - what the wakeup_count handshake must see happened
 *
 * An armed IRQ.  Reported as a wakeup event at most once per arm step.
 * Either this sees pseudosleep_report_armed set, or
 * pseudosleep_report_arm() sees pseudosleep_event_seen set: the
 * store-buffer pattern with a full barrier on each side.
 *
 * Context: any; the event is reported from irq_work.
 */
void pseudosleep_note_event(void)
{
	if (!READ_ONCE(pseudosleep_event_seen))
		WRITE_ONCE(pseudosleep_event_seen, 1);
	smp_mb();	/* pairs with smp_mb() in pseudosleep_report_arm() */
	if (READ_ONCE(pseudosleep_report_armed) &&
	    xchg(&pseudosleep_report_armed, 0))
		irq_work_queue(&pseudosleep_event_work);
}

/**
 * pseudosleep_irq_hit - an armed wake IRQ fired
 * @irq: Linux IRQ number
 *
 * Called by genirq's wakeup check (irq_pm_check_wakeup()) for an armed
 * IRQS_WAKE_HANDLED line, in hard IRQ context under the irq_desc lock,
 * before the handler runs.  The line is disarmed already.
 */
void pseudosleep_irq_hit(unsigned int irq)
{
	WRITE_ONCE(pseudosleep_seen_irq, irq);
	pseudosleep_note_event();
	if (READ_ONCE(pseudosleep_phase) != PSEUDOSLEEP_IDLE)
		pseudosleep_wake(irq);
}

/**
 * __pseudosleep_ws_activated - a wakeup source became active during a nap
 * @ws: the wakeup source, marked with wakeup_source_set_ends_nap()
 *
 * While the nap is entered or its CPUs idle, end it as a hard wakeup does
 * (pm_system_wakeup(): the abort of the entry, s2idle_wake() in the idle
 * loop) and record the source.  Once woken, resuming devices may report
 * wakeup events of their own: the nap is ending anyway.
 *
 * Context: called through pseudosleep_ws_activated() by
 * wakeup_source_activate(), under @ws->lock with interrupts off, possibly
 * within an epoll or wait queue lock.
 */
void __pseudosleep_ws_activated(struct wakeup_source *ws)
{
	if (claim_wake(0, ws->name ?: ""))
		pm_system_wakeup();
}

/**
 * pseudosleep_ws_pending - is work waiting that should end a nap
 *
 * A wakeup source marked to end naps that became active before the nap
 * started (the daemon's EPOLLWAKEUP item on a server's socket) is not
 * seen again: only its activation is.  Without the wakeup_count handshake
 * nothing else would stop the nap.  The first such source found claims
 * the attempt, for last_wake_source.
 *
 * Return: true if such a source is active.
 */
bool pseudosleep_ws_pending(void)
{
	struct wakeup_source *ws;
	unsigned long flags;
	bool active = false;
	int idx;

	idx = wakeup_sources_read_lock();
	for_each_wakeup_source(ws) {
		spin_lock_irqsave(&ws->lock, flags);
		active = ws->ends_nap && ws->active;
		/* It aborts the entry: last_wake_source names it. */
		if (active)
			claim_wake(0, ws->name ?: "");
		spin_unlock_irqrestore(&ws->lock, flags);
		if (active)
			break;
	}
	wakeup_sources_read_unlock(idx);
	return active;
}

#if IS_ENABLED(CONFIG_PM_PSEUDOSLEEP_KUNIT_TEST)
/* The wakeup events the handshake reported, for the KUnit tests. */
unsigned long pseudosleep_ws_events(void)
{
	return READ_ONCE(pseudosleep_ws->event_count);
}
#endif

static bool irq_usable(unsigned int irq)
{
	return irq_has_action(irq);
}

/* Mark or unmark every active IRQ as @bits says; 0 or the first error. */
static int mark_irqs(const unsigned long *bits, unsigned int nbits, bool on)
{
	unsigned int irq;
	int ret;

	for_each_active_irq(irq) {
		if ((irq < nbits && test_bit(irq, bits)) != on ||
		    pseudosleep_irq_armed(irq) == on)
			continue;
		ret = irq_set_wake_handled(irq, on);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * pseudosleep_arm - replace the set of armed wake IRQs
 * @bits: the new set, already checked; empty disarms
 * @nbits: size of @bits
 *
 * Return: 0, or -EINVAL if an IRQ lost its handler meanwhile (then the
 * set is what it was, but for IRQs that lost theirs).
 */
int pseudosleep_arm(const unsigned long *bits, unsigned int nbits)
{
	unsigned long *old;
	int ret;

	old = bitmap_zalloc(nr_irqs, GFP_KERNEL);
	if (!old)
		return -ENOMEM;
	mutex_lock(&pseudosleep_armed_lock);
	set_arm_counts(NULL);	/* counted for another set of lines */
	copy_marked(old, nr_irqs);
	ret = mark_irqs(bits, nbits, true);
	if (ret) {
		mark_irqs(old, nr_irqs, false);	/* unmark what is not in @old */
		mark_irqs(old, nr_irqs, true);
	} else {
		mark_irqs(bits, nbits, false);
	}
	mutex_unlock(&pseudosleep_armed_lock);
	bitmap_free(old);
	return ret;
}

/* genirq's marks are the record: an IRQ whose handler went is gone. */
static ssize_t wake_irq_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	unsigned int nbits = nr_irqs;
	unsigned long *bits;
	ssize_t ret;

	bits = bitmap_zalloc(nbits, GFP_KERNEL);
	if (!bits)
		return -ENOMEM;
	if (pseudosleep_copy_armed(bits, nbits))
		ret = sysfs_emit(buf, "%*pbl\n", nbits, bits);
	else
		ret = sysfs_emit(buf, "\n");
	bitmap_free(bits);
	return ret;
}

static ssize_t wake_irq_store(struct kobject *kobj, struct kobj_attribute *attr,
			      const char *buf, size_t n)
{
	unsigned int nbits = nr_irqs;
	unsigned long *bits;
	int ret;

	bits = bitmap_zalloc(nbits, GFP_KERNEL);
	if (!bits)
		return -ENOMEM;
	ret = pseudosleep_parse_irqs(buf, bits, nbits, irq_usable);
	if (!ret)
		ret = pseudosleep_arm(bits, nbits);
	bitmap_free(bits);
	return ret ? ret : n;
}

static struct kobj_attribute wake_irq_attr = __ATTR_RW(wake_irq);

int __init pseudosleep_irq_init(void)
{
	pseudosleep_ws = wakeup_source_register(NULL, "pseudosleep");
	if (!pseudosleep_ws)
		return -ENOMEM;
	return sysfs_create_file(power_kobj, &wake_irq_attr.attr);
}
