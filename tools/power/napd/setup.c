// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel capability checks and the settings napd changes.
 *
 * All checks run before the first write so that a refused start leaves
 * the machine exactly as it was.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>

#include "fail.h"
#include "devpolicy.h"
#include "notify.h"
#include "setup.h"
#include "watch.h"

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

/*
 * The alarmtimer device under the RTC that alarm timers use, into @dir.
 * Suspended, it refuses a suspend with an alarm due within 2 s (EBUSY,
 * and a 2 s wakeup event that stalls the wakeup_count read); napd's
 * max-nap alarm is often that close, so a bounded nap keeps it awake.
 * The alarm itself ends the nap either way (its hrtimer runs).
 */
static int alarmtimer_dir(const char *sysfs_root, char *dir, size_t size)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int found = -ENOENT;

	if (path_fmt(path, sizeof(path), "%s/bus/platform/devices",
		     sysfs_root))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "alarmtimer", 10))
			continue;
		found = path_fmt(dir, size, "%s/%s", path, de->d_name);
		break;
	}
	closedir(d);
	return found;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/*
 * The NICs under wake device @dev, into @s->nics: @dev itself if it has
 * no lower devices, else the NICs under each of those (the ports of a
 * bond or team, the parent of a VLAN or macvlan), found as its lower_*
 * links or, failing those, a bond's bonding/slaves.  @top is the wake
 * device named, for messages.
 */
static int nic_lookup(const char *root, const char *top, const char *dev,
		      int depth, struct napd_setup *s, char *err,
		      size_t errlen)
{
	char path[PATH_MAX], slaves[SETTING_VAL_MAX], *tok, *save;
	char lower[NAPD_MAX_NICS][16];
	int found = 0, nr_lower = 0, i;
	struct dirent *de;
	DIR *d;

	if (depth > 8)
		return fail(err, errlen,
			    "wake-dev '%s': lower devices nested too deep at '%s'",
			    top, dev);
	if (path_fmt(path, sizeof(path), "%s/class/net/%s", root, dev) ||
	    !path_exists(path)) {
		if (depth)
			return fail(err, errlen,
				    "wake-dev '%s': no network device '%s' (%s)",
				    top, dev, path);
		return fail(err, errlen, "no network device '%s' (%s)", dev,
			    path);
	}
	/* In name order, for messages that do not change from run to run. */
	d = opendir(path);
	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "lower_", 6) || !de->d_name[6] ||
		    strlen(de->d_name + 6) >= sizeof(lower[0]))
			continue;
		if (nr_lower == NAPD_MAX_NICS) {
			closedir(d);
			return fail(err, errlen,
				    "wake-dev '%s': too many lower devices under '%s'",
				    top, dev);
		}
		snprintf(lower[nr_lower++], sizeof(lower[0]), "%s",
			 de->d_name + 6);
	}
	if (d)
		closedir(d);
	qsort(lower, nr_lower, sizeof(lower[0]), cmp_name);
	for (i = 0; i < nr_lower; i++, found++)
		if (nic_lookup(root, top, lower[i], depth + 1, s, err, errlen))
			return -1;
	if (!found &&
	    !path_fmt(path, sizeof(path), "%s/class/net/%s/bonding/slaves",
		      root, dev) &&
	    sysfs_read(path, slaves, sizeof(slaves)) > 0) {
		for (tok = strtok_r(slaves, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save)) {
			found++;
			if (nic_lookup(root, top, tok, depth + 1, s, err,
				       errlen))
				return -1;
		}
	}
	if (found)
		return 0;

	for (i = 0; i < s->nr_nics; i++)
		if (!strcmp(s->nics[i], dev))
			return 0;
	if (s->nr_nics == NAPD_MAX_NICS)
		return fail(err, errlen, "too many NICs under the wake devices (max %d)",
			    NAPD_MAX_NICS);
	if (path_fmt(s->nics[s->nr_nics], sizeof(s->nics[0]), "%s", dev) ||
	    path_fmt(s->nic_of[s->nr_nics], sizeof(s->nic_of[0]), "%s", top))
		return fail(err, errlen, "bad network device name '%s'", dev);
	s->nr_nics++;
	return 0;
}

/* Why NIC @nic of wake device @top has no IRQ to wake on, for a message. */
static const char *nic_no_irq(const char *root, const struct napd_opts *o,
			      const char *nic, const char *top)
{
	static char msg[PATH_MAX + 256];
	char path[PATH_MAX], of[64] = "";
	bool virt;

	virt = !path_fmt(path, sizeof(path), "%s/class/net/%s/device", root,
			 nic) && !path_exists(path);
	if (strcmp(nic, top))
		snprintf(of, sizeof(of), "wake-dev '%s': ", top);
	if (virt)
		snprintf(msg, sizeof(msg),
			 "%s'%s' has no IRQ: a virtual device with no lower devices (a bond or team without ports?); name the NICs, or a device over them",
			 of, nic);
	else
		snprintf(msg, sizeof(msg),
			 "%scannot find the IRQs of '%s' (no msi_irqs or irq in its sysfs device, nothing in %s/interrupts)",
			 of, nic, o->proc_root);
	return msg;
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

/* --wake-on task given, or auto: why it cannot be task, into @s->wake_why. */
static int no_task(const struct napd_opts *o, struct napd_setup *s,
		   char *err, size_t errlen, const char *why)
{
	if (o->wake_on == NAPD_WAKE_TASK)
		return fail(err, errlen, "--wake-on task: %s; or use --wake-on irq",
			    why);
	snprintf(s->wake_why, sizeof(s->wake_why), "%s", why);
	return 0;
}

/*
 * Choose what ends a nap (--wake-on).  task: work for a server, seen
 * through napd's EPOLLWAKEUP watches (watch.h); that needs a kernel that
 * ends a nap on a wakeup source's activation (it has
 * pseudosleep/last_wake_source), CAP_BLOCK_SUSPEND (epoll_ctl() drops
 * EPOLLWAKEUP without it, silently) and the right to take the servers'
 * fds with pidfd_getfd(): CAP_SYS_PTRACE, or servers of napd's own uid.
 * auto is task when all of that holds, irq otherwise.
 */
static int wake_on_setup(const struct napd_opts *o, struct napd_setup *s,
			 char *err, size_t errlen)
{
	struct watch_ports ports = {
		o->ports, o->nr_ports, o->udp_ports, o->nr_udp_ports,
	};
	char path[PATH_MAX], why[PATH_MAX + 128];
	unsigned long long caps;
	struct watch *w;
	int ret;

	if (o->wake_on == NAPD_WAKE_IRQ)
		return 0;
	if (path_fmt(path, sizeof(path), "%s/last_wake_source", s->pseudo_dir))
		return fail(err, errlen, "path too long under %s",
			    o->sysfs_root);
	if (!path_exists(path)) {
		snprintf(why, sizeof(why),
			 "this kernel cannot end a nap on work for a server (no %s)",
			 path);
		return no_task(o, s, err, errlen, why);
	}
	ret = watch_cap_eff(o->proc_root, &caps);
	if (ret) {
		snprintf(why, sizeof(why),
			 "cannot read napd's capabilities (CapEff in %s/self/status): %s",
			 o->proc_root, strerror(-ret));
		return no_task(o, s, err, errlen, why);
	}
	if (!(caps & (1ULL << CAP_BLOCK_SUSPEND)))
		return no_task(o, s, err, errlen,
			       "napd lacks CAP_BLOCK_SUSPEND, without which epoll drops EPOLLWAKEUP and work would not end a nap");
	/* The real kernel's epoll: asked only with the real /sys. */
	if (!strcmp(o->sysfs_root, "/sys") && watch_wakeup_kept() != 1)
		return no_task(o, s, err, errlen,
			       "epoll drops EPOLLWAKEUP on napd's items (seen in /proc/self/fdinfo): work would not end a nap");
	if (!(caps & (1ULL << CAP_SYS_PTRACE))) {
		w = malloc(sizeof(*w));
		if (!w)
			return fail(err, errlen, "out of memory");
		ret = watch_init(w, o->proc_root);
		if (!ret)
			ret = watch_same_uid(w, &ports);
		watch_close(w);
		free(w);
		if (ret <= 0)
			return no_task(o, s, err, errlen,
				       "napd lacks CAP_SYS_PTRACE to take the servers' sockets (pidfd_getfd()), and not every server runs as napd's uid with Yama's ptrace_scope 0");
	}
	if (path_fmt(s->rx_packets[0], sizeof(s->rx_packets[0]),
		     "%s/net/snmp", o->proc_root))
		return fail(err, errlen, "path too long under %s",
			    o->proc_root);
	if (!path_exists(s->rx_packets[0]))
		return fail(err, errlen, "%s missing", s->rx_packets[0]);
	s->wake_task = true;
	s->rx_snmp = true;
	s->nr_rx = 1;
	return 0;
}

/*
 * The union of the wake NICs' IRQs into s->irqs: a vector shared by two
 * NICs is armed once.  Returns 0, -ENOENT with *nic the index of a NIC
 * without IRQs (the union is still complete), or -E2BIG.
 */
static int nic_irqs(const struct napd_opts *o, struct napd_setup *s,
		    int *nic)
{
	int i, j, k, n, ret = 0;

	s->nr_irqs = 0;
	for (i = 0; i < s->nr_nics; i++) {
		unsigned int irqs[NAPD_MAX_IRQS];

		n = irqs_resolve(o->sysfs_root, o->proc_root, s->nics[i], irqs,
				 NAPD_MAX_IRQS, &s->irq_src[i]);
		if (!n && !ret) {
			*nic = i;
			ret = -ENOENT;
		}
		for (j = 0; j < n; j++) {
			for (k = 0; k < s->nr_irqs; k++)
				if (s->irqs[k] == irqs[j])
					break;
			if (k < s->nr_irqs)
				continue;
			if (s->nr_irqs == NAPD_MAX_IRQS)
				return -E2BIG;
			s->irqs[s->nr_irqs++] = irqs[j];
		}
	}
	return ret;
}

/**
 * napd_rearm - write the wake NICs' IRQs to wake_irq again if they left it
 *
 * The kernel drops an IRQ from wake_irq when its handler is freed: a
 * driver that reallocates its vectors (ethtool -L, a reset) or requests
 * its IRQs when the link goes up (e1000e, igb, r8169) gets new ones.
 * Cheap when nothing changed: one read of wake_irq.
 *
 * Return: 0 if armed as set up, 1 if re-armed, -ENOENT if a NIC has no
 * IRQ now (link down: the caller should not nap), or -errno.
 */
int napd_rearm(const struct napd_opts *o, struct napd_setup *s)
{
	char want[SETTING_VAL_MAX], got[SETTING_VAL_MAX];
	int ret, nic;

	if (!s->wake_irq[0] || !s->nr_irqs_armed)
		return 0;
	ret = sysfs_read(s->wake_irq, got, sizeof(got));
	if (ret < 0)
		return ret;
	if (irqlist_format(s->irqs, s->nr_irqs, want, sizeof(want)))
		return -E2BIG;
	if (!strcmp(got, want))
		return 0;
	ret = nic_irqs(o, s, &nic);
	if (ret)
		return ret;
	if (irqlist_format(s->irqs, s->nr_irqs, want, sizeof(want)))
		return -E2BIG;
	ret = sysfs_write(s->wake_irq, want);
	return ret ? ret : 1;
}

int napd_wake_nics(const struct napd_opts *o, struct napd_setup *s,
		   char *err, size_t errlen)
{
	int i;

	s->nr_nics = 0;
	for (i = 0; i < o->nr_wake_devs; i++)
		if (nic_lookup(o->sysfs_root, o->wake_devs[i], o->wake_devs[i],
			       0, s, err, errlen))
			return -1;
	return 0;
}

int napd_setup(const struct napd_opts *o, struct napd_setup *s,
	       char *err, size_t errlen)
{
	const char *root = o->sysfs_root, *mode = napd_mode_name(o->mode);
	bool pseudo = o->mode == NAPD_MODE_PSEUDO;
	char mem_sleep[PATH_MAX], wake_irq[PATH_MAX], sync[PATH_MAX];
	char old_sync[16] = "";
	char list[SETTING_VAL_MAX], cur[64], old_irqs[SETTING_VAL_MAX];
	char irqlist[SETTING_VAL_MAX];
	struct nosleep nosleep[NAPD_MAX_NICS + NAPD_MAX_KEEP + 1];
	struct devtree tree = { 0 };
	int nr_nosleep = 0, ret, i;
	bool arm_irqs, disarm_irqs;

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
	    path_fmt(sync, sizeof(sync), "%s/power/sync_on_suspend", root))
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
	 * A pseudo-sleep kernel arms the wake IRQs' report in a step of its
	 * own (pseudosleep/arm) before the count is read; older ones did it
	 * when the count was read.
	 */
	s->arm[0] = '\0';
	if (pseudo && path_fmt(s->arm, sizeof(s->arm), "%s/arm", s->pseudo_dir))
		return fail(err, errlen, "path too long under %s", root);
	if (!path_exists(s->arm))
		s->arm[0] = '\0';

	/*
	 * --wake-on task: the napping kernel serves ARP, pings and the like
	 * itself, so napd's activity signal becomes the TCP segments and
	 * UDP datagrams of /proc/net/snmp instead of every packet of the
	 * wake device.
	 */
	if (pseudo && wake_on_setup(o, s, err, errlen))
		return -1;

	/*
	 * The wake devices: the traffic counter of each as named (a bond's
	 * or a VLAN's own), the IRQs and the nosleep flag of each NIC under
	 * them.
	 */
	for (i = 0; i < o->nr_wake_devs; i++) {
		const char *dev = o->wake_devs[i];

		if (nic_lookup(root, dev, dev, 0, s, err, errlen))
			return -1;
		if (s->rx_snmp)
			continue;
		if (path_fmt(s->rx_packets[s->nr_rx], sizeof(s->rx_packets[0]),
			     "%s/class/net/%s/statistics/rx_packets", root,
			     dev))
			return fail(err, errlen, "path too long under %s",
				    root);
		if (!path_exists(s->rx_packets[s->nr_rx]))
			return fail(err, errlen, "%s missing",
				    s->rx_packets[s->nr_rx]);
		s->nr_rx++;
	}

	ret = nic_irqs(o, s, &i);
	/*
	 * With wake on irq only the armed IRQs end a pseudo nap: none would
	 * mean forever.  With wake on task no IRQ is armed: the NIC's
	 * interrupts run during the nap and work for a server ends it.
	 */
	if (ret == -ENOENT && pseudo && !s->wake_task)
		return fail(err, errlen, "%s",
			    nic_no_irq(root, o, s->nics[i], s->nic_of[i]));
	if (ret == -E2BIG)
		return fail(err, errlen, "too many IRQs (max %d)",
			    NAPD_MAX_IRQS);
	if (path_fmt(s->wake_irq, sizeof(s->wake_irq), "%s", wake_irq))
		return fail(err, errlen, "path too long under %s", root);
	arm_irqs = s->nr_irqs && !s->wake_task &&
		   (pseudo || path_exists(wake_irq));
	/*
	 * Wake on task disarms what someone else left in wake_irq (a killed
	 * napd in irq mode, an admin's test): an armed NIC would end naps on
	 * every ARP and ping, and the log would say no IRQ is armed.
	 */
	disarm_irqs = pseudo && s->wake_task;
	if (arm_irqs || disarm_irqs) {
		ret = sysfs_read(wake_irq, old_irqs, sizeof(old_irqs));
		if (ret < 0)
			return fail(err, errlen, "cannot read %s: %s",
				    wake_irq, strerror(-ret));
	}
	if (arm_irqs && irqlist_format(s->irqs, s->nr_irqs, irqlist,
				       sizeof(irqlist)))
		return fail(err, errlen, "too many IRQs");
	disarm_irqs = disarm_irqs && old_irqs[0];

	for (i = 0; i < s->nr_nics; i++) {
		struct nosleep *n = &nosleep[nr_nosleep++];

		if (path_fmt(n->path, sizeof(n->path),
			     "%s/class/net/%s/device/power/nosleep", root,
			     s->nics[i]))
			return fail(err, errlen, "path too long");
		n->what = s->nics[i];
	}
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
	/* No RTC, no alarmtimer device: nothing refuses a near alarm. */
	if (pseudo && (o->max_nap_ms || o->systemd_timers)) {
		char dir[PATH_MAX];
		struct nosleep *n = &nosleep[nr_nosleep];

		if (!alarmtimer_dir(root, dir, sizeof(dir))) {
			if (path_fmt(n->path, sizeof(n->path),
				     "%s/power/nosleep", dir))
				return fail(err, errlen, "path too long");
			n->what = "alarmtimer (max-nap)";
			nr_nosleep++;
		}
	}
	/* Without pseudo-sleep nosleep is optional: skip what is absent. */
	for (i = 0; i < nr_nosleep; i++) {
		if (path_exists(nosleep[i].path))
			continue;
		if (pseudo)
			return fail(err, errlen,
				    "cannot keep '%s' awake: %s missing",
				    nosleep[i].what, nosleep[i].path);
		napd_log(LOG_WARNING, "%s missing, not keeping '%s' awake",
			 nosleep[i].path, nosleep[i].what);
		nosleep[i--] = nosleep[--nr_nosleep];
	}

	/*
	 * The PM core syncs the filesystems before every suspend, in case
	 * the machine does not come back.  A nap keeps memory powered and
	 * needs no firmware to come back: the sync protects nothing a crash
	 * while awake would not lose, and with a journal written at every
	 * nap it writes the disk and makes the entry as slow as the
	 * writeback.  Skip it unless --sync yes (a kernel without the file
	 * always syncs).
	 */
	if (pseudo && !o->sync_fs && path_exists(sync)) {
		ret = sysfs_read(sync, old_sync, sizeof(old_sync));
		if (ret < 0)
			return fail(err, errlen, "cannot read %s: %s", sync,
				    strerror(-ret));
	}

	/* The device policy: which devices naps leave alone (devpolicy.h). */
	if (pseudo && devpolicy_scan(o, &tree, err, errlen)) {
		devtree_free(&tree);
		return -1;
	}

	/* Checks done: from here on every change is recorded. */
	ret = -1;
	if (change(s, mem_sleep, cur, mode, err, errlen) ||
	    (arm_irqs && change(s, wake_irq, old_irqs, irqlist, err, errlen)) ||
	    (disarm_irqs && change(s, wake_irq, old_irqs, "", err, errlen)) ||
	    (old_sync[0] && change(s, sync, old_sync, "0", err, errlen)))
		goto out_tree;
	s->nr_irqs_armed = arm_irqs ? s->nr_irqs : 0;
	for (i = 0; i < nr_nosleep; i++)
		if (set_nosleep(s, nosleep[i].path, err, errlen))
			goto out_tree;
	if (pseudo) {
		ret = devpolicy_apply(&tree, &s->settings, err, errlen);
		if (ret < 0)
			goto out_tree;
		s->nr_policy = ret;
	}
	ret = 0;
out_tree:
	devtree_free(&tree);
	if (ret < 0)
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
