/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pollist: a list of poll requests registered by device drivers, walked
 * by idle CPUs from the cpuidle polling state.  See Documentation/pollist.rst.
 */
#ifndef _LINUX_CPUIDLE_POLLIST_H
#define _LINUX_CPUIDLE_POLLIST_H

#include <linux/errno.h>
#include <linux/jump_label.h>
#include <linux/list.h>
#include <linux/types.h>

#define POLLIST_NAME_LEN	32

struct cpuidle_device;
struct cpuidle_driver;
struct cpuidle_state;
struct pollist_sub;

/**
 * struct pollist_entry - a poll request on the polling list
 * @poll: cheap, read-only check "is there work?".  Called from the idle
 *	loop of the polling CPU with interrupts and bottom halves enabled,
 *	preemption disabled and inside an SRCU read-side critical section;
 *	must not sleep, must not change state and must be safe to call at
 *	any time between pollist_register() and the return of
 *	pollist_unregister(), also concurrently with the device's own
 *	interrupt handler running on another CPU.  State it reads that the
 *	driver frees meanwhile (a ring being resized) must be guarded by a
 *	check @poll makes first, and pollist_synchronize() between the
 *	driver's change of that check and the free.
 * @complete: run when @poll returned true, in hard interrupt context on
 *	the CPU that polled, once it has left the polling state: what the
 *	device's interrupt handler does, such as napi_schedule(); a softirq
 *	it raises runs on that interrupt's exit.  It must not sleep; it may
 *	race with the device interrupt doing the same work on another CPU.
 * @name: shown in /sys/kernel/debug/pollist/entries; set by the caller.
 *
 * The caller zeroes the entry and sets @poll, @complete and @name; the
 * rest belongs to the pollist core: the link in the sub-list, the
 * sub-list (NULL when not registered), the count of hits, written by
 * the poller only, and the grace period an entry unlinked without
 * waiting still needs.
 */
struct pollist_entry {
	bool (*poll)(struct pollist_entry *entry);
	void (*complete)(struct pollist_entry *entry);
	char name[POLLIST_NAME_LEN];
	/* private: owned by the pollist core */
	struct list_head node;
	struct pollist_sub *sub;
	unsigned long hits;
	unsigned long unlink_gp;
	bool unlinked;
};

#ifdef CONFIG_CPUIDLE_POLLIST

int pollist_register(struct pollist_entry *entry);
void pollist_unregister(struct pollist_entry *entry);
void pollist_unregister_nosync(struct pollist_entry *entry);
void pollist_synchronize(void);
bool pollist_active(void);

/*
 * The hooks in the cpuidle core (select, reflect) and in poll_idle() that
 * poll the list from the platform driver's polling state
 * (cpuidle_pollist.enable=1).  The key is on while the list has entries:
 * otherwise they cost a patched-out branch.
 */
DECLARE_STATIC_KEY_FALSE(pollist_hooks_key);

int pollist_idle_select(struct cpuidle_driver *drv,
			struct cpuidle_device *dev, int index,
			bool *stop_tick);
int pollist_idle_enter(struct cpuidle_device *dev,
		       struct cpuidle_driver *drv, int index);
void pollist_idle_reflect(struct cpuidle_device *dev, int index);

/**
 * pollist_hooks_on - whether the core consults the pollist hooks
 *
 * Return: true while cpuidle_pollist.enable=1 and the list has entries.
 */
static __always_inline bool pollist_hooks_on(void)
{
	return static_branch_unlikely(&pollist_hooks_key);
}

#else /* !CONFIG_CPUIDLE_POLLIST */

static __always_inline bool pollist_hooks_on(void)
{
	return false;
}

static inline int pollist_idle_select(struct cpuidle_driver *drv,
				      struct cpuidle_device *dev,
				      int index, bool *stop_tick)
{
	return index;
}

static inline int pollist_idle_enter(struct cpuidle_device *dev,
				     struct cpuidle_driver *drv, int index)
{
	return -ENOENT;
}

static inline void pollist_idle_reflect(struct cpuidle_device *dev,
					int index)
{
}

static inline int pollist_register(struct pollist_entry *entry)
{
	return -ENODEV;
}

static inline void pollist_unregister(struct pollist_entry *entry)
{
}

static inline void pollist_unregister_nosync(struct pollist_entry *entry)
{
}

static inline void pollist_synchronize(void)
{
}

static inline bool pollist_active(void)
{
	return false;
}

#endif /* CONFIG_CPUIDLE_POLLIST */

#endif /* _LINUX_CPUIDLE_POLLIST_H */
