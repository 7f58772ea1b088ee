// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel capability checks and the settings napd changes.
 *
 * All checks run before the first write so that a refused start leaves
 * the machine exactly as it was.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "setup.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A device's power/nosleep file, with the path for messages. */
struct nosleep {
	char path[PATH_MAX];
	const char *what;
};

/*
 * --keep-awake takes a sysfs device directory or a class device name:
 * ttyS0 is found as <sysfs>/class/tty/ttyS0/device.
 */
static int keep_awake_dir(const char *sysfs_root, const char *arg,
			  char *dir, size_t size)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int found = -ENOENT;

	if (strchr(arg, '/'))
		return path_exists(arg) ? path_fmt(dir, size, "%s", arg) :
					  -ENOENT;

	if (path_fmt(path, sizeof(path), "%s/class", sysfs_root))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (path_fmt(path, sizeof(path), "%s/class/%s/%s/device",
			     sysfs_root, de->d_name, arg))
			continue;
		if (path_exists(path)) {
			found = path_fmt(dir, size, "%s", path);
			break;
		}
	}
	closedir(d);
	return found;
}

static int change(struct napd_setup *s, const char *path, const char *old,
		  const char *val, char *err, size_t errlen)
{
	int ret = settings_change(&s->settings, path, old, val);

	if (ret)
		return fail(err, errlen, "cannot write '%s' to %s: %s", val,
			    path, strerror(-ret));
	return 0;
}

static int set_nosleep(struct napd_setup *s, const char *path,
		       char *err, size_t errlen)
{
	char old[SETTING_VAL_MAX];
	int ret = sysfs_read(path, old, sizeof(old));

	if (ret < 0)
		return fail(err, errlen, "cannot read %s: %s", path,
			    strerror(-ret));
	return change(s, path, old, "1", err, errlen);
}

/*
 * Choose pseudosleep.wake_on; the change itself is made with the others,
 * after every check (wake_on_apply()).
 */
static int wake_on_setup(const struct napd_opts *o, struct napd_setup *s,
			 char *err, size_t errlen)
{
	bool have;
	int ret;

	if (path_fmt(s->wake_on, sizeof(s->wake_on),
		     "%s/module/pseudosleep/parameters/wake_on", o->sysfs_root))
		return fail(err, errlen, "path too long under %s",
			    o->sysfs_root);
	have = path_exists(s->wake_on);
	if (o->wake_on == NAPD_WAKE_TASK && !have)
		return fail(err, errlen,
			    "--wake-on task: this kernel has no pseudosleep.wake_on (%s)",
			    s->wake_on);
	if (!have)
		return 0;	/* an older kernel: armed IRQs end naps */
	ret = sysfs_read(s->wake_on, s->wake_on_old, sizeof(s->wake_on_old));
	if (ret < 0)
		return fail(err, errlen, "cannot read %s: %s", s->wake_on,
			    strerror(-ret));
	s->wake_on_new = o->wake_on == NAPD_WAKE_IRQ ? "irq" : "task";
	if (!strcmp(s->wake_on_new, "task")) {
		if (path_fmt(s->rx_packets, sizeof(s->rx_packets),
			     "%s/net/snmp", o->proc_root))
			return fail(err, errlen, "path too long under %s",
				    o->proc_root);
		if (!path_exists(s->rx_packets))
			return fail(err, errlen, "%s missing", s->rx_packets);
		s->rx_snmp = true;
	}
	return 0;
}

static int wake_on_apply(struct napd_setup *s, char *err, size_t errlen)
{
	/*
	 * Already as wanted: nothing to change, unless a killed napd set it
	 * so; then it is changed "again" to take the saved original over.
	 */
	if (!s->wake_on_new || (!strcmp(s->wake_on_old, s->wake_on_new) &&
				!settings_pending(&s->settings, s->wake_on)))
		return 0;
	return change(s, s->wake_on, s->wake_on_old, s->wake_on_new, err,
		      errlen);
}

int napd_setup(const struct napd_opts *o, struct napd_setup *s,
	       char *err, size_t errlen)
{
	const char *root = o->sysfs_root, *mode = napd_mode_name(o->mode);
	bool pseudo = o->mode == NAPD_MODE_PSEUDO;
	char mem_sleep[PATH_MAX], wake_irq[PATH_MAX], path[PATH_MAX];
	char list[SETTING_VAL_MAX], cur[64], old_irqs[SETTING_VAL_MAX];
	char irqlist[SETTING_VAL_MAX];
	struct nosleep nosleep[1 + NAPD_MAX_KEEP];
	int nr_nosleep = 0, ret, i;
	bool arm_irqs;

	memset(s, 0, sizeof(*s));
	s->settings.dry_run = o->dry_run;

	/*
	 * Settings a napd killed with SIGKILL left: their originals are the
	 * originals, whatever the files say now (settings_change()).
	 */
	if (o->state_dir && *o->state_dir) {
		if (path_fmt(s->settings.file, sizeof(s->settings.file),
			     "%s/" SETTINGS_FILE, o->state_dir))
			return fail(err, errlen, "path too long under %s",
				    o->state_dir);
		ret = settings_load(&s->settings, err, errlen);
		if (ret < 0)
			return -1;
		s->recovered = ret;
	}

	if (path_fmt(s->state, sizeof(s->state), "%s/power/state", root) ||
	    path_fmt(s->wakeup_count, sizeof(s->wakeup_count),
		     "%s/power/wakeup_count", root) ||
	    path_fmt(s->pm_wakeup_irq, sizeof(s->pm_wakeup_irq),
		     "%s/power/pm_wakeup_irq", root) ||
	    path_fmt(s->pseudo_dir, sizeof(s->pseudo_dir),
		     "%s/power/pseudosleep", root) ||
	    path_fmt(mem_sleep, sizeof(mem_sleep), "%s/power/mem_sleep",
		     root) ||
	    path_fmt(wake_irq, sizeof(wake_irq), "%s/power/wake_irq", root) ||
	    path_fmt(s->rx_packets, sizeof(s->rx_packets),
		     "%s/class/net/%s/statistics/rx_packets", root,
		     o->wake_dev))
		return fail(err, errlen, "path too long under %s", root);

	/* What sleep modes does this kernel have? */
	s->have_pseudo = path_exists(s->pseudo_dir);
	if (pseudo && !s->have_pseudo)
		return fail(err, errlen,
			    "this kernel has no pseudo-sleep (%s not found); boot a pseudo-sleep kernel or use --mode s2idle or --mode deep",
			    s->pseudo_dir);
	ret = sysfs_read(mem_sleep, list, sizeof(list));
	if (ret < 0)
		return fail(err, errlen,
			    "cannot read %s: %s (no suspend support in this kernel?)",
			    mem_sleep, strerror(-ret));
	if (!mem_sleep_offers(list, mode))
		return fail(err, errlen,
			    "%s offers '%s', not '%s'%s", mem_sleep, list,
			    mode, pseudo ? ": this kernel has no pseudo-sleep" :
			    "");
	if (mem_sleep_current(list, cur, sizeof(cur)))
		return fail(err, errlen, "cannot parse %s: '%s'", mem_sleep,
			    list);
	if (!path_exists(s->state) || !path_exists(s->wakeup_count))
		return fail(err, errlen, "%s or %s missing", s->state,
			    s->wakeup_count);

	/*
	 * pseudosleep.wake_on: with "task" the kernel serves ARP, pings and
	 * the like during a nap, so napd's activity signal becomes the TCP
	 * segments and UDP datagrams of /proc/net/snmp instead of every
	 * packet of the wake device.
	 */
	if (pseudo && wake_on_setup(o, s, err, errlen))
		return -1;

	/* The wake device: its traffic counter, IRQs and nosleep flag. */
	if (path_fmt(path, sizeof(path), "%s/class/net/%s", root,
		     o->wake_dev) || !path_exists(path))
		return fail(err, errlen, "no network device '%s' (%s)",
			    o->wake_dev, path);
	if (!s->rx_snmp && !path_exists(s->rx_packets))
		return fail(err, errlen, "%s missing", s->rx_packets);

	s->nr_irqs = irqs_resolve(root, o->proc_root, o->wake_dev, s->irqs,
				  NAPD_MAX_IRQS, &s->irq_src);
	/* Only the armed IRQs end a pseudo nap: none would mean forever. */
	if (pseudo && !s->nr_irqs)
		return fail(err, errlen,
			    "cannot find the IRQs of '%s' (no msi_irqs or irq in its sysfs device, nothing in interrupts)",
			    o->wake_dev);
	arm_irqs = s->nr_irqs && (pseudo || path_exists(wake_irq));
	if (arm_irqs) {
		ret = sysfs_read(wake_irq, old_irqs, sizeof(old_irqs));
		if (ret < 0)
			return fail(err, errlen, "cannot read %s: %s",
				    wake_irq, strerror(-ret));
		if (irqlist_format(s->irqs, s->nr_irqs, irqlist,
				   sizeof(irqlist)))
			return fail(err, errlen, "too many IRQs");
	}

	if (path_fmt(nosleep[0].path, sizeof(nosleep[0].path),
		     "%s/class/net/%s/device/power/nosleep", root,
		     o->wake_dev))
		return fail(err, errlen, "path too long");
	nosleep[0].what = o->wake_dev;
	nr_nosleep = 1;
	for (i = 0; i < o->nr_keep; i++) {
		char dir[PATH_MAX];
		struct nosleep *n = &nosleep[nr_nosleep];

		if (keep_awake_dir(root, o->keep_awake[i], dir, sizeof(dir)))
			return fail(err, errlen,
				    "--keep-awake '%s': no such device",
				    o->keep_awake[i]);
		if (path_fmt(n->path, sizeof(n->path), "%s/power/nosleep",
			     dir))
			return fail(err, errlen, "path too long");
		n->what = o->keep_awake[i];
		nr_nosleep++;
	}
	/* Without pseudo-sleep nosleep is optional: skip what is absent. */
	for (i = 0; i < nr_nosleep; i++) {
		if (path_exists(nosleep[i].path))
			continue;
		if (pseudo)
			return fail(err, errlen,
				    "cannot keep '%s' awake: %s missing",
				    nosleep[i].what, nosleep[i].path);
		fprintf(stderr, "napd: %s missing, not keeping '%s' awake\n",
			nosleep[i].path, nosleep[i].what);
		nosleep[i--] = nosleep[--nr_nosleep];
	}

	/* Checks done: from here on every change is recorded. */
	if (change(s, mem_sleep, cur, mode, err, errlen))
		return -1;
	if (wake_on_apply(s, err, errlen))
		return -1;
	if (arm_irqs && change(s, wake_irq, old_irqs, irqlist, err, errlen))
		return -1;
	for (i = 0; i < nr_nosleep; i++)
		if (set_nosleep(s, nosleep[i].path, err, errlen))
			return -1;
	/* What the killed napd changed and this one does not: put back. */
	ret = settings_restore_pending(&s->settings);
	if (ret)
		return fail(err, errlen,
			    "cannot restore the settings saved in %s: %s",
			    s->settings.file, strerror(-ret));
	return 0;
}

int napd_restore(struct napd_setup *s)
{
	return settings_restore(&s->settings);
}
