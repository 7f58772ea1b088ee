// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep wake IRQs: /sys/power/wake_irq and the check made where
 * kernel/irq accounts every interrupt.
 *
 * Only the IRQs armed here end a nap; any other interrupt runs its handler
 * and the CPUs halt again.  While "pseudo" is the selected mem_sleep state,
 * the first armed IRQ after each read of /sys/power/wakeup_count counts as
 * a wakeup event, so the handshake of a napping daemon refuses to nap once
 * a request has arrived after the count was read.  Further interrupts cost
 * a few loads, a store and a barrier until the count is read again.  With
 * wake_on=task the IRQ's work for user space takes the IRQ's place, in the
 * handshake and in every phase of the nap (pseudosleep_task.c).
 */

#define pr_fmt(fmt) "pseudosleep: " fmt

#include <linux/acpi.h>
#include <linux/bitmap.h>
#include <linux/cpu.h>
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/irqnr.h>
#include <linux/kobject.h>
#include <linux/pm_wakeup.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/suspend.h>
#include <linux/swait.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>

#include "pseudosleep.h"

struct pseudosleep_irqs {
	struct rcu_head rcu;
	unsigned int nbits;
	unsigned long bits[];
};

DEFINE_STATIC_KEY_FALSE(pseudosleep_irq_key);
static struct pseudosleep_irqs __rcu *pseudosleep_armed;
static DEFINE_MUTEX(pseudosleep_armed_lock);

DECLARE_SWAIT_QUEUE_HEAD(pseudosleep_wait);
static struct wakeup_source *pseudosleep_ws;
static atomic_t pseudosleep_woken_flag;
static unsigned int pseudosleep_seen_irq;	/* last armed IRQ seen */
static unsigned int pseudosleep_woken_irq;	/* the IRQ that ended the nap */
/* The next armed IRQ is reported as a wakeup event (wakeup_count read). */
static int pseudosleep_report_armed;
/*
 * Since pseudosleep_count_read_begin(): an armed IRQ arrived (wake_on=irq),
 * or work for user space after one (wake_on=task).
 */
static int pseudosleep_event_seen;

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

/* Callers hold an RCU read lock or run with interrupts off. */
static bool armed_test(const struct pseudosleep_irqs *armed, unsigned int irq)
{
	return armed && irq < armed->nbits && test_bit(irq, armed->bits);
}

bool pseudosleep_irq_armed(unsigned int irq)
{
	bool ret;

	rcu_read_lock();
	ret = armed_test(rcu_dereference(pseudosleep_armed), irq);
	rcu_read_unlock();
	return ret;
}

/* Copy the armed set into @bits (cleared first); returns how many. */
int pseudosleep_copy_armed(unsigned long *bits, unsigned int nbits)
{
	struct pseudosleep_irqs *armed;
	int n = 0;

	bitmap_zero(bits, nbits);
	mutex_lock(&pseudosleep_armed_lock);
	armed = rcu_dereference_protected(pseudosleep_armed,
					  lockdep_is_held(&pseudosleep_armed_lock));
	if (armed) {
		bitmap_copy(bits, armed->bits, min(nbits, armed->nbits));
		n = bitmap_weight(bits, nbits);
	}
	mutex_unlock(&pseudosleep_armed_lock);
	return n;
}

void pseudosleep_wake_reset(void)
{
	pseudosleep_task_reset();
	atomic_set(&pseudosleep_woken_flag, 0);
	WRITE_ONCE(pseudosleep_woken_irq, 0);
}

bool pseudosleep_woken(void)
{
	return atomic_read(&pseudosleep_woken_flag);
}

unsigned int pseudosleep_wake_irq(void)
{
	return READ_ONCE(pseudosleep_woken_irq);
}

/*
 * Wake the suspending task if the CPUs halt; it kicks the other CPUs out of
 * their halt loop.  Any context (hard IRQ under the irq_desc lock, hrtimer,
 * irq_work): only raw locks and O(1) work.
 */
static void pseudosleep_end_halt(void)
{
	if (cmpxchg(&pseudosleep_phase, PSEUDOSLEEP_NAPPING,
		    PSEUDOSLEEP_RESUMING) == PSEUDOSLEEP_NAPPING) {
		swake_up_one(&pseudosleep_wait);
	}
}

/*
 * End the nap on an armed IRQ: record the IRQ with the PM core
 * (pm_wakeup_irq, abort of a suspend still in progress), then wake the
 * halt.  Hard IRQ context under the irq_desc lock, or irq_work.
 */
static void pseudosleep_wake(unsigned int irq)
{
	if (atomic_xchg(&pseudosleep_woken_flag, 1))
		return;
	pseudosleep_times.irq = ktime_get_mono_fast_ns();
	WRITE_ONCE(pseudosleep_woken_irq, irq);
	/* Calls pseudosleep_system_wakeup(), which finds the nap woken. */
	pm_system_irq_wakeup(irq);
	pseudosleep_end_halt();
}

/**
 * pseudosleep_system_wakeup - a system wakeup event ends the nap
 *
 * Called by s2idle_wake(), that is by pm_system_wakeup(): for an IRQ armed
 * with enable_irq_wake() that fires while device IRQs are suspended
 * (irq_pm_check_wakeup()), the ACPI SCI among them during a nap, for an
 * alarm timer coming due, and for pm_wakeup_hard_event().  What ends a
 * suspend to idle ends a nap too.  As in a suspend, events before the
 * tasks are frozen are dropped (the freezer clears the PM core's record
 * of them); later ones that come before the halt are also seen by
 * pm_wakeup_pending() in the device phases.  The IRQ that genirq disabled
 * is enabled again, and its interrupt replayed, by resume_device_irqs() as
 * after any suspend.
 *
 * Context: any; raw locks only.
 */
void pseudosleep_system_wakeup(void)
{
	if (!pseudosleep_in_progress() || !READ_ONCE(pseudosleep_times.frozen) ||
	    atomic_xchg(&pseudosleep_woken_flag, 1))
		return;
	pseudosleep_times.irq = ktime_get_mono_fast_ns();
	WRITE_ONCE(pseudosleep_woken_irq, pm_wakeup_irq());
	pseudosleep_end_halt();
}

#ifdef CONFIG_ACPI
/*
 * The ACPI SCI carries the power button, lid, thermal and embedded
 * controller events.  A suspend to idle arms it for wakeup in the platform
 * hooks a nap does not call; a nap arms it the same way, so that such an
 * event ends the nap and is then handled as usual instead of waiting,
 * suspended, for the next request.
 */
static bool sci_wake_armed;

void pseudosleep_sci_wake_arm(void)
{
	int ret;

	if (!acpi_sci_irq_valid())
		return;
	ret = enable_irq_wake(acpi_sci_irq);
	if (ret)
		pr_warn_once("cannot arm the ACPI SCI for wakeup: %d\n", ret);
	else
		sci_wake_armed = true;
}

void pseudosleep_sci_wake_disarm(void)
{
	if (sci_wake_armed)
		disable_irq_wake(acpi_sci_irq);
	sci_wake_armed = false;
}
#else
void pseudosleep_sci_wake_arm(void) { }
void pseudosleep_sci_wake_disarm(void) { }
#endif

/*
 * The wakeup event for the wakeup_count handshake is reported from irq_work:
 * wakeup sources take a spinlock_t, which must not nest in the raw irq_desc
 * lock held where the IRQ statistics are updated.  If this runs late (a
 * preempted vCPU) and a nap has started meanwhile, the pending event ends it.
 */
static void pseudosleep_event_fn(struct irq_work *work)
{
	if (READ_ONCE(mem_sleep_current) == PM_SUSPEND_PSEUDO)
		pm_wakeup_ws_event(pseudosleep_ws, 0, false);
	if (READ_ONCE(pseudosleep_phase) != PSEUDOSLEEP_IDLE &&
	    pm_wakeup_pending())
		pseudosleep_wake(READ_ONCE(pseudosleep_seen_irq));
}

static DEFINE_IRQ_WORK(pseudosleep_event_work, pseudosleep_event_fn);

/**
 * pseudosleep_count_read_begin - /sys/power/wakeup_count is about to be read
 *
 * Forget the armed IRQs (and with wake_on=task their work) seen so far:
 * those arrived before the count is sampled.  Called before
 * pm_get_wakeup_count().  The handshake assumes one suspend manager: a
 * second reader's read forgets what the first one has not checked yet.
 */
void pseudosleep_count_read_begin(void)
{
	pseudosleep_task_forget_irqs();
	WRITE_ONCE(pseudosleep_event_seen, 0);
	smp_mb();	/* cleared before the count is sampled */
}

/**
 * pseudosleep_count_read_end - /sys/power/wakeup_count was read
 *
 * With "pseudo" selected, make the next armed IRQ (wake_on=task: the next
 * work for a user socket after one) a wakeup event, so that a request
 * arriving after the read makes the count write, or the nap, fail.  One
 * that came between the sample and this call is reported here.
 * Called after pm_get_wakeup_count() succeeded, in process context.
 */
void pseudosleep_count_read_end(void)
{
	if (READ_ONCE(mem_sleep_current) != PM_SUSPEND_PSEUDO) {
		WRITE_ONCE(pseudosleep_report_armed, 0);
		return;
	}
	WRITE_ONCE(pseudosleep_report_armed, 1);
	smp_mb();	/* pairs with smp_mb() in pseudosleep_note_event() */
	if (READ_ONCE(pseudosleep_event_seen) &&
	    xchg(&pseudosleep_report_armed, 0))
		pm_wakeup_ws_event(pseudosleep_ws, 0, false);
}

/**
 * pseudosleep_note_event - what the wakeup_count handshake must see happened
 *
 * An armed IRQ with wake_on=irq, work for user space after one with
 * wake_on=task.  Reported as a wakeup event at most once per read of the
 * count.  Either this sees pseudosleep_report_armed set, or
 * pseudosleep_count_read_end() sees pseudosleep_event_seen set: the
 * store-buffer pattern with a full barrier on each side.
 *
 * Context: any; the event is reported from irq_work.
 */
void pseudosleep_note_event(void)
{
	if (!READ_ONCE(pseudosleep_event_seen))
		WRITE_ONCE(pseudosleep_event_seen, 1);
	smp_mb();	/* pairs with smp_mb() in pseudosleep_count_read_end() */
	if (READ_ONCE(pseudosleep_report_armed) &&
	    xchg(&pseudosleep_report_armed, 0))
		irq_work_queue(&pseudosleep_event_work);
}

/* The check made for every interrupt while some IRQ is armed. */
void __pseudosleep_note_irq(unsigned int irq)
{
	if (!pseudosleep_irq_armed(irq))
		return;
	WRITE_ONCE(pseudosleep_seen_irq, irq);
	/*
	 * wake_on=task: in every phase the IRQ's work decides
	 * (pseudosleep_task.c), and the IRQ is no wakeup event by itself.
	 */
	if (pseudosleep_wake_on_task()) {
		pseudosleep_task_note_irq();
		return;
	}
	pseudosleep_note_event();
	if (READ_ONCE(pseudosleep_phase) != PSEUDOSLEEP_IDLE)
		pseudosleep_wake(irq);
}

/* wake_on=task: an armed IRQ's work is for a user socket. */
void pseudosleep_wake_on_work(void)
{
	pseudosleep_wake(READ_ONCE(pseudosleep_seen_irq));
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

/**
 * pseudosleep_arm - replace the set of armed wake IRQs
 * @bits: the new set, already checked; empty disarms
 * @nbits: size of @bits
 *
 * Return: 0 or -ENOMEM.
 */
int pseudosleep_arm(const unsigned long *bits, unsigned int nbits)
{
	struct pseudosleep_irqs *new = NULL, *old;

	if (!bitmap_empty(bits, nbits)) {
		new = kzalloc(struct_size(new, bits, BITS_TO_LONGS(nbits)),
			      GFP_KERNEL);
		if (!new)
			return -ENOMEM;
		new->nbits = nbits;
		bitmap_copy(new->bits, bits, nbits);
	}
	mutex_lock(&pseudosleep_armed_lock);
	/* Publish before the key turns on; turn the key off before freeing. */
	old = rcu_replace_pointer(pseudosleep_armed, new,
				  lockdep_is_held(&pseudosleep_armed_lock));
	if (new)
		static_branch_enable(&pseudosleep_irq_key);
	else
		static_branch_disable(&pseudosleep_irq_key);
	mutex_unlock(&pseudosleep_armed_lock);
	if (old)
		kfree_rcu(old, rcu);
	return 0;
}

static ssize_t wake_irq_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	struct pseudosleep_irqs *armed;
	ssize_t ret;

	rcu_read_lock();
	armed = rcu_dereference(pseudosleep_armed);
	if (armed)
		ret = sysfs_emit(buf, "%*pbl\n", armed->nbits, armed->bits);
	else
		ret = sysfs_emit(buf, "\n");
	rcu_read_unlock();
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
