// SPDX-License-Identifier: GPL-2.0
/*
 * pollist: the API for device drivers, the clients of the polling list.
 *
 * A driver registers a poll request (a cheap read-only check and what its
 * interrupt handler would do when the check finds work) on the one global
 * polling list, which idle CPUs poll from the cpuidle polling state.  See
 * Documentation/pollist.rst.
 */

#include <linux/cpuidle_pollist.h>
#include <linux/debugfs.h>
#include <linux/export.h>
#include <linux/init.h>
#include <linux/seq_file.h>

#include "cpuidle-pollist.h"

/* The list every client registers on, set up at boot. */
struct pollist pollist_global;
static bool pollist_on __read_mostly;

/**
 * pollist_clients_open - let the clients register
 *
 * Called at boot once pollist_global is set up and polled.
 */
void __init pollist_clients_open(void)
{
	WRITE_ONCE(pollist_on, true);
}

/**
 * pollist_active - whether registered entries are polled
 *
 * Return: true once the list was set up at boot and the platform's
 * cpuidle driver has a polling state to poll it from.
 */
bool pollist_active(void)
{
	return READ_ONCE(pollist_on) && pollist_polled();
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
 * Context: process context, may sleep (the first entry turns the
 * platform hooks on); may be called from any CPU.
 * Return: 0, -ENODEV if nothing polls the list (no
 * cpuidle_pollist.enable=1, or no polling state to run it), -EINVAL
 * without callbacks, -EBUSY if @entry is already registered.
 */
int pollist_register(struct pollist_entry *entry)
{
	int ret;

	if (!pollist_active())
		return -ENODEV;
	ret = pollist_add(&pollist_global, entry);
	if (!ret)
		pollist_hooks_update();
	return ret;
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
	pollist_hooks_update();
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
 * Context: process context, may sleep (the last entry turns the
 * platform hooks off).
 */
void pollist_unregister_nosync(struct pollist_entry *entry)
{
	pollist_unlink(&pollist_global, entry);
	pollist_hooks_update();
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
 * hand-overs) unless no list was set up at boot.
 */
void pollist_synchronize(void)
{
	if (READ_ONCE(pollist_on))
		pollist_sync(&pollist_global);
}
EXPORT_SYMBOL_GPL(pollist_synchronize);

/* /sys/kernel/debug/pollist/entries: the registered entries and their hits. */
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

/**
 * pollist_clients_debugfs - create the entries file
 * @dir: the polling list's debugfs directory
 */
void __init pollist_clients_debugfs(struct dentry *dir)
{
	debugfs_create_file("entries", 0444, dir, NULL, &pollist_entries_fops);
}
