/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which devices a nap suspends: napd's device policy.
 *
 * A nap suspends every device that nothing keeps awake.  Some devices
 * cost far more to suspend and resume than a nap of a second can save,
 * and bring their own idle power management: USB host controllers (idle
 * USB autosuspends), NVMe (autonomous power states) and SATA (link power
 * management).  A PCI function that no driver binds gains nothing from a
 * nap: the PCI core only saves its config space and writes it back, and
 * never lowers its power.  The default policy ("lean") keeps those awake
 * through power/nosleep on the device; the kernel keeps everything below
 * and above a kept device with it, so only functions on a root bus and
 * without children are kept.
 * nap-keep and nap-suspend override the policy per device;
 * device-policy = all turns the class rules off.
 *
 * The classification reads sysfs only: PCI class codes, driver links, and
 * the usbN root hubs under a non-PCI host controller.
 */
#ifndef NAPD_DEVPOLICY_H
#define NAPD_DEVPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "opts.h"
#include "sysfs.h"

/* Why a device is kept awake or left to the nap. */
enum dev_why {
	WHY_DEFAULT,		/* no rule keeps it: the nap suspends it */
	WHY_USB_HOST,		/* class rule: USB host controller */
	WHY_NVME,		/* class rule: NVMe controller */
	WHY_SATA,		/* class rule: SATA controller */
	WHY_NO_DRIVER,		/* rule: root-bus PCI function, no driver or child */
	WHY_NAP_KEEP,		/* nap-keep */
	WHY_NAP_SUSPEND,	/* nap-suspend */
	WHY_NIC,		/* a wake NIC's device */
	WHY_KEEP_AWAKE,		/* keep-awake */
	WHY_NOSLEEP,		/* power/nosleep already 1, set by no rule */
	WHY_UNDER,		/* below a kept device */
	WHY_ABOVE,		/* an ancestor of a kept device */
};

struct devinfo {
	char *path;		/* sysfs directory, as found under devices/ */
	const char *name;	/* its last component: the kernel's dev_name */
	int parent;		/* index of the parent device, or -1 */
	int kept_by;		/* the device whose rule keeps it, or -1 */
	enum dev_why why;
	unsigned int pci_class;	/* class code, if is_pci */
	bool is_pci;		/* a PCI function (class 0 is one too) */
	bool on_bus;		/* its subsystem is a bus, not a class */
	bool has_driver;	/* a driver is bound */
	bool has_nosleep;	/* power/nosleep exists */
	bool nosleep;		/* and reads 1 */
	bool rpm_suspended;	/* power/runtime_status is "suspended" */
};

struct devtree {
	struct devinfo *d;
	int nr, cap;
};

/*
 * Walk @o->sysfs_root/devices and decide each device's fate in a nap
 * under @o's policy, overrides, wake devices and keep-awake devices.
 * 0, or -1 with a message in @err (an override that names no device, a
 * nap-suspend of a wake NIC).  devtree_free() in both cases.
 */
int devpolicy_scan(const struct napd_opts *o, struct devtree *t, char *err,
		   size_t errlen);

void devtree_free(struct devtree *t);

/* Is @i kept awake in a nap? */
bool dev_kept(const struct devtree *t, int i);

/*
 * Is @t->d[@i] one that --list-devices shows: a PCI device, a device with
 * a driver on a bus, or one a rule keeps or names?
 */
bool devpolicy_listed(const struct devtree *t, int i);

/* A short reason for @t->d[@i] ("class rule: NVMe controller"). */
const char *dev_why_str(const struct devtree *t, int i, char *buf,
			size_t size);

/*
 * Make the policy's changes: power/nosleep 1 on the topmost device each
 * rule keeps (nap-keep and class rules; the kernel keeps the subtree),
 * 0 on a nap-suspend device that reads 1.  Recorded in @st for restore.
 * Returns the number of devices changed, or -1 with a message in @err.
 */
int devpolicy_apply(const struct devtree *t, struct settings *st, char *err,
		    size_t errlen);

/*
 * On a reload: the device policy of @fresh set back to @old's, which
 * napd applied at start (a change takes a restart).  Returns whether
 * @fresh asked for a change, or -1 if out of memory.
 */
int devpolicy_keep_opts(struct napd_opts *fresh, const struct napd_opts *old);

/* Is @arg a valid nap-keep or nap-suspend value (path or PCI address)? */
bool devpolicy_valid_name(const char *arg);

/*
 * napd --list-devices: every PCI device and every device with a driver
 * (and every other one a rule names or the last nap timed), whether a nap suspends it, why, and its
 * suspend and resume cost in the last nap napd saw.  Exit status.
 */
int devpolicy_list(const struct napd_opts *o, FILE *out);

#endif /* NAPD_DEVPOLICY_H */
