// SPDX-License-Identifier: GPL-2.0
/*
 * Pseudo-sleep selective device sleep: power/nosleep and the devices kept
 * running through a nap.
 *
 * A device stays awake when its power/nosleep is 1, when one of its IRQs is
 * an armed wake IRQ, or when an ancestor stays awake for either reason (a
 * NIC's virtio or netdev children must not be frozen under it).  Every
 * ancestor of a device that stays awake stays awake too, so the path to the
 * root keeps working (a NIC behind a PCIe port).  For the length of the nap
 * those devices carry power.pseudosleep_kept, which the PM core checks in
 * one place (dpm_skip()) to leave them out of every phase, and their IRQs
 * are left enabled by suspend_device_irqs().  They are not made syscore
 * devices: their runtime PM keeps working through the nap.  Since pm_wq is
 * frozen meanwhile, an asynchronous runtime resume of a kept device (a
 * PME, a link coming up) ends the nap: pseudosleep_kept_resume_request().
 *
 * Most of the other devices have no PM work: no PM callback at any level
 * (class devices, virtual devices).  The PM core would only walk them
 * through its eight phases, which costs more than the work of the few
 * devices that have some.  A nap leaves them out of the phases
 * (power.pseudosleep_skip, set by dpm_prepare() once probing is blocked),
 * together with all of their children and consumers, so the devices that
 * take part keep their order.
 */

#define pr_fmt(fmt) "pseudosleep: " fmt

#include <linux/bitmap.h>
#include <linux/console.h>
#include <linux/device.h>
#include <linux/irq.h>
#include <linux/irqdomain.h>
#include <linux/irqnr.h>
#include <linux/msi.h>
#include <linux/pci.h>
#include <linux/platform_device.h>
#include <linux/pm.h>
#include <linux/pnp.h>
#include <linux/pm_runtime.h>
#include <linux/pm_wakeup.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/suspend.h>
#include <linux/tty.h>
#include <linux/tty_driver.h>

#include "power.h"
#include "pseudosleep.h"

/* IRQs left enabled through the nap; NULL outside a nap. */
static unsigned long *keep_irqs;
static unsigned int keep_nbits;
static unsigned int keep_count;
static unsigned int skip_count;

/*
 * The devices the nap keeps for their own sake: power/nosleep set, or the
 * owner of an armed IRQ.  A runtime resume queued for one of them or a
 * descendant ends the nap (pseudosleep_kept_resume_request()); the other
 * kept devices (consoles, suppliers, IRQ controllers) are kept for them.
 * Past KEEP_ROOTS of them, every kept device counts.
 */
#define KEEP_ROOTS 16
static struct device *keep_roots[KEEP_ROOTS];
static unsigned int nr_keep_roots;
static bool keep_roots_full;

/*
 * Kept devices with a child or consumer that the nap suspends: a runtime
 * PM reference holds them active for the nap, as dpm_prepare() holds the
 * devices it prepares, so that none runtime-suspends under a device the
 * PM core suspends and resumes.
 */
static struct device **held;
static unsigned int nr_held;

/* The devices behind the enabled consoles, kept awake through the nap. */
#define KEEP_CONSOLES 8
static struct device *console_devs[KEEP_CONSOLES];
static unsigned int nr_console_devs;
static bool consoles_kept;

static const char * const bool_words[][2] = {
	{ "0", "1" }, { "n", "y" }, { "N", "Y" }, { "no", "yes" },
	{ "off", "on" }, { "false", "true" },
};

/**
 * pseudosleep_parse_bool - strict boolean for power/nosleep
 * @buf: what user space wrote, with or without a trailing newline
 * @val: result
 *
 * Unlike kstrtobool(), which looks at the first character only, a whole
 * word is required: "10" or "yellow" are not booleans.
 *
 * Return: 0 or -EINVAL.
 */
int pseudosleep_parse_bool(const char *buf, bool *val)
{
	int i, j;

	for (i = 0; i < ARRAY_SIZE(bool_words); i++)
		for (j = 0; j < 2; j++)
			if (sysfs_streq(buf, bool_words[i][j])) {
				*val = j;
				return 0;
			}
	return -EINVAL;
}

static ssize_t nosleep_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", dev->power.nosleep);
}

static ssize_t nosleep_store(struct device *dev, struct device_attribute *attr,
			     const char *buf, size_t n)
{
	unsigned int sleep_flags;
	bool val;
	int ret;

	ret = pseudosleep_parse_bool(buf, &val);
	if (ret)
		return ret;
	/* The flag is read while a nap is entered: not in the middle of one. */
	sleep_flags = lock_system_sleep();
	spin_lock_irq(&dev->power.lock);
	dev->power.nosleep = val;
	spin_unlock_irq(&dev->power.lock);
	unlock_system_sleep(sleep_flags);
	return n;
}

DEVICE_ATTR_RW(nosleep);

/* Call @fn on each MSI of @dev; true as soon as @fn returns true. */
static bool dev_any_msi(struct device *dev, bool (*fn)(unsigned int irq))
{
	bool stop = false;
#ifdef CONFIG_GENERIC_MSI_IRQ
	struct msi_desc *desc;
	int i;

	if (!dev->msi.data)
		return false;
	msi_lock_descs(dev);
	msi_for_each_desc(desc, dev, MSI_DESC_ASSOCIATED)
		for (i = 0; i < desc->nvec_used && !stop; i++)
			stop = fn(desc->irq + i);
	msi_unlock_descs(dev);
#endif
	return stop;
}

/* The same for the IRQs of @dev that are not MSIs. */
static bool dev_any_legacy_irq(struct device *dev,
			       bool (*fn)(unsigned int irq))
{
	struct resource *res;
	int i;

	/*
	 * A PCI function's INTx line, unless it uses MSI-X (pci_dev->irq is
	 * then the unused INTx line) or MSI (pci_dev->irq is then its first
	 * MSI vector, which dev_any_msi() sees).
	 */
	if (dev_is_pci(dev) && to_pci_dev(dev)->irq &&
	    !to_pci_dev(dev)->msix_enabled && !to_pci_dev(dev)->msi_enabled &&
	    fn(to_pci_dev(dev)->irq))
		return true;
	if (dev_is_platform(dev)) {
		struct platform_device *pdev = to_platform_device(dev);

		for (i = 0; i < pdev->num_resources; i++) {
			res = &pdev->resource[i];
			/* A disabled one holds a GSI, not an IRQ number. */
			if (resource_type(res) == IORESOURCE_IRQ &&
			    !(res->flags & IORESOURCE_DISABLED) &&
			    fn(res->start))
				return true;
		}
	}
#ifdef CONFIG_PNP
	/* pnp_bus_type is private to drivers/pnp; the RTC sits on that bus. */
	if (dev->bus && !strcmp(dev->bus->name, "pnp")) {
		for (i = 0; (res = pnp_get_resource(to_pnp_dev(dev),
						    IORESOURCE_IRQ, i)); i++)
			if (!(res->flags & IORESOURCE_DISABLED) &&
			    fn(res->start))
				return true;
	}
#endif
	return false;
}

/* Call @fn on each IRQ of @dev; true as soon as @fn returns true. */
static bool dev_any_irq(struct device *dev, bool (*fn)(unsigned int irq))
{
	return dev_any_msi(dev, fn) || dev_any_legacy_irq(dev, fn);
}

/*
 * Pass 1: the armed IRQs whose owning device was found.  Pass 2: the IRQs
 * whose controllers were looked up.
 */
static unsigned long *seen_irqs;
static bool dev_owns_armed;

static bool irq_note_owner(unsigned int irq)
{
	/* Until pass 2, keep_irqs holds the armed IRQs only. */
	if (irq < keep_nbits && test_bit(irq, keep_irqs)) {
		__set_bit(irq, seen_irqs);
		dev_owns_armed = true;
	}
	return false;
}

static void set_kept(struct device *dev, bool kept)
{
	spin_lock_irq(&dev->power.lock);
	dev->power.pseudosleep_kept = kept;
	spin_unlock_irq(&dev->power.lock);
}

/* The hardware device a console writes to (a reference), or NULL. */
static struct device *console_hw_dev(struct console *con)
{
	struct tty_driver *drv;
	struct device *tty, *hw;
	int index;

	if (!con->device)
		return NULL;
	drv = con->device(con, &index);
	if (!drv)
		return NULL;
	tty = class_find_device_by_devt(&tty_class,
					MKDEV(drv->major, drv->minor_start) + index);
	if (!tty)
		return NULL;
	hw = get_device(tty->parent);
	put_device(tty);
	return hw;
}

/*
 * Find the devices of the enabled consoles.  consoles_kept tells whether
 * every enabled console has one; only then may the nap leave the consoles
 * running instead of calling suspend_console().
 */
static void find_consoles(void)
{
	struct console *con;
	struct device *dev;

	nr_console_devs = 0;
	consoles_kept = true;
	console_list_lock();
	for_each_console(con) {
		if (!(con->flags & CON_ENABLED))
			continue;
		dev = console_hw_dev(con);
		if (!dev || nr_console_devs == KEEP_CONSOLES) {
			put_device(dev);
			consoles_kept = false;
			continue;
		}
		console_devs[nr_console_devs++] = dev;
	}
	console_list_unlock();
}

static void put_consoles(void)
{
	while (nr_console_devs)
		put_device(console_devs[--nr_console_devs]);
}

static bool is_console_dev(struct device *dev)
{
	unsigned int i;

	for (i = 0; i < nr_console_devs; i++)
		if (console_devs[i] == dev)
			return true;
	return false;
}

/*
 * The devices of the armed interrupts that are MSIs, found from the
 * interrupts.  Pass 1 then looks at the other interrupts of each device
 * only, and only when some armed interrupt is not an MSI (a legacy or
 * platform one, possibly shared): that saves walking the MSI descriptors
 * of every PCI function in each nap.  Past KEEP_MSI_OWNERS armed MSIs,
 * pass 1 walks every device's MSIs as well.
 */
#define KEEP_MSI_OWNERS 16
static struct {
	struct device *dev;
	unsigned int irq;
} msi_owners[KEEP_MSI_OWNERS];
static unsigned int nr_msi_owners;
static bool walk_legacy, walk_msi;

/*
 * The device an MSI belongs to (a reference), or NULL if @irq is not an
 * MSI.  sparse_irq_lock keeps the interrupt allocated (PM_PSEUDOSLEEP
 * depends on X86, which selects SPARSE_IRQ: without it the lock is a
 * no-op).  The MSI core frees the interrupt before its MSI descriptor and
 * the descriptor before the device goes, unless a driver leaks its MSIs
 * (msi_device_data_release() warns then).  The interrupt of a wired
 * device behind an MSI domain (DOMAIN_BUS_WIRED_TO_MSI) has the
 * interrupt controller's descriptor: it is looked up as a legacy one.
 */
static struct device *msi_owner(unsigned int irq)
{
	struct device *dev = NULL;
#ifdef CONFIG_GENERIC_MSI_IRQ
	struct irq_data *d;
	struct msi_desc *msi;

	irq_lock_sparse();
	d = irq_get_irq_data(irq);
	msi = d ? irq_data_get_msi_desc(d) : NULL;
	if (msi && !(d->domain &&
		     d->domain->bus_token == DOMAIN_BUS_WIRED_TO_MSI))
		dev = get_device(msi->dev);
	irq_unlock_sparse();
#endif
	return dev;
}

/* Before pass 1: keep_irqs holds the armed IRQs. */
static void find_msi_owners(void)
{
	struct device *dev;
	unsigned int irq;

	nr_msi_owners = 0;
	walk_legacy = false;
	walk_msi = false;
	for_each_set_bit(irq, keep_irqs, keep_nbits) {
		dev = msi_owner(irq);
		if (!dev) {
			walk_legacy = true;
			continue;
		}
		if (nr_msi_owners == KEEP_MSI_OWNERS) {
			put_device(dev);
			walk_msi = true;
			continue;
		}
		msi_owners[nr_msi_owners].dev = dev;
		msi_owners[nr_msi_owners++].irq = irq;
	}
}

static void put_msi_owners(void)
{
	while (nr_msi_owners)
		put_device(msi_owners[--nr_msi_owners].dev);
}

/* Pass 1, parents before children (dpm_list order): the kept subtrees. */
static void mark_subtree(struct device *dev, void *data)
{
	struct device *parent = dev->parent;
	unsigned int i;

	dev_owns_armed = false;
	if (walk_msi)
		dev_any_msi(dev, irq_note_owner);
	if (walk_legacy)
		dev_any_legacy_irq(dev, irq_note_owner);
	for (i = 0; i < nr_msi_owners; i++)
		if (msi_owners[i].dev == dev)
			irq_note_owner(msi_owners[i].irq);
	if (dev->power.nosleep ||
	    (parent && parent->power.pseudosleep_kept) ||
	    is_console_dev(dev) || dev_owns_armed)
		set_kept(dev, true);
	if (dev->power.nosleep || dev_owns_armed) {
		if (nr_keep_roots < KEEP_ROOTS)
			WRITE_ONCE(keep_roots[nr_keep_roots++], get_device(dev));
		else
			keep_roots_full = true;
	}
}

static void keep_needs(struct device *dev);

/*
 * Keep a device that a kept one needs (a supplier, an IRQ's controller),
 * and what it needs in turn.  Only devices on dpm_list, which the PM core
 * holds while its list is locked: unmark() finds only those, and a device
 * being deleted is left out.
 */
static void keep_dev(struct device *dev, void *data)
{
	if (dev->power.pseudosleep_kept || !dev->power.in_dpm_list)
		return;
	set_kept(dev, true);
	keep_needs(dev);
}

static struct irq_data *irq_data_up(struct irq_data *d)
{
#ifdef CONFIG_IRQ_DOMAIN_HIERARCHY
	return d->parent_data;
#else
	return NULL;
#endif
}

/*
 * An interrupt goes through the irq domain it is mapped in and, in a
 * hierarchy, through the parent domains: a GPIO or pin controller under
 * the interrupt controller, an MSI parent.  Keep the devices behind them:
 * the domain's pm_dev (as irq_chip_pm_get() uses it), the device that
 * created it (a per-device MSI domain), and the device of its firmware
 * node (a GPIO chip's domain carries its controller's ACPI or DT node).
 * The x86 vector, IO-APIC and HPET domains have none.  Like
 * irq_chip_pm_get(), this relies on an IRQ staying mapped while its
 * device uses it: these are the IRQs of kept devices and armed ones.
 */
static void keep_irq_controllers(unsigned int irq)
{
	struct irq_data *d;

	for (d = irq_get_irq_data(irq); d; d = irq_data_up(d)) {
		if (!d->domain)
			continue;
		if (d->domain->pm_dev)
			keep_dev(d->domain->pm_dev, NULL);
		if (d->domain->dev)
			keep_dev(d->domain->dev, NULL);
		/* Cleared by device_del() before the device leaves dpm_list. */
		if (d->domain->fwnode && d->domain->fwnode->dev)
			keep_dev(d->domain->fwnode->dev, NULL);
	}
}

/* An IRQ of a kept device stays enabled. */
static bool irq_keep(unsigned int irq)
{
	if (irq < keep_nbits)
		__set_bit(irq, keep_irqs);
	return false;
}

/*
 * The IRQs of a kept device stay enabled, and so do their controllers.
 * Each IRQ's controllers are looked up once, after dev_any_irq() has
 * dropped the device's MSI descriptor lock: a controller may have MSI
 * descriptors of its own.
 */
static void keep_irqs_of(struct device *dev)
{
	unsigned int irq = 0;

	dev_any_irq(dev, irq_keep);
	while ((irq = find_next_andnot_bit(keep_irqs, seen_irqs, keep_nbits,
					   irq)) < keep_nbits) {
		__set_bit(irq, seen_irqs);
		keep_irq_controllers(irq);
	}
}

/*
 * What a kept device needs to work: its path to the root, the suppliers
 * of its device links (a PHY, a clock, regulator, GPIO or IOMMU provider)
 * and the controllers of its IRQs, each with what it needs in turn.
 * Suppliers come before their consumers in dpm_list, so they are kept
 * here, not in a later pass.  The kept flag ends the recursion.
 */
static void keep_needs(struct device *dev)
{
	struct device *p;

	dpm_visit_suppliers(dev, NULL, keep_dev);
	keep_irqs_of(dev);
	for (p = dev->parent; p && !p->power.pseudosleep_kept; p = p->parent) {
		if (!p->power.in_dpm_list)
			continue;
		set_kept(p, true);
		dpm_visit_suppliers(p, NULL, keep_dev);
		keep_irqs_of(p);
	}
}

/* Pass 2: what each kept device needs. */
static void mark_kept_needs(struct device *dev, void *data)
{
	if (dev->power.pseudosleep_kept)
		keep_needs(dev);
}

/*
 * Pass 3: count and name the kept devices.  A runtime resume queued for
 * one before it was flagged waits on the frozen pm_wq like one queued
 * after, so it ends the nap too.
 */
static void count_kept(struct device *dev, void *data)
{
	if (!dev->power.pseudosleep_kept)
		return;
	keep_count++;
	pm_pr_dbg("keeping %s awake\n", dev_name(dev));
	spin_lock_irq(&dev->power.lock);
	if (dev->power.request_pending &&
	    dev->power.request == RPM_REQ_RESUME)
		pseudosleep_kept_resume_request(dev);
	spin_unlock_irq(&dev->power.lock);
}

/* Pass 4: the kept parents and suppliers of a device the nap suspends. */
static void note_superior(struct device *sup, void *data)
{
	unsigned int i;

	if (!sup->power.pseudosleep_kept)
		return;
	for (i = 0; i < nr_held; i++)
		if (held[i] == sup)
			return;
	/* held has room for every kept device */
	held[nr_held++] = get_device(sup);
}

static void find_held(struct device *dev, void *data)
{
	if (dev->power.pseudosleep_kept)
		return;
	if (dev->parent)
		note_superior(dev->parent, NULL);
	dpm_visit_suppliers(dev, NULL, note_superior);
}

/*
 * Outside dpm_list_mtx, which a runtime PM callback may need.  A device
 * with runtime PM disabled only counts the reference (-EACCES).
 */
static void hold_superiors(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < nr_held; i++) {
		ret = pm_runtime_get_sync(held[i]);
		if (ret < 0 && ret != -EACCES)
			pm_pr_dbg("%s stays suspended under its dependents: %d\n",
				  dev_name(held[i]), ret);
	}
}

static void release_superiors(void)
{
	while (nr_held) {
		pm_runtime_put(held[--nr_held]);
		put_device(held[nr_held]);
	}
	kfree(held);
	held = NULL;
}

/*
 * Devices with no PM work: no PM callback at any level (bus, class, type,
 * PM domain, driver), not kept, not wakeup-capable
 * (wakeup_path is computed in the suspend phase), and runtime-suspended
 * with runtime PM disabled.  Those are devices a suspend would
 * direct-complete: they do not clear their parent's direct_complete or set
 * its must_resume, and nothing can runtime-resume them, or their parent
 * through them, while the nap lasts.
 */
static void mark_no_work(struct device *dev, void *data)
{
	if (dev->power.no_pm_callbacks && !dev->power.pseudosleep_kept &&
	    !dev->power.can_wakeup && pm_runtime_status_suspended(dev) &&
	    !pm_runtime_enabled(dev)) {
		dev->power.pseudosleep_skip = true;
		skip_count++;
	}
}

static void take_part(struct device *dev);

static void unskip_supplier(struct device *sup, void *data)
{
	if (sup->power.pseudosleep_skip)
		take_part(sup);
}

/*
 * A device that takes part in the nap's phases waits for its children and
 * consumers to suspend and has its parent and suppliers resume first.  So
 * its ancestors and suppliers take part too, and a device is left out only
 * with all of its children and consumers: the devices that take part keep
 * their order.  Recursion only follows suppliers that change, so it ends.
 *
 * The walk up stops at a parent that takes part already: its own
 * ancestors and suppliers were walked when its flag was cleared, or will
 * be when mark_needs() comes to it.  Each device is walked at most twice.
 */
static void take_part(struct device *dev)
{
	do {
		if (dev->power.pseudosleep_skip) {
			dev->power.pseudosleep_skip = false;
			skip_count--;
		}
		dpm_visit_suppliers(dev, NULL, unskip_supplier);
		dev = dev->parent;
	} while (dev && dev->power.pseudosleep_skip);
}

static void mark_needs(struct device *dev, void *data)
{
	if (!dev->power.pseudosleep_skip)
		take_part(dev);
}

static void clear_skip(struct device *dev, void *data)
{
	dev->power.pseudosleep_skip = false;
}

/**
 * pseudosleep_skip_mark - flag the devices a nap leaves out of its phases
 *
 * Called by dpm_prepare() once probing is blocked: until
 * pseudosleep_skip_unmark() no driver binds to a flagged device or adds a
 * child under it, and nothing else writes the PM flags next to the one set
 * here.  Acts only during a nap (between pseudosleep_keep_mark() and
 * pseudosleep_keep_unmark()) with pseudosleep.skip_no_pm_work set.
 */
void pseudosleep_skip_mark(void)
{
	if (!keep_irqs || !pseudosleep_skip_no_pm_work())
		return;
	skip_count = 0;
	dpm_for_each_dev(NULL, mark_no_work);
	dpm_for_each_dev(NULL, mark_needs);
	pm_pr_dbg("%u devices have no PM work\n", skip_count);
}

/**
 * pseudosleep_skip_unmark - clear the flags of pseudosleep_skip_mark()
 *
 * Called by dpm_complete() before probing is unblocked.
 */
void pseudosleep_skip_unmark(void)
{
	if (keep_irqs)
		dpm_for_each_dev(NULL, clear_skip);
}

static void clear_kept(struct device *dev, void *data)
{
	if (dev->power.pseudosleep_kept)
		set_kept(dev, false);
}

static void free_keep(void)
{
	while (nr_keep_roots)
		put_device(keep_roots[--nr_keep_roots]);
	keep_roots_full = false;
	put_consoles();
	bitmap_free(seen_irqs);
	seen_irqs = NULL;
	bitmap_free(keep_irqs);
	keep_irqs = NULL;
	keep_nbits = 0;
}

/**
 * pseudosleep_keep_mark - choose the devices and IRQs a nap keeps awake
 *
 * An armed IRQ whose device is not found would stay enabled while its
 * device is suspended, so the nap is refused then.
 *
 * Return: 0, -ENOMEM, or -EINVAL if no device owns some armed IRQ (the
 * device must then be kept with power/nosleep and the IRQ disarmed, see
 * Documentation/pseudosleep.rst).  Nothing is marked on error.
 */
int pseudosleep_keep_mark(void)
{
	unsigned int irq;

	keep_nbits = nr_irqs;
	keep_irqs = bitmap_zalloc(keep_nbits, GFP_KERNEL);
	seen_irqs = bitmap_zalloc(keep_nbits, GFP_KERNEL);
	if (!keep_irqs || !seen_irqs) {
		free_keep();
		return -ENOMEM;
	}
	pseudosleep_copy_armed(keep_irqs, keep_nbits);
	keep_count = 0;
	find_consoles();
	find_msi_owners();
	dpm_for_each_dev(NULL, mark_subtree);
	put_msi_owners();
	/* Armed but owned by no device on dpm_list. */
	bitmap_andnot(seen_irqs, keep_irqs, seen_irqs, keep_nbits);
	irq = find_first_bit(seen_irqs, keep_nbits);
	if (irq < keep_nbits) {
		pr_err_once("no device found for armed wake IRQ %u: not napping (see Documentation/pseudosleep.rst)\n",
			    irq);
		pm_pr_dbg("no device found for armed wake IRQ %u\n", irq);
		dpm_for_each_dev(NULL, clear_kept);
		free_keep();
		return -EINVAL;
	}
	bitmap_zero(seen_irqs, keep_nbits);
	dpm_for_each_dev(NULL, mark_kept_needs);
	dpm_for_each_dev(NULL, count_kept);
	bitmap_free(seen_irqs);
	seen_irqs = NULL;
	held = kcalloc(keep_count, sizeof(*held), GFP_KERNEL);
	if (keep_count && !held) {
		dpm_for_each_dev(NULL, clear_kept);
		free_keep();
		return -ENOMEM;
	}
	dpm_for_each_dev(NULL, find_held);
	hold_superiors();
	pm_pr_dbg("%u devices and IRQs %*pbl stay awake\n",
		  keep_count, keep_nbits, keep_irqs);
	return 0;
}

/**
 * pseudosleep_keep_consoles - are all enabled consoles kept awake
 *
 * Valid between pseudosleep_keep_mark() and pseudosleep_keep_unmark().
 *
 * Return: true if the device of every enabled console was found and kept.
 */
bool pseudosleep_keep_consoles(void)
{
	return consoles_kept;
}

void pseudosleep_keep_unmark(void)
{
	dpm_for_each_dev(NULL, clear_kept);
	release_superiors();
	free_keep();
}

/**
 * pseudosleep_irq_kept - should suspend_device_irqs() leave an IRQ enabled
 * @irq: Linux IRQ number
 *
 * Return: true during a nap for armed IRQs and the IRQs of kept devices.
 */
bool pseudosleep_irq_kept(unsigned int irq)
{
	return keep_irqs && irq < keep_nbits && test_bit(irq, keep_irqs);
}

/**
 * pseudosleep_kept_resume_request - a kept device has a runtime resume queued
 * @dev: a device the nap keeps running (power.pseudosleep_kept)
 *
 * Called by rpm_resume(), under @dev's power.lock, for an asynchronous
 * resume.  pm_wq is frozen until the nap ends, so the resume would wait for
 * whatever ends it; end it now, as a wakeup interrupt would.
 */
void pseudosleep_kept_resume_request(struct device *dev)
{
	enum pseudosleep_phase phase = READ_ONCE(pseudosleep_phase);
	struct device *d;
	unsigned int i, n = READ_ONCE(nr_keep_roots);
	bool root = READ_ONCE(keep_roots_full);

	/* Once woken, pm_wq is about to thaw. */
	if (phase != PSEUDOSLEEP_ENTERING && phase != PSEUDOSLEEP_NAPPING)
		return;
	/* Only pointers are compared: unmark() clears the flags first. */
	for (d = dev; d && !root; d = d->parent)
		for (i = 0; i < n && !root; i++)
			root = READ_ONCE(keep_roots[i]) == d;
	if (!root)
		return;
	pm_pr_dbg("%s needs to resume, ending the nap\n", dev_name(dev));
	/* Under dev->power.lock: the wakeup source, not pm_wakeup_dev_event() */
	if (dev->power.wakeup)
		pm_wakeup_ws_event(dev->power.wakeup, 0, true);
	else
		pm_system_wakeup();
}
