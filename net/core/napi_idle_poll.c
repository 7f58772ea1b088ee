// SPDX-License-Identifier: GPL-2.0
/*
 * NAPI polled from idle.  A driver that can tell, without consuming it,
 * whether its next receive descriptor is done gives its NAPI instance a
 * peek (netif_napi_set_idle_ops()).  Once the device opts in
 * (/sys/class/net/<dev>/napi_idle_poll), the core puts each such instance
 * on the pollist polling list: the idle CPU that polls calls the peek
 * and, on a hit, schedules NAPI as the device's interrupt handler would.
 * No driver registers anything itself.  See Documentation/pollist.rst.
 */

#include <linux/cpuidle_pollist.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>

#include "dev.h"

/*
 * Serialises the registrations: the device flag and the entries.  The
 * sysfs write holds RTNL too; a driver sets an instance's ops at probe or
 * when it sets up its queues again (virtio-net's restore, without RTNL).
 */
static DEFINE_MUTEX(napi_idle_poll_lock);

/*
 * Called by the polling CPU, read-only.  The hold counts the disables
 * since the last enable (an instance starts disabled), so it is zero only
 * while NAPI may run; a driver taking the ring away raised it first and
 * waited for us in napi_disable().  NAPI owns the ring while scheduled.
 */
static bool napi_idle_poll_poll(struct pollist_entry *entry)
{
	struct napi_struct *napi = container_of(entry, struct napi_struct,
						idle_poll);

	/* Pairs with the release in napi_idle_poll_release(). */
	if (atomic_read_acquire(&napi->idle_poll_hold))
		return false;
	if (napi_is_scheduled(napi))
		return false;
	/* The ring as napi_enable() or the last completion left it. */
	smp_rmb();
	return napi->idle_ops->peek(napi);
}

/*
 * The hand-over, in hard interrupt context on the CPU that polled, once
 * it left the polling state: what the interrupt handler does.  The
 * interrupt stays enabled; napi_schedule_prep() lets one of the two in.
 */
static void napi_idle_poll_complete(struct pollist_entry *entry)
{
	struct napi_struct *napi = container_of(entry, struct napi_struct,
						idle_poll);

	if (napi->idle_ops->schedule)
		napi->idle_ops->schedule(napi);
	else
		napi_schedule(napi);
}

static int napi_idle_poll_add(struct napi_struct *napi)
{
	struct pollist_entry *entry = &napi->idle_poll;
	int err;

	lockdep_assert_held(&napi_idle_poll_lock);
	entry->poll = napi_idle_poll_poll;
	entry->complete = napi_idle_poll_complete;
	snprintf(entry->name, sizeof(entry->name), "%s-napi-%u",
		 napi->dev->name, napi->napi_id);
	err = pollist_register(entry);
	return err == -EBUSY ? 0 : err;
}

/**
 * netif_napi_set_idle_ops - let idle CPUs poll a NAPI instance
 * @napi: the instance, added with netif_napi_add() and not yet enabled
 * @ops: its peek, and optionally how to schedule it; must stay valid
 *	until the instance is deleted
 *
 * The instance is polled while its device has napi_idle_poll set.
 * napi_disable() stops the polling and waits for a CPU that was calling
 * the peek, so the driver may free or reset the ring the peek reads as it
 * does with NAPI disabled.
 *
 * Context: process context, the instance disabled.
 */
void netif_napi_set_idle_ops(struct napi_struct *napi,
			     const struct napi_idle_ops *ops)
{
	if (WARN_ON(!ops || !ops->peek || napi->idle_ops ||
		    !test_bit(NAPI_STATE_SCHED, &napi->state)))
		return;

	mutex_lock(&napi_idle_poll_lock);
	/* Disabled once: napi_enable() brings the hold to zero. */
	atomic_set(&napi->idle_poll_hold, 1);
	napi->idle_ops = ops;
	if (napi->dev->napi_idle_poll && napi_idle_poll_add(napi))
		netdev_warn(napi->dev, "NAPI %u is not polled from idle\n",
			    napi->napi_id);
	mutex_unlock(&napi_idle_poll_lock);
}
EXPORT_SYMBOL_GPL(netif_napi_set_idle_ops);

static void napi_idle_poll_del_all(struct net_device *dev)
{
	struct napi_struct *napi;

	list_for_each_entry(napi, &dev->napi_list, dev_list)
		if (napi->idle_ops)
			pollist_unregister_nosync(&napi->idle_poll);
	/* One grace period for all of them. */
	pollist_synchronize();
}

static int napi_idle_poll_set(struct net_device *dev, bool on)
{
	struct napi_struct *napi;
	bool peekable = false;
	int err = 0;

	if (on == dev->napi_idle_poll)
		return 0;
	list_for_each_entry(napi, &dev->napi_list, dev_list)
		peekable |= !!napi->idle_ops;
	if (!peekable || !pollist_active())
		return -EOPNOTSUPP;

	if (on) {
		WRITE_ONCE(dev->napi_idle_poll, true);
		/*
		 * Pairs with netif_napi_idle_sync(): a napi_disable() (or a
		 * driver's down) that runs now either sees the flag and
		 * waits for the pollers, or raised its hold before we
		 * register, and the pollers see the hold.
		 */
		smp_mb();
		list_for_each_entry(napi, &dev->napi_list, dev_list) {
			if (!napi->idle_ops)
				continue;
			err = napi_idle_poll_add(napi);
			if (err)
				break;
		}
		if (!err)
			return 0;
	}
	/* Gone from the list and waited for before napi_disable() skips it. */
	napi_idle_poll_del_all(dev);
	WRITE_ONCE(dev->napi_idle_poll, false);
	return err;
}

/**
 * dev_set_napi_idle_poll - let idle CPUs poll a device's receive rings
 * @dev: the device
 * @on: poll (true) or stop polling (false) every NAPI instance of @dev
 *	that has a peek
 *
 * Context: process context, RTNL held; sleeps when turning polling off.
 * Return: 0 (also when @on is the current state); -EOPNOTSUPP if no
 * instance of @dev has a peek or nothing polls the pollist list, or
 * pollist_register()'s error, with nothing changed.
 */
int dev_set_napi_idle_poll(struct net_device *dev, bool on)
{
	int err;

	ASSERT_RTNL();
	mutex_lock(&napi_idle_poll_lock);
	err = napi_idle_poll_set(dev, on);
	mutex_unlock(&napi_idle_poll_lock);
	return err;
}

/**
 * netif_napi_idle_sync - wait for the pollers that may be at an instance
 * @napi: an instance with idle ops
 *
 * For a driver that takes a ring away without napi_disable() (it stops
 * the device and waits with napi_synchronize(), as e1000e_down() does):
 * it first sets what makes its peek return false, then calls this.  On
 * return no CPU runs the peek or the schedule of a hit found before;
 * a NAPI run such a hit scheduled may still be going on.
 *
 * Context: process context; sleeps while the device is polled.
 */
void netif_napi_idle_sync(struct napi_struct *napi)
{
	if (!napi->idle_ops)
		return;
	/* Pairs with napi_idle_poll_set(): see the flag or be seen. */
	smp_mb();
	if (READ_ONCE(napi->dev->napi_idle_poll))
		pollist_synchronize();
}
EXPORT_SYMBOL_GPL(netif_napi_idle_sync);

/**
 * napi_idle_poll_hold - keep the pollers off an instance's ring
 * @napi: the instance napi_disable() is disabling
 *
 * The pollers check the hold before the peek, and this waits for those
 * that checked before.  It runs while NAPI still receives: waiting with
 * NAPI disabled leaves what the device receives meanwhile in a ring that
 * a reset may then drop.  Two napi_disable() calls may overlap (one
 * waits for the other's napi_enable()): the hold counts them.
 */
void napi_idle_poll_hold(struct napi_struct *napi)
{
	if (!napi->idle_ops)
		return;
	atomic_inc(&napi->idle_poll_hold);
	netif_napi_idle_sync(napi);
}

/**
 * napi_idle_poll_release - let the pollers at an instance's ring again
 * @napi: the instance napi_enable() enabled, with its ring set up
 */
void napi_idle_poll_release(struct napi_struct *napi)
{
	if (!napi->idle_ops)
		return;
	/* Pairs with the acquire in napi_idle_poll_poll(). */
	WARN_ON_ONCE(atomic_dec_return_release(&napi->idle_poll_hold) < 0);
}

/**
 * napi_idle_poll_del - stop polling an instance that goes away
 * @napi: the instance __netif_napi_del() deletes
 *
 * Context: process context; sleeps if the instance was polled.
 */
void napi_idle_poll_del(struct napi_struct *napi)
{
	if (!napi->idle_ops)
		return;
	mutex_lock(&napi_idle_poll_lock);
	pollist_unregister(&napi->idle_poll);
	/* No poller looks at it any more; it may be added again. */
	napi->idle_ops = NULL;
	mutex_unlock(&napi_idle_poll_lock);
}
