// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep statistics: /sys/power/pseudosleep/, one value per file.
 *
 * The per-phase durations are those of the last nap, the entry and exit
 * phases of the seed's Tables 3 and 4; the wake latency runs from the armed
 * IRQ (or the wakeup source's activation) to the return to user space.
 */

#include <linux/init.h>
#include <linux/interrupt.h>
#include <linux/kobject.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/suspend.h>
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
/* The wakeup source that ended the last nap, "" if none did. */
static char last_wake_source[64];
static DEFINE_SPINLOCK(stats_lock);

static u64 span(u64 from, u64 to)
{
	return from && to > from ? to - from : 0;
}

/* The armed IRQ that ended the nap, else the PM core's first wakeup IRQ. */
static unsigned int wake_irq(void)
{
	return pseudosleep_wake_irq() ?: pm_wakeup_irq();
}

/*
 * Called by the suspending task after a nap, with the interrupts served
 * during it that did not end it.
 */
void pseudosleep_stats_nap(unsigned long wakeups)
{
	const struct pseudosleep_times *t = &pseudosleep_times;

	spin_lock(&stats_lock);
	stats.naps++;
	stats.last_wake_irq = wake_irq();
	stats.spurious_wakeups = wakeups;
	pseudosleep_wake_source(last_wake_source, sizeof(last_wake_source));
	stats.last_nap_ns = span(t->kicked, t->woken);
	stats.total_nap_ns += stats.last_nap_ns;
	stats.wake_latency_ns = span(t->irq, t->end);
	stats.entry_sync_ns = span(t->begin, t->synced);
	stats.entry_freeze_ns = span(t->synced, t->frozen);
	stats.entry_suspend_devices_ns = span(t->frozen, t->suspended);
	stats.entry_cpu_halt_ns = span(t->suspended, t->kicked);
	stats.exit_cpu_wake_ns = span(t->irq, t->woken);
	stats.exit_resume_devices_ns = span(t->woken, t->resumed);
	stats.exit_thaw_ns = span(t->resumed, t->end);
	spin_unlock(&stats_lock);
}

void pseudosleep_stats_abort(void)
{
	spin_lock(&stats_lock);
	stats.aborted_naps++;
	stats.last_wake_irq = wake_irq() ?: stats.last_wake_irq;
	pseudosleep_wake_source(last_wake_source, sizeof(last_wake_source));
	spin_unlock(&stats_lock);
}

/* One read-only file per field: its name and where the value is. */
struct stat_file {
	struct kobj_attribute attr;
	size_t offset;
};

#define STAT_FILE(field) {						\
	.attr = { .attr = { .name = #field, .mode = 0444 },		\
		  .show = stat_show },					\
	.offset = offsetof(struct pseudosleep_stats, field),		\
}

static ssize_t stat_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct stat_file *f = container_of(attr, struct stat_file, attr);
	u64 val;

	spin_lock(&stats_lock);
	val = *(u64 *)((char *)&stats + f->offset);
	spin_unlock(&stats_lock);
	return sysfs_emit(buf, "%llu\n", val);
}

static struct stat_file stat_files[] = {
	STAT_FILE(naps),
	STAT_FILE(aborted_naps),
	STAT_FILE(last_wake_irq),
	STAT_FILE(spurious_wakeups),
	STAT_FILE(total_nap_ns),
	STAT_FILE(last_nap_ns),
	STAT_FILE(wake_latency_ns),
	STAT_FILE(entry_sync_ns),
	STAT_FILE(entry_freeze_ns),
	STAT_FILE(entry_suspend_devices_ns),
	STAT_FILE(entry_cpu_halt_ns),
	STAT_FILE(exit_cpu_wake_ns),
	STAT_FILE(exit_resume_devices_ns),
	STAT_FILE(exit_thaw_ns),
};

/* Wake IRQs whose mark went with their handler (vectors reallocated). */
static ssize_t wake_irq_dropped_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", irq_wake_handled_dropped());
}

static struct kobj_attribute wake_irq_dropped_attr = __ATTR_RO(wake_irq_dropped);

static ssize_t last_wake_source_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	ssize_t len;

	spin_lock(&stats_lock);
	len = sysfs_emit(buf, "%s\n", last_wake_source);
	spin_unlock(&stats_lock);
	return len;
}

static struct kobj_attribute last_wake_source_attr = __ATTR_RO(last_wake_source);

static struct attribute *stat_attrs[ARRAY_SIZE(stat_files) + 4];

static const struct attribute_group stat_group = {
	.name = "pseudosleep",
	.attrs = stat_attrs,
};

int __init pseudosleep_stats_init(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(stat_files); i++)
		stat_attrs[i] = &stat_files[i].attr.attr;
	stat_attrs[i++] = &wake_irq_dropped_attr.attr;
	stat_attrs[i++] = &last_wake_source_attr.attr;
	stat_attrs[i] = &pseudosleep_arm_attr.attr;
	return sysfs_create_group(power_kobj, &stat_group);
}
