// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep statistics: /sys/power/pseudosleep/, one value per file.
 *
 * The per-phase durations are those of the last nap, the entry and exit
 * phases of the seed's Tables 3 and 4; the wake latency runs from the armed
 * IRQ to the return to user space.
 */

#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/spinlock.h>
#include <linux/sysfs.h>

#include "pseudosleep.h"

struct pseudosleep_stats {
	u64 naps;
	u64 aborted_naps;
	u64 last_wake_irq;
	u64 spurious_wakeups;
	u64 total_nap_ns;
	u64 last_nap_ns;
	u64 wake_latency_ns;
	u64 entry_sync_ns;
	u64 entry_freeze_ns;
	u64 entry_suspend_devices_ns;
	u64 entry_cpu_halt_ns;
	u64 exit_cpu_wake_ns;
	u64 exit_resume_devices_ns;
	u64 exit_thaw_ns;
};

static struct pseudosleep_stats stats;
static DEFINE_SPINLOCK(stats_lock);

static u64 span(u64 from, u64 to)
{
	return from && to > from ? to - from : 0;
}

/* Called by the suspending task after a nap ended by an armed IRQ. */
void pseudosleep_stats_nap(unsigned long wakeups)
{
	const struct pseudosleep_times *t = &pseudosleep_times;

	spin_lock(&stats_lock);
	stats.naps++;
	stats.last_wake_irq = pseudosleep_wake_irq();
	stats.spurious_wakeups = wakeups;
	stats.last_nap_ns = span(t->kicked, t->woken);
	stats.total_nap_ns += stats.last_nap_ns;
	stats.wake_latency_ns = span(t->irq, t->end);
	stats.entry_sync_ns = span(t->begin, t->synced);
	stats.entry_freeze_ns = span(t->synced, t->frozen);
	stats.entry_suspend_devices_ns = span(t->frozen, t->suspended);
	stats.entry_cpu_halt_ns = span(t->kicked, t->all_halted);
	stats.exit_cpu_wake_ns = span(t->irq, t->woken);
	stats.exit_resume_devices_ns = span(t->woken, t->resumed);
	stats.exit_thaw_ns = span(t->resumed, t->end);
	spin_unlock(&stats_lock);
}

void pseudosleep_stats_abort(void)
{
	spin_lock(&stats_lock);
	stats.aborted_naps++;
	if (pseudosleep_wake_irq())
		stats.last_wake_irq = pseudosleep_wake_irq();
	spin_unlock(&stats_lock);
}

#define PSEUDOSLEEP_STAT(name)						\
static ssize_t name##_show(struct kobject *kobj,			\
			   struct kobj_attribute *attr, char *buf)	\
{									\
	u64 val;							\
									\
	spin_lock(&stats_lock);						\
	val = stats.name;						\
	spin_unlock(&stats_lock);					\
	return sysfs_emit(buf, "%llu\n", val);				\
}									\
static struct kobj_attribute name##_attr = __ATTR_RO(name)

PSEUDOSLEEP_STAT(naps);
PSEUDOSLEEP_STAT(aborted_naps);
PSEUDOSLEEP_STAT(last_wake_irq);
PSEUDOSLEEP_STAT(spurious_wakeups);
PSEUDOSLEEP_STAT(total_nap_ns);
PSEUDOSLEEP_STAT(last_nap_ns);
PSEUDOSLEEP_STAT(wake_latency_ns);
PSEUDOSLEEP_STAT(entry_sync_ns);
PSEUDOSLEEP_STAT(entry_freeze_ns);
PSEUDOSLEEP_STAT(entry_suspend_devices_ns);
PSEUDOSLEEP_STAT(entry_cpu_halt_ns);
PSEUDOSLEEP_STAT(exit_cpu_wake_ns);
PSEUDOSLEEP_STAT(exit_resume_devices_ns);
PSEUDOSLEEP_STAT(exit_thaw_ns);

static struct attribute *pseudosleep_stats_attrs[] = {
	&naps_attr.attr,
	&aborted_naps_attr.attr,
	&last_wake_irq_attr.attr,
	&spurious_wakeups_attr.attr,
	&total_nap_ns_attr.attr,
	&last_nap_ns_attr.attr,
	&wake_latency_ns_attr.attr,
	&entry_sync_ns_attr.attr,
	&entry_freeze_ns_attr.attr,
	&entry_suspend_devices_ns_attr.attr,
	&entry_cpu_halt_ns_attr.attr,
	&exit_cpu_wake_ns_attr.attr,
	&exit_resume_devices_ns_attr.attr,
	&exit_thaw_ns_attr.attr,
	NULL,
};

static const struct attribute_group pseudosleep_stats_group = {
	.name = "pseudosleep",
	.attrs = pseudosleep_stats_attrs,
};

int __init pseudosleep_stats_init(void)
{
	return sysfs_create_group(power_kobj, &pseudosleep_stats_group);
}
