// SPDX-License-Identifier: GPL-2.0
/*
 * napd's device policy: which devices a nap leaves alone.  See
 * devpolicy.h.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fail.h"
#include "devpolicy.h"
#include "devtiming.h"

/* PCI base class and subclass (the class file's upper 16 bits). */
#define PCI_USB_HOST	0x0c03	/* serial bus: USB (UHCI/OHCI/EHCI/xHCI) */
#define PCI_SATA	0x0106	/* mass storage: SATA (AHCI) */
#define PCI_NVM		0x0108	/* mass storage: non-volatile memory (NVMe) */

/* "0000:00:1f.2" (domain:bus:slot.function), all hex. */
static bool is_pci_addr(const char *s, bool domain)
{
	const char *pat = domain ? "xxxx:xx:xx.x" : "xx:xx.x";
	size_t i;

	if (strlen(s) != strlen(pat))
		return false;
	for (i = 0; pat[i]; i++) {
		if (pat[i] == 'x' ? !isxdigit((unsigned char)s[i]) :
				    s[i] != pat[i])
			return false;
	}
	return true;
}

bool devpolicy_valid_name(const char *arg)
{
	if (*arg == '/')
		return strlen(arg) < PATH_MAX && !strstr(arg, "/../") &&
		       !strchr(arg, ' ');
	return is_pci_addr(arg, true) || is_pci_addr(arg, false);
}

static bool same_list(const char *const *a, int na, const char *const *b,
		      int nb)
{
	int i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

int devpolicy_keep_opts(struct napd_opts *fresh, const struct napd_opts *old)
{
	bool changed = fresh->dev_policy != old->dev_policy ||
		!same_list(fresh->nap_keep, fresh->nr_nap_keep, old->nap_keep,
			   old->nr_nap_keep) ||
		!same_list(fresh->nap_suspend, fresh->nr_nap_suspend,
			   old->nap_suspend, old->nr_nap_suspend);
	int i;

	fresh->dev_policy = old->dev_policy;
	fresh->nr_nap_keep = old->nr_nap_keep;
	fresh->nr_nap_suspend = old->nr_nap_suspend;
	/* Copies: the old strings go with the old settings. */
	for (i = 0; i < old->nr_nap_keep; i++) {
		fresh->nap_keep[i] = napd_opts_strdup(fresh, old->nap_keep[i]);
		if (!fresh->nap_keep[i])
			return -1;
	}
	for (i = 0; i < old->nr_nap_suspend; i++) {
		fresh->nap_suspend[i] = napd_opts_strdup(fresh,
							 old->nap_suspend[i]);
		if (!fresh->nap_suspend[i])
			return -1;
	}
	return changed;
}

void devtree_free(struct devtree *t)
{
	int i;

	for (i = 0; i < t->nr; i++)
		free(t->d[i].path);
	free(t->d);
	memset(t, 0, sizeof(*t));
}

static bool read_flag(const char *dir, const char *file, const char *want)
{
	char path[PATH_MAX], val[64];

	if (path_fmt(path, sizeof(path), "%s/%s", dir, file) ||
	    sysfs_read(path, val, sizeof(val)) < 0)
		return false;
	return !strcmp(val, want);
}

/* Does @dir/subsystem point to a bus (…/bus/NAME)? @bus: that name too. */
static bool subsystem_is(const char *dir, const char *kind, const char *bus)
{
	char path[PATH_MAX], target[PATH_MAX], *base;
	ssize_t n;

	if (path_fmt(path, sizeof(path), "%s/subsystem", dir))
		return false;
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	base = strrchr(target, '/');
	if (!base || base - target < (ssize_t)strlen(kind) + 1 ||
	    strncmp(base - strlen(kind), kind, strlen(kind)) ||
	    base[-(ssize_t)strlen(kind) - 1] != '/')
		return false;
	return !bus || !strcmp(base + 1, bus);
}

static int add_dev(struct devtree *t, const char *path, int parent)
{
	struct devinfo *d;
	char file[PATH_MAX], val[64];

	if (t->nr == t->cap) {
		int cap = t->cap ? 2 * t->cap : 256;

		d = realloc(t->d, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		t->d = d;
		t->cap = cap;
	}
	d = &t->d[t->nr];
	memset(d, 0, sizeof(*d));
	d->path = strdup(path);
	if (!d->path)
		return -ENOMEM;
	d->name = strrchr(d->path, '/') + 1;
	d->parent = parent;
	d->kept_by = -1;
	d->on_bus = subsystem_is(path, "bus", NULL);
	d->has_driver = !path_fmt(file, sizeof(file), "%s/driver", path) &&
			path_exists(file);
	if (!path_fmt(file, sizeof(file), "%s/power/nosleep", path)) {
		d->has_nosleep = path_exists(file);
		d->nosleep = read_flag(path, "power/nosleep", "1");
	}
	d->rpm_suspended = read_flag(path, "power/runtime_status",
				     "suspended");
	/* PCI: the device's name is its address and it has a class file. */
	if (is_pci_addr(d->name, true) &&
	    !path_fmt(file, sizeof(file), "%s/class", path) &&
	    sysfs_read(file, val, sizeof(val)) > 0 &&
	    !strncmp(val, "0x", 2)) {
		d->pci_class = strtoul(val + 2, NULL, 16);
		d->is_pci = true;
	}
	return t->nr++;
}

/*
 * Every device below @dir (a directory with a power/ subdirectory), parents
 * before children.  Links are not followed: each device is seen once.
 */
static int walk(struct devtree *t, const char *dir, int parent, int depth)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int ret = 0, me = parent;

	if (depth > 40)
		return 0;
	if (depth && !path_fmt(path, sizeof(path), "%s/power", dir) &&
	    path_exists(path)) {
		me = add_dev(t, dir, parent);
		if (me < 0)
			return me;
	}
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    !strcmp(de->d_name, "power"))
			continue;
		if (path_fmt(path, sizeof(path), "%s/%s", dir, de->d_name))
			continue;
		ret = walk(t, path, me, depth + 1);
		if (ret)
			break;
	}
	closedir(d);
	return ret;
}

/* A child named usbN on the usb bus: a USB root hub, so @i is a host. */
static bool has_root_hub(const struct devtree *t, int i)
{
	int j;

	for (j = i + 1; j < t->nr; j++) {
		const char *n = t->d[j].name;

		if (t->d[j].parent != i || strncmp(n, "usb", 3) ||
		    !isdigit((unsigned char)n[3]))
			continue;
		if (subsystem_is(t->d[j].path, "bus", "usb"))
			return true;
	}
	return false;
}

/* Has @i a child device?  Children come after their parent in @t. */
static bool has_children(const struct devtree *t, int i)
{
	int j;

	for (j = i + 1; j < t->nr; j++)
		if (t->d[j].parent == i)
			return true;
	return false;
}

/* Is @i's parent no PCI function (a host bridge's pciDDDD:BB)? */
static bool on_root_bus(const struct devtree *t, int i)
{
	int p = t->d[i].parent;

	return p < 0 || !is_pci_addr(t->d[p].name, true);
}

static enum dev_why class_rule(const struct devtree *t, int i)
{
	unsigned int cls = t->d[i].pci_class >> 8;

	/*
	 * The PCI core suspends a function without a driver by saving its
	 * config space and resumes it by writing that back: no power saved
	 * on the function, a few config cycles and, with pm_async, a work
	 * item per phase spent.  Keeping one keeps its subtree and every
	 * device above it: a bridge with devices below it is left to the
	 * nap, and so is a function below a PCI bridge or port, which could
	 * otherwise go to D3 (or lose its slot power) with it.  Only
	 * functions on a root bus (a host bridge, an LPC or SMBus function)
	 * are kept.  Other devices without a driver have no device PM to
	 * skip, and none of their own.
	 */
	if (!t->d[i].has_driver)
		return t->d[i].is_pci && !has_children(t, i) &&
		       on_root_bus(t, i) ? WHY_NO_DRIVER : WHY_DEFAULT;
	if (cls == PCI_USB_HOST)
		return WHY_USB_HOST;
	if (cls == PCI_NVM)
		return WHY_NVME;
	if (cls == PCI_SATA)
		return WHY_SATA;
	if (!t->d[i].is_pci && has_root_hub(t, i))
		return WHY_USB_HOST;
	return WHY_DEFAULT;
}

/* The device an override names: a sysfs path or a PCI address. */
static int find_named(const struct devtree *t, const char *arg)
{
	char want[PATH_MAX], real[PATH_MAX], pci[16];
	int i;

	if (*arg == '/') {
		if (!realpath(arg, want))
			return -1;
		for (i = 0; i < t->nr; i++)
			if (realpath(t->d[i].path, real) && !strcmp(real, want))
				return i;
		return -1;
	}
	snprintf(pci, sizeof(pci), "%s%s", is_pci_addr(arg, false) ?
		 "0000:" : "", arg);
	for (i = 0; i < t->nr; i++)
		if (t->d[i].is_pci && !strcasecmp(t->d[i].name, pci))
			return i;
	return -1;
}

/* A wake device's NIC (its lower devices' for a bond or VLAN). */
static void mark_nic(struct devtree *t, const char *root, const char *dev,
		     int depth)
{
	char path[PATH_MAX], real[PATH_MAX], dir[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int i;

	if (depth > 8 ||
	    path_fmt(path, sizeof(path), "%s/class/net/%s/device", root, dev))
		return;
	if (realpath(path, real)) {
		for (i = 0; i < t->nr; i++) {
			char mine[PATH_MAX];

			if (realpath(t->d[i].path, mine) &&
			    !strcmp(mine, real)) {
				t->d[i].why = WHY_NIC;
				t->d[i].kept_by = i;
			}
		}
		return;
	}
	if (path_fmt(dir, sizeof(dir), "%s/class/net/%s", root, dev))
		return;
	d = opendir(dir);
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "lower_", 6) && de->d_name[6])
			mark_nic(t, root, de->d_name + 6, depth + 1);
	if (d)
		closedir(d);
}

/* keep-awake takes a path or a class device name (ttyS0). */
static int find_keep_awake(const struct devtree *t, const char *root,
			   const char *arg)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int found = -1;

	if (strchr(arg, '/'))
		return find_named(t, arg);
	if (path_fmt(path, sizeof(path), "%s/class", root))
		return -1;
	d = opendir(path);
	while (d && found < 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    path_fmt(path, sizeof(path), "%s/class/%s/%s/device", root,
			     de->d_name, arg) || !path_exists(path))
			continue;
		found = find_named(t, path);
	}
	if (d)
		closedir(d);
	return found;
}

static int apply_overrides(const struct napd_opts *o, struct devtree *t,
			   const char *const *list, int nr, enum dev_why why,
			   const char *key, char *err, size_t errlen)
{
	int i, j;

	for (i = 0; i < nr; i++) {
		j = find_named(t, list[i]);
		if (j < 0)
			return fail(err, errlen, "%s '%s': no such device under %s/devices",
				    key, list[i], o->sysfs_root);
		if (why == WHY_NAP_SUSPEND && t->d[j].why == WHY_NIC)
			return fail(err, errlen,
				    "%s '%s': the device of a wake NIC stays awake",
				    key, list[i]);
		t->d[j].why = why;
		t->d[j].kept_by = why == WHY_NAP_KEEP ? j : -1;
	}
	return 0;
}

int devpolicy_scan(const struct napd_opts *o, struct devtree *t, char *err,
		   size_t errlen)
{
	char top[PATH_MAX];
	int i, j, ret;

	memset(t, 0, sizeof(*t));
	if (path_fmt(top, sizeof(top), "%s/devices", o->sysfs_root))
		return fail(err, errlen, "path too long under %s",
			    o->sysfs_root);
	ret = walk(t, top, -1, 0);
	if (ret)
		return fail(err, errlen, "cannot list %s: %s", top,
			    strerror(-ret));

	for (i = 0; i < o->nr_wake_devs; i++)
		mark_nic(t, o->sysfs_root, o->wake_devs[i], 0);
	for (i = 0; i < o->nr_keep; i++) {
		j = find_keep_awake(t, o->sysfs_root, o->keep_awake[i]);
		if (j >= 0 && t->d[j].why == WHY_DEFAULT) {
			t->d[j].why = WHY_KEEP_AWAKE;
			t->d[j].kept_by = j;
		}
	}
	if (apply_overrides(o, t, o->nap_keep, o->nr_nap_keep, WHY_NAP_KEEP,
			    "nap-keep", err, errlen) ||
	    apply_overrides(o, t, o->nap_suspend, o->nr_nap_suspend,
			    WHY_NAP_SUSPEND, "nap-suspend", err, errlen))
		return -1;

	/* Parents come first: a child sees its parent's verdict. */
	for (i = 0; i < t->nr; i++) {
		struct devinfo *d = &t->d[i];
		int p = d->parent;

		if (p >= 0 && t->d[p].kept_by >= 0) {
			if (d->why == WHY_DEFAULT || d->why == WHY_NAP_SUSPEND ||
			    d->why == WHY_NAP_KEEP)
				d->why = WHY_UNDER;
			if (d->why == WHY_UNDER)
				d->kept_by = t->d[p].kept_by;
			else
				d->kept_by = i;
			continue;
		}
		if (d->why != WHY_DEFAULT)
			continue;
		if (o->dev_policy == NAPD_POLICY_LEAN)
			d->why = class_rule(t, i);
		if (d->why == WHY_DEFAULT && d->nosleep)
			d->why = WHY_NOSLEEP;
		if (d->why != WHY_DEFAULT)
			d->kept_by = i;
	}
	/* The kernel keeps the path to the root of each kept device. */
	for (i = t->nr - 1; i >= 0; i--) {
		int p = t->d[i].parent;

		if (t->d[i].kept_by < 0 || p < 0 || t->d[p].kept_by >= 0)
			continue;
		t->d[p].why = WHY_ABOVE;
		t->d[p].kept_by = t->d[i].kept_by;
	}
	return 0;
}

bool dev_kept(const struct devtree *t, int i)
{
	return t->d[i].kept_by >= 0;
}

bool devpolicy_listed(const struct devtree *t, int i)
{
	const struct devinfo *d = &t->d[i];

	return d->is_pci || (d->on_bus && d->has_driver) ||
	       d->why != WHY_DEFAULT;
}

static const char *short_path(const struct devtree *t, int i)
{
	const char *p = strstr(t->d[i].path, "/devices/");

	return p ? p + 9 : t->d[i].path;
}

const char *dev_why_str(const struct devtree *t, int i, char *buf,
			size_t size)
{
	const struct devinfo *d = &t->d[i];
	const char *by = d->kept_by >= 0 ? t->d[d->kept_by].name : "?";

	switch (d->why) {
	case WHY_DEFAULT:
		if (d->rpm_suspended)
			snprintf(buf, size,
				 "default; runtime-suspended already (the nap may skip it: direct_complete)");
		else
			snprintf(buf, size, "default: no rule keeps it");
		break;
	case WHY_USB_HOST:
		snprintf(buf, size, "class rule: USB host controller%s",
			 d->is_pci ? " (PCI class 0c03)" : " (has a USB root hub)");
		break;
	case WHY_NVME:
		snprintf(buf, size, "class rule: NVMe controller (PCI class 0108)");
		break;
	case WHY_SATA:
		snprintf(buf, size, "class rule: SATA controller (PCI class 0106)");
		break;
	case WHY_NO_DRIVER:
		snprintf(buf, size,
			 "rule: PCI function on a root bus without a driver (a suspend only saves and restores its config space)");
		break;
	case WHY_NAP_KEEP:
		snprintf(buf, size, "override: nap-keep");
		break;
	case WHY_NAP_SUSPEND:
		snprintf(buf, size, "override: nap-suspend");
		break;
	case WHY_NIC:
		snprintf(buf, size, "kept NIC (wake-dev)");
		break;
	case WHY_KEEP_AWAKE:
		snprintf(buf, size, "keep-awake");
		break;
	case WHY_NOSLEEP:
		snprintf(buf, size, "power/nosleep is 1 (set outside napd's rules)");
		break;
	case WHY_UNDER:
		snprintf(buf, size, "under kept %s", by);
		break;
	case WHY_ABOVE:
		snprintf(buf, size, "parent of kept %s", by);
		break;
	}
	return buf;
}

/* Kept by a rule of napd's policy (not by the kernel's parent rules)? */
static bool policy_keeps(const struct devinfo *d)
{
	return d->why == WHY_USB_HOST || d->why == WHY_NVME ||
	       d->why == WHY_SATA || d->why == WHY_NO_DRIVER ||
	       d->why == WHY_NAP_KEEP;
}

int devpolicy_apply(const struct devtree *t, struct settings *st, char *err,
		    size_t errlen)
{
	char path[PATH_MAX];
	int i, ret, n = 0;

	for (i = 0; i < t->nr; i++) {
		const struct devinfo *d = &t->d[i];
		const char *val;
		bool pending;

		if (path_fmt(path, sizeof(path), "%s/power/nosleep", d->path))
			return fail(err, errlen, "path too long: %s", d->path);
		/* A killed napd's setting: changed again to take it over. */
		pending = settings_pending(st, path);
		if (policy_keeps(d) && (!d->nosleep || pending))
			val = "1";
		else if (d->why == WHY_NAP_SUSPEND && (d->nosleep || pending))
			val = "0";
		else
			continue;
		if (!d->has_nosleep)
			return fail(err, errlen, "cannot keep %s awake: %s/power/nosleep missing",
				    d->name, d->path);
		ret = settings_change(st, path, d->nosleep ? "1" : "0", val);
		if (ret)
			return fail(err, errlen, "cannot write '%s' to %s: %s",
				    val, path, strerror(-ret));
		n++;
	}
	return n;
}

static void fmt_ms(const struct devcost *c, bool resume, char *buf,
		   size_t size)
{
	if (!c || !c->callbacks)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.2f", resume ? c->resume_ms :
			 c->suspend_ms);
}

int devpolicy_list(const struct napd_opts *o, FILE *out)
{
	struct devcosts costs;
	struct devtree t;
	char err[PATH_MAX + 256], why[160], sus[24], res[24];
	int i, ret, kept = 0, suspended = 0;

	if (devpolicy_scan(o, &t, err, sizeof(err))) {
		fprintf(stderr, "napd: %s\n", err);
		devtree_free(&t);
		return 1;
	}
	ret = devtiming_read(o->sysfs_root, &costs);
	fprintf(out, "# device policy %s; nap costs: ",
		o->dev_policy == NAPD_POLICY_LEAN ? "lean" : "all");
	if (ret == -ENOENT)
		fprintf(out, "%s\n",
			"none (no trace instance: napd is not running, or could not make one at start; see its log)");
	else if (ret)
		fprintf(out, "%s\n", strerror(-ret));
	else if (costs.naps)
		fprintf(out,
			"the last nap in tracing/instances/%s (ms of system-sleep callbacks; -: none ran)\n",
			DEVTIMING_INSTANCE);
	else
		fprintf(out, "no nap yet\n");
	fprintf(out, "%-44s %-7s %10s %10s  %s\n", "DEVICE", "NAP",
		"SUSPEND_MS", "RESUME_MS", "WHY");
	for (i = 0; i < t.nr; i++) {
		const struct devcost *c = ret ? NULL :
					  devcost_find(&costs, t.d[i].name);
		bool show = c || devpolicy_listed(&t, i);

		if (!show)
			continue;
		if (dev_kept(&t, i))
			kept++;
		else
			suspended++;
		fmt_ms(c, false, sus, sizeof(sus));
		fmt_ms(c, true, res, sizeof(res));
		fprintf(out, "%-44s %-7s %10s %10s  %s\n", short_path(&t, i),
			dev_kept(&t, i) ? "keep" : "suspend", sus, res,
			dev_why_str(&t, i, why, sizeof(why)));
	}
	fprintf(out, "# %d listed devices kept awake, %d left to the nap%s\n",
		kept, suspended, t.nr && !t.d[0].has_nosleep ?
		"; this kernel has no power/nosleep: every device suspends" :
		"");
	devcosts_free(&costs);
	devtree_free(&t);
	return 0;
}
