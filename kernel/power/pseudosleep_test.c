// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the logic of pseudo-sleep: the wake IRQ list, the strict
 * boolean of power/nosleep, how an interrupt is recorded against the armed
 * set in each phase of a nap, which devices a nap keeps awake and which it
 * leaves out of the device phases.
 */

#include <kunit/device.h>
#include <kunit/platform_device.h>
#include <kunit/test-bug.h>
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/device.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>
#include <linux/platform_device.h>
#include <linux/property.h>
#include <linux/pm_runtime.h>
#include <linux/slab.h>
#include <linux/suspend.h>
#include <linux/pm_wakeup.h>

#include "power.h"
#include "pseudosleep.h"

#define NBITS 64

static bool usable_but_7(unsigned int irq)
{
	return irq != 7;
}

static int parse(const char *buf, unsigned long *bits)
{
	return pseudosleep_parse_irqs(buf, bits, NBITS, usable_but_7);
}

static void parse_irqs_good(struct kunit *test)
{
	DECLARE_BITMAP(bits, NBITS);
	DECLARE_BITMAP(want, NBITS);

	KUNIT_EXPECT_EQ(test, parse("24", bits), 0);
	bitmap_zero(want, NBITS);
	__set_bit(24, want);
	KUNIT_EXPECT_TRUE(test, bitmap_equal(bits, want, NBITS));

	KUNIT_EXPECT_EQ(test, parse("24,25\n", bits), 0);
	__set_bit(25, want);
	KUNIT_EXPECT_TRUE(test, bitmap_equal(bits, want, NBITS));

	KUNIT_EXPECT_EQ(test, parse("30-32", bits), 0);
	KUNIT_EXPECT_EQ(test, bitmap_weight(bits, NBITS), 3);
	KUNIT_EXPECT_TRUE(test, test_bit(30, bits) && test_bit(32, bits));

	KUNIT_EXPECT_EQ(test, parse("", bits), 0);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(bits, NBITS));
	KUNIT_EXPECT_EQ(test, parse("\n", bits), 0);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(bits, NBITS));
}

static void parse_irqs_bad(struct kunit *test)
{
	static const char * const einval[] = {
		"abc", "-1", "5-3", "1,,x", "24;25", "0x18", "7", "6-8",
		"1.5", "3-", "--", "all,x",
	};
	DECLARE_BITMAP(bits, NBITS);
	int i;

	for (i = 0; i < ARRAY_SIZE(einval); i++)
		KUNIT_EXPECT_EQ_MSG(test, parse(einval[i], bits), -EINVAL,
				    "input \"%s\"", einval[i]);
	KUNIT_EXPECT_EQ(test, parse("64", bits), -ERANGE);
	KUNIT_EXPECT_EQ(test, parse("60-70", bits), -ERANGE);
	KUNIT_EXPECT_NE(test, parse("99999999999999999999", bits), 0);
}

static void parse_bool(struct kunit *test)
{
	static const char * const yes[] = { "1", "y", "Y", "yes", "on",
					    "true", "1\n" };
	static const char * const no[] = { "0", "n", "N", "no", "off",
					   "false", "0\n" };
	static const char * const bad[] = { "", "2", "10", "-1", "yellow",
					    "of", "1 1", "01", "nope" };
	bool val;
	int i;

	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		val = false;
		KUNIT_EXPECT_EQ(test, pseudosleep_parse_bool(yes[i], &val), 0);
		KUNIT_EXPECT_TRUE_MSG(test, val, "input \"%s\"", yes[i]);
	}
	for (i = 0; i < ARRAY_SIZE(no); i++) {
		val = true;
		KUNIT_EXPECT_EQ(test, pseudosleep_parse_bool(no[i], &val), 0);
		KUNIT_EXPECT_FALSE_MSG(test, val, "input \"%s\"", no[i]);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, pseudosleep_parse_bool(bad[i], &val),
				    -EINVAL, "input \"%s\"", bad[i]);
}

/*
 * Real interrupt lines for the tests: descriptors of our own on genirq's
 * dummy chip, with a handler that counts, raised with
 * generic_handle_irq_safe() as a demultiplexing driver raises its
 * children's.  The flow handler runs genirq's wakeup check as for a
 * device's interrupt, so what is tested is the path a NIC's takes.
 */
struct wake_line {
	unsigned int irq;
	atomic_t handled;
};

static irqreturn_t count_handler(int irq, void *data)
{
	struct wake_line *t = data;

	atomic_inc(&t->handled);
	return IRQ_HANDLED;
}

static void free_wake_line(void *data)
{
	struct wake_line *t = data;

	irq_set_wake_handled(t->irq, false);
	if (irq_has_action(t->irq))
		free_irq(t->irq, t);
	irq_free_desc(t->irq);
}

static struct wake_line *wake_line(struct kunit *test)
{
	struct wake_line *t;
	int irq;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	irq = irq_alloc_desc(NUMA_NO_NODE);
	KUNIT_ASSERT_GE(test, irq, 0);
	t->irq = irq;
	irq_set_chip_and_handler(irq, &dummy_irq_chip, handle_simple_irq);
	KUNIT_ASSERT_EQ(test, request_irq(irq, count_handler, 0,
					  "pseudosleep-kunit", t), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, free_wake_line, t),
			0);
	return t;
}

static void raise_irq(struct wake_line *t)
{
	KUNIT_ASSERT_EQ(kunit_get_current_test(), generic_handle_irq_safe(t->irq),
			0);
}

static bool line_armed(struct wake_line *t)
{
	return irqd_is_wakeup_armed(irq_get_irq_data(t->irq));
}

/* A bitmap as large as the IRQ space, freed with the test. */
static unsigned long *irq_bitmap(struct kunit *test)
{
	unsigned long *bits;

	bits = kunit_kcalloc(test, BITS_TO_LONGS(nr_irqs), sizeof(long),
			     GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bits);
	return bits;
}

static void arm_and_record(struct kunit *test)
{
	struct wake_line *a = wake_line(test), *b = wake_line(test);
	unsigned long *bits = irq_bitmap(test), *saved = irq_bitmap(test);
	suspend_state_t saved_mem_sleep;
	unsigned long events;
	bool saved_pseudo;

	pseudosleep_copy_armed(saved, nr_irqs);
	__set_bit(a->irq, bits);
	KUNIT_ASSERT_EQ(test, pseudosleep_arm(bits, nr_irqs), 0);
	KUNIT_EXPECT_TRUE(test, pseudosleep_irq_armed(a->irq));
	KUNIT_EXPECT_FALSE(test, pseudosleep_irq_armed(b->irq));
	KUNIT_EXPECT_FALSE(test, line_armed(a));

	/* Marked but not armed: the handler runs, nothing is recorded. */
	pseudosleep_wake_reset();
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_IDLE);
	raise_irq(a);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->handled), 1);
	KUNIT_EXPECT_FALSE(test, pseudosleep_woken());

	/*
	 * The handshake's arm step with pseudo selected, awake: the first
	 * armed IRQ is one wakeup event and ends nothing; the line disarms,
	 * so the next one is not even seen.
	 */
	saved_mem_sleep = mem_sleep_current;
	saved_pseudo = mem_sleep_pseudo;
	WRITE_ONCE(mem_sleep_current, PM_SUSPEND_TO_IDLE);
	WRITE_ONCE(mem_sleep_pseudo, true);
	KUNIT_EXPECT_EQ(test, pseudosleep_report_arm(), 0);
	KUNIT_EXPECT_TRUE(test, line_armed(a));
	KUNIT_EXPECT_FALSE(test, line_armed(b));
	events = pseudosleep_ws_events();
	raise_irq(a);
	KUNIT_EXPECT_FALSE(test, line_armed(a));
	raise_irq(a);
	usleep_range(20000, 30000);
	KUNIT_EXPECT_EQ(test, pseudosleep_ws_events(), events + 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->handled), 3);
	KUNIT_EXPECT_FALSE(test, pseudosleep_woken());
	WRITE_ONCE(mem_sleep_pseudo, saved_pseudo);
	WRITE_ONCE(mem_sleep_current, saved_mem_sleep);
	KUNIT_EXPECT_EQ(test, pseudosleep_report_arm(), -EINVAL);

	/* Entering: another IRQ is served, the armed one is recorded too. */
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_ENTERING);
	irq_wake_handled_arm();
	raise_irq(b);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->handled), 1);
	KUNIT_EXPECT_FALSE(test, pseudosleep_woken());
	raise_irq(a);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->handled), 4);
	KUNIT_EXPECT_TRUE(test, pseudosleep_woken());
	KUNIT_EXPECT_EQ(test, pseudosleep_wake_irq(), a->irq);
	KUNIT_EXPECT_EQ(test, READ_ONCE(pseudosleep_phase),
			PSEUDOSLEEP_ENTERING);

	/* Napping: the armed IRQ ends the nap; every interrupt is served. */
	pseudosleep_wake_reset();
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_NAPPING);
	irq_wake_handled_arm();
	raise_irq(b);
	KUNIT_EXPECT_FALSE(test, pseudosleep_woken());
	raise_irq(a);
	raise_irq(a);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->handled), 6);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->handled), 2);
	KUNIT_EXPECT_TRUE(test, pseudosleep_woken());
	KUNIT_EXPECT_EQ(test, pseudosleep_wake_irq(), a->irq);

	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_IDLE);
	pseudosleep_wake_reset();

	/* Disarming removes the mark. */
	bitmap_zero(bits, nr_irqs);
	KUNIT_EXPECT_EQ(test, pseudosleep_arm(bits, nr_irqs), 0);
	KUNIT_EXPECT_FALSE(test, pseudosleep_irq_armed(a->irq));
	pseudosleep_arm(saved, nr_irqs);
}

/*
 * The arm belongs to the handler: freeing the line's last handler (a
 * driver reallocating its vectors) drops the mark and counts it, and a new
 * handler on the same number is not armed.  A line without a handler
 * cannot be marked.
 */
static void mark_goes_with_handler(struct kunit *test)
{
	struct wake_line *a = wake_line(test);
	unsigned long dropped = irq_wake_handled_dropped();

	KUNIT_ASSERT_EQ(test, irq_set_wake_handled(a->irq, true), 0);
	irq_wake_handled_arm();
	free_irq(a->irq, a);
	KUNIT_EXPECT_FALSE(test, pseudosleep_irq_armed(a->irq));
	KUNIT_EXPECT_FALSE(test, line_armed(a));
	KUNIT_EXPECT_EQ(test, irq_wake_handled_dropped(), dropped + 1);
	KUNIT_EXPECT_EQ(test, irq_set_wake_handled(a->irq, true), -EINVAL);

	KUNIT_ASSERT_EQ(test, request_irq(a->irq, count_handler, 0,
					  "pseudosleep-kunit", a), 0);
	KUNIT_EXPECT_FALSE(test, pseudosleep_irq_armed(a->irq));
	raise_irq(a);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->handled), 1);
	KUNIT_EXPECT_EQ(test, irq_wake_handled_dropped(), dropped + 1);
}

/* The nap's phase as a test set it, put back when the test ends. */
static void restore_phase(void *data)
{
	WRITE_ONCE(pseudosleep_phase, (enum pseudosleep_phase)(long)data);
	pseudosleep_wake_reset();
}

static void save_phase(struct kunit *test)
{
	void *phase = (void *)(long)READ_ONCE(pseudosleep_phase);

	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, restore_phase, phase),
			0);
}

static void free_shared_desc(void *data)
{
	irq_free_desc((unsigned long)data);
}

static void free_shared_action(void *data)
{
	struct wake_line *t = data;

	free_irq(t->irq, t);
}

/* Another handler on @t's line, freed with the test. */
static void share_line(struct kunit *test, struct wake_line *t,
		       const char *name)
{
	KUNIT_ASSERT_EQ(test, request_irq(t->irq, count_handler, IRQF_SHARED,
					  name, t), 0);
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, free_shared_action, t),
			0);
}

/*
 * A shared line with two handlers cannot be marked: the wakeup check runs
 * before the handlers and would take a sharer's interrupt for the marked
 * device's.  A marked line that gains a sharer loses its mark, counted,
 * and a sharer's interrupt then ends nothing.
 */
static void shared_line_not_marked(struct kunit *test)
{
	unsigned long dropped = irq_wake_handled_dropped();
	struct wake_line *a, *b;
	void *desc;
	int irq;

	save_phase(test);
	a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	irq = irq_alloc_desc(NUMA_NO_NODE);
	KUNIT_ASSERT_GE(test, irq, 0);
	desc = (void *)(unsigned long)irq;
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, free_shared_desc, desc),
			0);
	a->irq = irq;
	b->irq = irq;
	irq_set_chip_and_handler(irq, &dummy_irq_chip, handle_simple_irq);
	share_line(test, a, "pseudosleep-kunit-a");
	KUNIT_EXPECT_EQ(test, irq_set_wake_handled(irq, true), 0);
	share_line(test, b, "pseudosleep-kunit-b");
	KUNIT_EXPECT_FALSE(test, pseudosleep_irq_armed(irq));
	KUNIT_EXPECT_EQ(test, irq_wake_handled_dropped(), dropped + 1);
	KUNIT_EXPECT_EQ(test, irq_set_wake_handled(irq, true), -EINVAL);

	pseudosleep_wake_reset();
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_NAPPING);
	irq_wake_handled_arm();
	raise_irq(b);
	KUNIT_EXPECT_FALSE(test, pseudosleep_woken());
	KUNIT_EXPECT_EQ(test, atomic_read(&a->handled), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->handled), 1);
}

/*
 * The nap's check of the arm step's counts, after the wakeup_count
 * handshake: a wake line that took an interrupt since the step fails the
 * nap and names the line, even when its report was spent on an earlier
 * one; a line genirq unmarked meanwhile (its handler freed, the number
 * reused) is no wake line any more and is not compared.
 */
static void arm_counts_checked(struct kunit *test)
{
	struct wake_line *a = wake_line(test);
	unsigned long *bits = irq_bitmap(test), *saved = irq_bitmap(test);
	suspend_state_t saved_mem_sleep = mem_sleep_current;
	bool saved_pseudo = mem_sleep_pseudo;
	bool saved_check = events_check_enabled;

	save_phase(test);
	pseudosleep_copy_armed(saved, nr_irqs);
	__set_bit(a->irq, bits);
	KUNIT_ASSERT_EQ(test, pseudosleep_arm(bits, nr_irqs), 0);
	WRITE_ONCE(mem_sleep_current, PM_SUSPEND_TO_IDLE);
	WRITE_ONCE(mem_sleep_pseudo, true);

	/* Two requests after the arm step: only the first is an event. */
	KUNIT_EXPECT_EQ(test, pseudosleep_report_arm(), 0);
	raise_irq(a);
	raise_irq(a);
	usleep_range(20000, 30000);	/* the first one's event is reported */
	WRITE_ONCE(events_check_enabled, true);
	pseudosleep_wake_reset();
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_ENTERING);
	pseudosleep_check_arm_counts();
	KUNIT_EXPECT_TRUE(test, pseudosleep_woken());
	KUNIT_EXPECT_EQ(test, pseudosleep_wake_irq(), a->irq);

	/* The handler goes and a new one comes on the same number. */
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_IDLE);
	KUNIT_EXPECT_EQ(test, pseudosleep_report_arm(), 0);
	free_irq(a->irq, a);
	KUNIT_ASSERT_EQ(test, request_irq(a->irq, count_handler, 0,
					  "pseudosleep-kunit", a), 0);
	raise_irq(a);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->handled), 3);
	WRITE_ONCE(events_check_enabled, true);
	pseudosleep_wake_reset();
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_ENTERING);
	pseudosleep_check_arm_counts();
	KUNIT_EXPECT_FALSE(test, pseudosleep_woken());

	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_IDLE);
	WRITE_ONCE(events_check_enabled, saved_check);
	WRITE_ONCE(mem_sleep_pseudo, saved_pseudo);
	WRITE_ONCE(mem_sleep_current, saved_mem_sleep);
	/* Refused with pseudo not selected: the report is off again. */
	KUNIT_EXPECT_EQ(test, pseudosleep_report_arm(), -EINVAL);
	pseudosleep_arm(saved, nr_irqs);
}

static void free_ws(void *data)
{
	wakeup_source_unregister(data);
}

/* A wakeup source freed with the test, marked to end naps if @ends_nap. */
static struct wakeup_source *test_ws(struct kunit *test, const char *name,
				     bool ends_nap)
{
	struct wakeup_source *ws = wakeup_source_register(NULL, name);

	KUNIT_ASSERT_NOT_NULL(test, ws);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, free_ws, ws), 0);
	if (ends_nap)
		wakeup_source_set_ends_nap(ws);
	return ws;
}

/*
 * A marked wakeup source's activation ends a nap while it is entered or
 * its CPUs idle, as a hard wakeup: the PM core's abort, and the source's
 * name recorded.  Awake, or once the nap is resuming, it only counts, as
 * upstream; an unmarked source's soft event ends nothing; only the
 * inactive-to-active transition is seen; an active marked source makes
 * the entry fail.
 */
static void ws_activation_ends_nap(struct kunit *test)
{
	static const enum pseudosleep_phase ending[] = {
		PSEUDOSLEEP_ENTERING, PSEUDOSLEEP_NAPPING,
	};
	struct wakeup_source *ws, *plain;
	char name[64];
	int i;

	save_phase(test);
	ws = test_ws(test, "pseudosleep-kunit-ws", true);
	plain = test_ws(test, "pseudosleep-kunit-plain", false);

	pm_wakeup_clear(0);
	pseudosleep_wake_reset();
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_IDLE);
	__pm_stay_awake(ws);
	KUNIT_EXPECT_TRUE(test, pseudosleep_ws_pending());
	__pm_relax(ws);
	KUNIT_EXPECT_FALSE(test, pseudosleep_ws_pending());
	KUNIT_EXPECT_FALSE(test, pseudosleep_woken());
	KUNIT_EXPECT_FALSE(test, pm_wakeup_pending());

	for (i = 0; i < ARRAY_SIZE(ending); i++) {
		pseudosleep_wake_reset();
		WRITE_ONCE(pseudosleep_phase, ending[i]);
		pm_wakeup_ws_event(plain, 0, false);
		KUNIT_EXPECT_FALSE(test, pseudosleep_woken());
		__pm_stay_awake(ws);
		KUNIT_EXPECT_TRUE(test, pseudosleep_woken());
		KUNIT_EXPECT_TRUE(test, pm_wakeup_pending());
		pseudosleep_wake_source(name, sizeof(name));
		KUNIT_EXPECT_STREQ(test, name, "pseudosleep-kunit-ws");
		KUNIT_EXPECT_EQ(test, pseudosleep_wake_irq(), 0u);
		pm_wakeup_clear(0);
		/* Already active: no transition, nothing new. */
		pseudosleep_wake_reset();
		__pm_stay_awake(ws);
		KUNIT_EXPECT_FALSE(test, pseudosleep_woken());
		__pm_relax(ws);
	}

	/* Resuming: what devices report on the way back ends nothing. */
	pseudosleep_wake_reset();
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_RESUMING);
	pm_wakeup_ws_event(ws, 0, false);
	KUNIT_EXPECT_FALSE(test, pseudosleep_woken());
	pseudosleep_wake_source(name, sizeof(name));
	KUNIT_EXPECT_STREQ(test, name, "");
	KUNIT_EXPECT_FALSE(test, pm_wakeup_pending());
}

/*
 * An armed IRQ during the sync or the freeze (phase ENTERING) ends the
 * attempt before any device suspends: the freezer wiped the PM core's
 * record of it, the nap's own record is what is left.
 */
static void woken_during_entry(struct kunit *test)
{
	struct wake_line *a = wake_line(test);
	unsigned long *bits = irq_bitmap(test), *saved = irq_bitmap(test);
	unsigned int flags;
	bool console_kept = false;

	pseudosleep_copy_armed(saved, nr_irqs);
	__set_bit(a->irq, bits);
	KUNIT_ASSERT_EQ(test, pseudosleep_arm(bits, nr_irqs), 0);

	flags = lock_system_sleep();
	pseudosleep_begin();	/* arms the line */
	raise_irq(a);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->handled), 1);
	KUNIT_EXPECT_EQ(test, pseudosleep_keep_devices(&console_kept), -EBUSY);
	/* No device phase ran, no CPU was kicked. */
	KUNIT_EXPECT_EQ(test, pseudosleep_times.suspended, 0);
	KUNIT_EXPECT_EQ(test, pseudosleep_times.kicked, 0);
	KUNIT_EXPECT_FALSE(test, console_kept);
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_IDLE);
	pseudosleep_wake_reset();
	unlock_system_sleep(flags);

	pseudosleep_arm(saved, NBITS);
}

/*
 * Pseudo is a flavour of suspend to idle, not a system sleep state of its
 * own: no table indexed by suspend_state_t names it, and a nap's CPUs idle
 * in an s2idle state that keeps the tick.
 */
static void no_state_of_its_own(struct kunit *test)
{
	/* suspend_state_t is __bitwise: the tables are indexed by int. */
	const int min = (__force int)PM_SUSPEND_MIN;
	const int max = (__force int)PM_SUSPEND_MAX;
	int state;

	KUNIT_EXPECT_EQ(test, max, 4);
	for (state = min; state < max; state++) {
		if (pm_states[state])
			KUNIT_EXPECT_STRNEQ(test, pm_states[state], "pseudo");
		if (mem_sleep_states[state])
			KUNIT_EXPECT_STRNEQ(test, mem_sleep_states[state],
					    "pseudo");
	}
	KUNIT_EXPECT_NE(test, pseudosleep_s2idle_state(), S2IDLE_STATE_ENTER);
	KUNIT_EXPECT_FALSE(test, pm_suspend_pseudo());
}

static void set_nosleep(struct device *dev, bool val)
{
	spin_lock_irq(&dev->power.lock);
	dev->power.nosleep = val;
	spin_unlock_irq(&dev->power.lock);
}

/*
 * A kept device keeps what it needs: the suppliers of its device links, and
 * theirs in turn; a device nothing kept depends on is not kept.  Kept
 * devices carry the PM core's kept flag until the unmark, which clears it;
 * they are never made syscore devices.  A kept supplier of a device the
 * nap suspends is held runtime-active for the nap.
 */
static void keep_follows_device_links(struct kunit *test)
{
	struct device *con, *sup, *sup2, *other;
	struct device_link *l1, *l2, *l3;

	con = kunit_device_register(test, "ps-consumer");
	sup = kunit_device_register(test, "ps-supplier");
	sup2 = kunit_device_register(test, "ps-supplier-2");
	other = kunit_device_register(test, "ps-other");
	KUNIT_ASSERT_FALSE(test, IS_ERR(con) || IS_ERR(sup) || IS_ERR(sup2) ||
			   IS_ERR(other));
	l1 = device_link_add(con, sup, DL_FLAG_STATELESS);
	KUNIT_ASSERT_NOT_NULL(test, l1);
	l2 = device_link_add(sup, sup2, DL_FLAG_STATELESS);
	KUNIT_ASSERT_NOT_NULL(test, l2);
	l3 = device_link_add(other, sup2, DL_FLAG_STATELESS);
	KUNIT_ASSERT_NOT_NULL(test, l3);

	set_nosleep(con, true);
	KUNIT_ASSERT_EQ(test, pseudosleep_keep_mark(), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&sup2->power.usage_count), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&sup->power.usage_count), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&con->power.usage_count), 0);
	KUNIT_EXPECT_TRUE(test, con->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, con->power.syscore);
	KUNIT_EXPECT_TRUE(test, sup->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, sup->power.syscore);
	KUNIT_EXPECT_TRUE(test, sup2->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, sup2->power.syscore);
	KUNIT_EXPECT_FALSE(test, other->power.pseudosleep_kept);
	pseudosleep_keep_unmark();
	set_nosleep(con, false);
	KUNIT_EXPECT_FALSE(test, con->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, sup->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, sup2->power.pseudosleep_kept);
	KUNIT_EXPECT_EQ(test, atomic_read(&sup2->power.usage_count), 0);

	device_link_del(l3);
	device_link_del(l2);
	device_link_del(l1);
}

static int no_op_pm(struct device *dev)
{
	return 0;
}

static const struct dev_pm_ops work_pm_ops = {
	.suspend = no_op_pm,
	.resume = no_op_pm,
};

/* A device type whose devices have PM work to do in a nap. */
static const struct device_type work_type = {
	.name = "ps-work",
	.pm = &work_pm_ops,
};

static void free_dev(struct device *dev)
{
	kfree(dev);
}

KUNIT_DEFINE_ACTION_WRAPPER(unregister_dev, device_unregister, struct device *);

/* A device on dpm_list, under @parent, unregistered at the test's end. */
static struct device *add_fw_dev(struct kunit *test, const char *name,
				 struct device *parent,
				 const struct device_type *type,
				 struct fwnode_handle *fwnode)
{
	struct device *dev = kzalloc(sizeof(*dev), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, dev);
	device_initialize(dev);
	dev->parent = parent;
	dev->type = type;
	device_set_node(dev, fwnode);
	dev->release = free_dev;
	if (dev_set_name(dev, "%s", name) || device_add(dev)) {
		put_device(dev);
		KUNIT_FAIL_AND_ABORT(test, "cannot add %s", name);
	}
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, unregister_dev, dev), 0);
	return dev;
}

static struct device *add_dev(struct kunit *test, const char *name,
			      struct device *parent,
			      const struct device_type *type)
{
	return add_fw_dev(test, name, parent, type, NULL);
}

/*
 * A nap leaves out a device with no PM callback only together with all of
 * its children and consumers; the ancestors and suppliers of a device with
 * PM work take part, and so do a wakeup-capable device and a runtime-active
 * one.  The unmark clears every flag.  (In a nap dpm_prepare() calls the
 * mark, once probing is blocked, and dpm_complete() the unmark.)
 */
static void skip_devices_without_pm_work(struct kunit *test)
{
	struct device *top, *work, *leaf1, *idle, *leaf2, *sup, *wake, *active;
	struct device *sup_top, *chain, *chain_mid;
	struct device_link *link;

	top = add_dev(test, "ps-top", NULL, NULL);
	work = add_dev(test, "ps-work", top, &work_type);
	leaf1 = add_dev(test, "ps-leaf-1", work, NULL);
	idle = add_dev(test, "ps-idle", top, NULL);
	leaf2 = add_dev(test, "ps-leaf-2", idle, NULL);
	sup_top = add_dev(test, "ps-sup-top", NULL, NULL);
	sup = add_dev(test, "ps-sup", sup_top, NULL);
	/* two ancestors without PM work above a device with some */
	chain = add_dev(test, "ps-chain", NULL, NULL);
	chain_mid = add_dev(test, "ps-chain-mid", chain, NULL);
	add_dev(test, "ps-chain-work", chain_mid, &work_type);
	wake = add_dev(test, "ps-wake", NULL, NULL);
	device_set_wakeup_capable(wake, true);
	active = add_dev(test, "ps-active", NULL, NULL);
	KUNIT_ASSERT_EQ(test, pm_runtime_set_active(active), 0);
	KUNIT_EXPECT_FALSE(test, work->power.no_pm_callbacks);
	KUNIT_EXPECT_TRUE(test, leaf1->power.no_pm_callbacks);
	link = device_link_add(work, sup, DL_FLAG_STATELESS);
	KUNIT_ASSERT_NOT_NULL(test, link);

	KUNIT_ASSERT_EQ(test, pseudosleep_keep_mark(), 0);
	pseudosleep_skip_mark();
	KUNIT_EXPECT_FALSE(test, work->power.pseudosleep_skip);
	KUNIT_EXPECT_FALSE(test, top->power.pseudosleep_skip);
	KUNIT_EXPECT_FALSE(test, sup->power.pseudosleep_skip);
	KUNIT_EXPECT_FALSE(test, sup_top->power.pseudosleep_skip);
	KUNIT_EXPECT_FALSE(test, chain->power.pseudosleep_skip);
	KUNIT_EXPECT_FALSE(test, chain_mid->power.pseudosleep_skip);
	KUNIT_EXPECT_FALSE(test, wake->power.pseudosleep_skip);
	KUNIT_EXPECT_FALSE(test, active->power.pseudosleep_skip);
	KUNIT_EXPECT_TRUE(test, leaf1->power.pseudosleep_skip);
	KUNIT_EXPECT_TRUE(test, idle->power.pseudosleep_skip);
	KUNIT_EXPECT_TRUE(test, leaf2->power.pseudosleep_skip);
	pseudosleep_skip_unmark();
	pseudosleep_keep_unmark();
	KUNIT_EXPECT_FALSE(test, leaf1->power.pseudosleep_skip);
	KUNIT_EXPECT_FALSE(test, idle->power.pseudosleep_skip);
	KUNIT_EXPECT_FALSE(test, leaf2->power.pseudosleep_skip);

	device_link_del(link);
	device_set_wakeup_capable(wake, false);
	pm_runtime_set_suspended(active);
}

static const struct irq_domain_ops keep_test_domain_ops = {};

struct test_irq {
	struct irq_domain *dom;
	unsigned int virq;
};

static void free_test_irq(void *data)
{
	struct test_irq *t = data;

	irq_dispose_mapping(t->virq);
	irq_domain_remove(t->dom);
}

/* An IRQ in a domain of its own, with a firmware node or a pm_dev. */
static unsigned int add_test_irq(struct kunit *test,
				 struct fwnode_handle *fwnode,
				 struct device *pm_dev)
{
	struct test_irq *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->dom = irq_domain_create_linear(fwnode, 1, &keep_test_domain_ops,
					  NULL);
	KUNIT_ASSERT_NOT_NULL(test, t->dom);
	if (pm_dev)
		irq_domain_set_pm_device(t->dom, pm_dev);
	t->virq = irq_create_mapping(t->dom, 0);
	if (!t->virq) {
		irq_domain_remove(t->dom);
		KUNIT_FAIL_AND_ABORT(test, "no mapping");
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, free_test_irq, t),
			0);
	return t->virq;
}

/* A platform device whose IRQ resource is @irq. */
static struct device *add_irq_user(struct kunit *test, const char *name,
				   unsigned int irq)
{
	struct resource res = DEFINE_RES_IRQ(irq);
	struct platform_device *pdev;

	pdev = kunit_platform_device_alloc(test, name, PLATFORM_DEVID_NONE);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pdev);
	KUNIT_ASSERT_EQ(test, platform_device_add_resources(pdev, &res, 1), 0);
	KUNIT_ASSERT_EQ(test, kunit_platform_device_add(test, pdev), 0);
	return &pdev->dev;
}

KUNIT_DEFINE_ACTION_WRAPPER(remove_swnode, fwnode_remove_software_node,
			    struct fwnode_handle *);

/*
 * A kept device's IRQ keeps the controller behind its irq domain, and
 * that controller's own IRQ keeps the next one, with its suppliers: a
 * device (power/nosleep) behind a GPIO controller (the domain's pm_dev)
 * chained to an interrupt controller (found through the domain's firmware
 * node) that needs a clock.  Their IRQs stay enabled; the unmark restores
 * everything.
 */
static void keep_follows_irq_domains(struct kunit *test)
{
	struct device *intc, *clk, *gpio, *user, *other;
	struct fwnode_handle *intc_node;
	struct device_link *link;
	unsigned int intc_irq, gpio_irq;

	intc_node = fwnode_create_software_node(NULL, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(intc_node));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, remove_swnode,
							intc_node), 0);
	intc = add_fw_dev(test, "ps-irq-intc", NULL, NULL, intc_node);
	clk = kunit_device_register(test, "ps-irq-clock");
	other = kunit_device_register(test, "ps-irq-other");
	KUNIT_ASSERT_FALSE(test, IS_ERR(clk) || IS_ERR(other));
	link = device_link_add(intc, clk, DL_FLAG_STATELESS);
	KUNIT_ASSERT_NOT_NULL(test, link);
	intc_irq = add_test_irq(test, intc_node, NULL);
	gpio = add_irq_user(test, "ps-irq-gpio", intc_irq);
	gpio_irq = add_test_irq(test, NULL, gpio);
	user = add_irq_user(test, "ps-irq-user", gpio_irq);

	set_nosleep(user, true);
	KUNIT_ASSERT_EQ(test, pseudosleep_keep_mark(), 0);
	KUNIT_EXPECT_TRUE(test, user->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, user->power.syscore);
	KUNIT_EXPECT_TRUE(test, gpio->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, gpio->power.syscore);
	KUNIT_EXPECT_TRUE(test, intc->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, intc->power.syscore);
	KUNIT_EXPECT_TRUE(test, clk->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, clk->power.syscore);
	KUNIT_EXPECT_FALSE(test, other->power.pseudosleep_kept);
	KUNIT_EXPECT_TRUE(test, pseudosleep_irq_kept(gpio_irq));
	KUNIT_EXPECT_TRUE(test, pseudosleep_irq_kept(intc_irq));
	pseudosleep_keep_unmark();
	set_nosleep(user, false);
	KUNIT_EXPECT_FALSE(test, user->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, gpio->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, intc->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, clk->power.pseudosleep_kept);
	KUNIT_EXPECT_FALSE(test, pseudosleep_irq_kept(intc_irq));

	device_link_del(link);
}

static int rpm_resumed;

static int count_runtime_resume(struct device *dev)
{
	rpm_resumed++;
	return 0;
}

static const struct dev_pm_ops rpm_pm_ops = {
	.runtime_suspend = no_op_pm,
	.runtime_resume = count_runtime_resume,
};

static const struct device_type rpm_type = {
	.name = "ps-rpm",
	.pm = &rpm_pm_ops,
};

/*
 * A kept device keeps its runtime PM.  pm_wq is frozen during a nap, so a
 * resume queued for a device kept for its own sake (a PME, a link coming
 * up) ends the nap: the nap's end thaws pm_wq and the device resumes.  A
 * device that is not kept, or kept only for another (here a console's
 * port would be one), queues its resume as before, and so does any device
 * once the nap is over.  (pm_wq is not frozen here, so each queued resume
 * also runs.)
 */
static void kept_runtime_resume_ends_nap(struct kunit *test)
{
	enum pseudosleep_phase saved = READ_ONCE(pseudosleep_phase);
	struct device *nic, *other, *sup;
	struct device_link *link;

	nic = add_dev(test, "ps-rpm-nic", NULL, &rpm_type);
	other = add_dev(test, "ps-rpm-other", NULL, &rpm_type);
	sup = add_dev(test, "ps-rpm-supplier", NULL, &rpm_type);
	link = device_link_add(nic, sup, DL_FLAG_STATELESS);
	KUNIT_ASSERT_NOT_NULL(test, link);
	pm_runtime_enable(nic);
	pm_runtime_enable(other);
	pm_runtime_enable(sup);
	KUNIT_ASSERT_TRUE(test, pm_runtime_suspended(nic));
	/* Earlier cases report wakeups; none is in progress at boot. */
	pm_wakeup_clear(0);
	KUNIT_ASSERT_FALSE(test, pm_wakeup_pending());
	rpm_resumed = 0;

	set_nosleep(nic, true);
	KUNIT_ASSERT_EQ(test, pseudosleep_keep_mark(), 0);
	KUNIT_EXPECT_TRUE(test, sup->power.pseudosleep_kept);
	KUNIT_EXPECT_TRUE(test, pm_runtime_enabled(nic));
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_NAPPING);
	KUNIT_EXPECT_EQ(test, pm_request_resume(other), 0);
	KUNIT_EXPECT_EQ(test, pm_request_resume(sup), 0);
	pm_runtime_barrier(other);
	pm_runtime_barrier(sup);
	KUNIT_EXPECT_FALSE(test, pm_wakeup_pending());
	KUNIT_EXPECT_EQ(test, pm_request_resume(nic), 0);
	KUNIT_EXPECT_TRUE(test, pm_wakeup_pending());
	pm_runtime_barrier(nic);
	pm_wakeup_clear(0);
	/* Woken: a resume queued now runs once pm_wq thaws. */
	WRITE_ONCE(pseudosleep_phase, PSEUDOSLEEP_RESUMING);
	KUNIT_EXPECT_EQ(test, pm_runtime_suspend(nic), 0);
	KUNIT_EXPECT_TRUE(test, pm_runtime_suspended(nic));
	KUNIT_EXPECT_EQ(test, pm_request_resume(nic), 0);
	KUNIT_EXPECT_FALSE(test, pm_wakeup_pending());
	WRITE_ONCE(pseudosleep_phase, saved);
	pseudosleep_keep_unmark();
	set_nosleep(nic, false);

	pm_runtime_barrier(nic);
	KUNIT_EXPECT_EQ(test, rpm_resumed, 4);
	KUNIT_EXPECT_TRUE(test, pm_runtime_active(nic));
	pm_runtime_disable(nic);
	pm_runtime_disable(other);
	pm_runtime_disable(sup);
	device_link_del(link);
}

static struct kunit_case pseudosleep_test_cases[] = {
	KUNIT_CASE(parse_irqs_good),
	KUNIT_CASE(parse_irqs_bad),
	KUNIT_CASE(parse_bool),
	KUNIT_CASE(arm_and_record),
	KUNIT_CASE(mark_goes_with_handler),
	KUNIT_CASE(shared_line_not_marked),
	KUNIT_CASE(arm_counts_checked),
	KUNIT_CASE(woken_during_entry),
	KUNIT_CASE(ws_activation_ends_nap),
	KUNIT_CASE(no_state_of_its_own),
	KUNIT_CASE(keep_follows_device_links),
	KUNIT_CASE(skip_devices_without_pm_work),
	KUNIT_CASE(keep_follows_irq_domains),
	KUNIT_CASE(kept_runtime_resume_ends_nap),
	{}
};

static struct kunit_suite pseudosleep_test_suite = {
	.name = "pseudosleep",
	.test_cases = pseudosleep_test_cases,
};

kunit_test_suite(pseudosleep_test_suite);

MODULE_DESCRIPTION("KUnit tests for pseudo-sleep");
MODULE_LICENSE("GPL");
