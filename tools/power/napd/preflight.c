// SPDX-License-Identifier: GPL-2.0
/*
 * napd --check: a preflight of the host.  See preflight.h.
 *
 * Every fact comes from sysfs and procfs under napd's roots; what napd
 * would do with them comes from napd's own code: the wake NICs from
 * napd_wake_nics() (setup.c), their IRQs and the armed ones from
 * irqs_resolve() (irqs.c), the kept and suspended devices from
 * devpolicy_scan() (devpolicy.c).  Nothing assumes a virtio NIC or a
 * QEMU machine.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "compiler.h"
#include "devpolicy.h"
#include "irqs.h"
#include "checks.h"
#include "preflight.h"
#include "procnet.h"
#include "setup.h"
#include "sysfs.h"
#include "timers.h"
#include "watch.h"

#define MAX_NETDEVS	64
struct pf {
	FILE *out;
	const struct napd_opts *o;
	int nr[PF_NR];
	bool pseudo;		/* the kernel offers pseudo in mem_sleep */
	bool nosleep;		/* devices have power/nosleep */
	char *irq0, *irq1;	/* /proc/interrupts, PREFLIGHT_SAMPLE_MS apart */
	double sample_s;
};

static const char *const verdict_names[PF_NR] = {
	[PF_OK] = "ok",
	[PF_WARN] = "warn",
	[PF_FAIL] = "fail",
	[PF_NA] = "n/a",
};

static void say(struct pf *p, enum preflight_verdict v, const char *fmt, ...)
{
	va_list ap;

	p->nr[v]++;
	fprintf(p->out, "%-4s  ", verdict_names[v]);
	va_start(ap, fmt);
	vfprintf(p->out, fmt, ap);
	va_end(ap);
	fputc('\n', p->out);
}

/* @dir/@file into @buf; "" if it cannot be read.  Returns @buf. */
static char *read_attr(const char *dir, const char *file, char *buf,
		       size_t size)
{
	char path[PATH_MAX];

	buf[0] = '\0';
	if (path_fmt(path, sizeof(path), "%s/%s", dir, file) ||
	    sysfs_read(path, buf, size) < 0)
		buf[0] = '\0';
	return buf;
}

/* The last component of the link @dir/@file points to ("e1000e"). */
static char *link_name(const char *dir, const char *file, char *buf,
		       size_t size)
{
	char path[PATH_MAX], target[PATH_MAX], *slash;
	ssize_t n;

	buf[0] = '\0';
	if (path_fmt(path, sizeof(path), "%s/%s", dir, file))
		return buf;
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return buf;
	target[n] = '\0';
	slash = strrchr(target, '/');
	if (path_fmt(buf, size, "%s", slash ? slash + 1 : target))
		buf[0] = '\0';
	return buf;
}

static const char *short_dev(const char *path)
{
	const char *p = strstr(path, "/devices/");

	return p ? p + 9 : path;
}

int preflight_timespan_ms(const char *s, unsigned long long *ms)
{
	static const struct {
		const char *unit;
		unsigned long long us;
	} units[] = {
		/* longest first: "min" before "m", "ms" before "m" and "s" */
		{ "usec", 1 }, { "us", 1 }, { "msec", 1000 }, { "ms", 1000 },
		{ "seconds", 1000000 }, { "second", 1000000 },
		{ "sec", 1000000 }, { "s", 1000000 },
		{ "minutes", 60000000 }, { "minute", 60000000 },
		{ "min", 60000000 }, { "m", 60000000 },
		{ "hours", 3600000000ULL }, { "hour", 3600000000ULL },
		{ "hr", 3600000000ULL }, { "h", 3600000000ULL },
		{ "days", 86400000000ULL }, { "day", 86400000000ULL },
		{ "d", 86400000000ULL },
	};
	unsigned long long total = 0;
	bool any = false;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s || !strcmp(s, "infinity")) {
		*ms = 0;
		return 0;
	}
	while (*s) {
		unsigned long long v = 0, mul = 1000000;
		unsigned int i;
		size_t len;

		if (!isdigit((unsigned char)*s))
			return -1;
		while (isdigit((unsigned char)*s)) {
			if (v > 1000000000ULL)
				return -1;
			v = v * 10 + (*s++ - '0');
		}
		while (*s == ' ')
			s++;
		for (len = 0; isalpha((unsigned char)s[len]); len++)
			;
		if (len) {
			for (i = 0; i < ARRAY_SIZE(units); i++)
				if (strlen(units[i].unit) == len &&
				    !strncmp(s, units[i].unit, len))
					break;
			if (i == ARRAY_SIZE(units))
				return -1;
			mul = units[i].us;
			s += len;
		}
		total += v * mul;
		any = true;
		while (isspace((unsigned char)*s))
			s++;
	}
	if (!any)
		return -1;
	*ms = (total + 999) / 1000;
	return 0;
}

/* ---- interrupts ---- */

/* The count and names of @irq in /proc/interrupts text @text. */
static bool irq_count(const char *text, unsigned int irq,
		      unsigned long long *count, char *names, size_t size)
{
	unsigned long long c;
	unsigned int n;
	int ncpu = 0;

	while (text && procnet_irq_next(&text, &ncpu, &n, &c, names, size))
		if (n == irq) {
			*count = c;
			return true;
		}
	return false;
}

/* Interrupts per second of @irq over the sample; -1 if unknown. */
static double irq_rate(const struct pf *p, unsigned int irq, char *names,
		       size_t size)
{
	unsigned long long c0, c1;

	if (!irq_count(p->irq0, irq, &c0, names, size) ||
	    !irq_count(p->irq1, irq, &c1, names, size) || c1 < c0)
		return -1;
	return (c1 - c0) / p->sample_s;
}

static void sample_interrupts(struct pf *p)
{
	struct timespec t0, t1, d = {
		.tv_sec = PREFLIGHT_SAMPLE_MS / 1000,
		.tv_nsec = (PREFLIGHT_SAMPLE_MS % 1000) * 1000000L,
	};
	char path[PATH_MAX];

	if (path_fmt(path, sizeof(path), "%s/interrupts", p->o->proc_root))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	p->irq0 = read_whole(path);
	if (!p->irq0)
		return;
	while (nanosleep(&d, &d) && errno == EINTR)
		;
	p->irq1 = read_whole(path);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	p->sample_s = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (p->sample_s <= 0)
		p->sample_s = PREFLIGHT_SAMPLE_MS / 1000.0;
}

/* ---- kernel support ---- */

/*
 * Wake on work (--wake-on task): the kernel ends a nap when a wakeup
 * source activates, and napd can watch the servers with EPOLLWAKEUP.
 */
static void check_wake_on_work(struct pf *p)
{
	unsigned long long caps;
	char path[PATH_MAX];
	bool block, ptrace;

	if (path_fmt(path, sizeof(path), "%s/power/pseudosleep/last_wake_source",
		     p->o->sysfs_root))
		return;
	if (!path_exists(path)) {
		say(p, PF_NA,
		    "kernel: no wake on work (no %s): naps end on any armed IRQ (--wake-on irq)",
		    path);
		return;
	}
	if (watch_cap_eff(p->o->proc_root, &caps)) {
		say(p, PF_WARN,
		    "kernel: wake on work supported, but napd's capabilities cannot be read");
		return;
	}
	block = caps & (1ULL << CAP_BLOCK_SUSPEND);
	ptrace = caps & (1ULL << CAP_SYS_PTRACE);
	if (block && !strcmp(p->o->sysfs_root, "/sys") &&
	    watch_wakeup_kept() != 1)
		say(p, PF_WARN,
		    "kernel: wake on work supported, but epoll drops EPOLLWAKEUP on napd's items: --wake-on auto uses irq");
	else if (block && ptrace)
		say(p, PF_OK, "kernel: wake on work supported (%s): --wake-on auto uses task",
		    path);
	else
		say(p, PF_WARN,
		    "kernel: wake on work supported, but this napd lacks %s%s%s: --wake-on auto uses irq%s (the unit grants both)",
		    block ? "" : "CAP_BLOCK_SUSPEND", !block && !ptrace ? " and " : "",
		    ptrace ? "" : "CAP_SYS_PTRACE",
		    block ? " unless every server runs as napd's uid" : "");
}

static void check_kernel(struct pf *p)
{
	const char *root = p->o->sysfs_root;
	char path[PATH_MAX], list[256], cur[64], val[64];
	int ret;

	if (path_fmt(path, sizeof(path), "%s/power/mem_sleep", root))
		return;
	ret = sysfs_read(path, list, sizeof(list));
	if (ret < 0) {
		say(p, PF_FAIL,
		    "kernel: pseudo-sleep not supported: cannot read %s (%s): no suspend support in this kernel",
		    path, strerror(-ret));
	} else if (!mem_sleep_offers(list, "pseudo")) {
		say(p, PF_FAIL,
		    "kernel: pseudo-sleep not supported: %s offers '%s', no pseudo (boot a pseudo-sleep kernel)",
		    path, list);
	} else {
		p->pseudo = true;
		if (mem_sleep_current(list, cur, sizeof(cur)))
			cur[0] = '\0';
		say(p, PF_OK, "kernel: %s offers pseudo ('%s'%s)", path, list,
		    strcmp(cur, "pseudo") ? "; napd selects it" : "");
	}

	if (path_fmt(path, sizeof(path), "%s/power/state", root))
		return;
	ret = sysfs_read(path, list, sizeof(list));
	if (ret < 0 || !mem_sleep_offers(list, "mem"))
		say(p, p->pseudo ? PF_FAIL : PF_NA,
		    "kernel: %s %s: a nap is entered by writing mem to it",
		    path, ret < 0 ? "cannot be read" : "does not offer mem");

	if (!p->pseudo) {
		say(p, PF_NA,
		    "kernel: wake_irq, pseudosleep/arm, power/nosleep: not checked without pseudo-sleep");
		return;
	}
	if (path_fmt(path, sizeof(path), "%s/power/wake_irq", root))
		return;
	if (sysfs_read(path, val, sizeof(val)) < 0)
		say(p, PF_FAIL, "kernel: no %s: no IRQ can be armed to end a nap",
		    path);
	else
		say(p, PF_OK, "kernel: %s (armed now: '%s')", path, val);
	if (path_fmt(path, sizeof(path), "%s/power/pseudosleep/arm", root))
		return;
	if (path_exists(path))
		say(p, PF_OK, "kernel: %s: the wakeup_count handshake's arm step",
		    path);
	else
		say(p, PF_WARN,
		    "kernel: no %s: an older pseudo-sleep kernel; a request just before a nap may wait for the next wake",
		    path);
	check_wake_on_work(p);
	if (path_fmt(path, sizeof(path), "%s/power/sync_on_suspend", root))
		return;
	if (sysfs_read(path, val, sizeof(val)) >= 0)
		say(p, PF_OK, "kernel: %s is %s: %s", path, val,
		    p->o->sync_fs ? "napd leaves it (sync = yes)" :
		    "napd makes it 0 while it runs: no filesystem sync before naps (sync = yes keeps it)");
}

/* ---- NICs ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The network devices with a device of their own: the NICs. */
static int list_nics(const char *root, char **names, int max)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (path_fmt(path, sizeof(path), "%s/class/net", root))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= 16 ||
		    path_fmt(path, sizeof(path), "%s/class/net/%s/device",
			     root, de->d_name) || !path_exists(path))
			continue;
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	return n;
}

/* Is @nic one of @s's wake NICs?  Its wake device into @of. */
static bool wake_nic(const struct napd_setup *s, const char *nic,
		     const char **of)
{
	int i;

	for (i = 0; i < s->nr_nics; i++)
		if (!strcmp(s->nics[i], nic)) {
			*of = s->nic_of[i];
			return true;
		}
	return false;
}

/* Warn about an armed IRQ that is shared or busy. */
static void check_armed_irq(struct pf *p, const char *nic, unsigned int irq)
{
	char names[256];
	double rate = irq_rate(p, irq, names, sizeof(names));

	if (rate < 0)
		return;
	if (strchr(names, ','))
		say(p, PF_WARN,
		    "nic %s: armed IRQ %u is shared (%s): the other devices' interrupts end naps too",
		    nic, irq, names);
	if (rate > PREFLIGHT_BUSY_ARMED)
		say(p, PF_WARN,
		    "nic %s: armed IRQ %u (%s) fired %.0f times/s over %.1f s: each ends a nap; naps pay off only with quiet gaps",
		    nic, irq, names, rate, p->sample_s);
}

static void check_nic(struct pf *p, const char *nic, bool wake,
		      const char *of)
{
	const char *root = p->o->sysfs_root;
	unsigned int irqs[NAPD_MAX_IRQS];
	struct irq_source src;
	char dev[PATH_MAX], real[PATH_MAX], path[PATH_MAX], drv[64];
	char carrier[16], state[32], armed[SETTING_VAL_MAX], via[64] = "";
	int n, i;

	if (path_fmt(dev, sizeof(dev), "%s/class/net/%s/device", root, nic) ||
	    !realpath(dev, real))
		return;
	link_name(real, "driver", drv, sizeof(drv));
	if (path_fmt(path, sizeof(path), "%s/class/net/%s", root, nic))
		return;
	read_attr(path, "carrier", carrier, sizeof(carrier));
	if (of && strcmp(of, nic))
		snprintf(via, sizeof(via), " under wake-dev %s", of);
	n = irqs_resolve(root, p->o->proc_root, nic, irqs, NAPD_MAX_IRQS,
			 &src);
	if (!n) {
		say(p, wake ? PF_FAIL : PF_WARN,
		    "nic %s%s: %s, driver %s: no IRQ found (no msi_irqs or irq in its sysfs device, nothing in interrupts)%s",
		    nic, via, short_dev(real), drv[0] ? drv : "none",
		    wake ? ": no request could end a nap" : "");
		return;
	}
	if (irqlist_format(irqs, n, armed, sizeof(armed)))
		snprintf(armed, sizeof(armed), "%d IRQs", n);
	if (wake)
		say(p, PF_OK, "nic %s%s: %s, driver %s, vectors %s; napd would arm %s: %s",
		    nic, via, short_dev(real), drv[0] ? drv : "none",
		    src.all, armed, src.armed);
	else
		say(p, PF_OK,
		    "nic %s: %s, driver %s, vectors %s; not a wake device: none armed",
		    nic, short_dev(real), drv[0] ? drv : "none", src.all);
	if (!wake)
		return;
	if (!strcmp(carrier, "0"))
		say(p, PF_WARN,
		    "nic %s: no carrier (link down): no request can reach it now",
		    nic);
	if (!link_state(root, of ? of : nic, state, sizeof(state)))
		say(p, PF_WARN,
		    "wake-dev %s: operstate %s: napd naps only while a wake device's link is up",
		    of ? of : nic, state);
	if (!drv[0])
		say(p, PF_FAIL, "nic %s: no driver bound to %s", nic,
		    short_dev(real));
	if (p->pseudo) {
		if (path_fmt(path, sizeof(path), "%s/power/nosleep", real) ||
		    !path_exists(path))
			say(p, PF_FAIL, "nic %s: cannot be kept awake: no power/nosleep in %s",
			    nic, short_dev(real));
	}
	for (i = 0; i < n; i++)
		check_armed_irq(p, nic, irqs[i]);
}

/*
 * The wake NICs: those under the configured wake devices, or every NIC
 * when none is configured.  @wo gets the wake devices devpolicy sees.
 */
static void check_nics(struct pf *p, struct napd_opts *wo,
		       struct napd_setup *s, char **nics, int nr)
{
	char err[PATH_MAX + 256];
	bool configured = p->o->nr_wake_devs > 0;
	int i;

	if (!nr) {
		say(p, PF_FAIL,
		    "nic: no network device with a device of its own under %s/class/net: nothing could wake a nap",
		    p->o->sysfs_root);
		return;
	}
	if (!configured) {
		say(p, PF_NA,
		    "nic: no wake-dev configured (--wake-dev or %s): every NIC is checked as a wake device",
		    p->o->config ? p->o->config : NAPD_CONFIG_DEFAULT);
		for (i = 0; i < nr && i < NAPD_MAX_WAKE_DEVS; i++)
			wo->wake_devs[wo->nr_wake_devs++] = nics[i];
	}
	if (napd_wake_nics(wo, s, err, sizeof(err))) {
		say(p, PF_FAIL, "nic: %s", err);
		s->nr_nics = 0;
	}
	for (i = 0; i < nr; i++) {
		const char *of = NULL;
		bool wake = wake_nic(s, nics[i], &of);

		check_nic(p, nics[i], wake, of);
	}
}

/* ---- devices ---- */

/* How many link_power_management_policy files below @dir read @val. */
static int count_lpm(const char *dir, const char *val, int depth)
{
	char path[PATH_MAX], buf[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (depth > 6)
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    path_fmt(path, sizeof(path), "%s/%s", dir, de->d_name))
			continue;
		if (de->d_type == DT_DIR && strcmp(de->d_name, "power"))
			n += count_lpm(path, val, depth + 1);
		else if (de->d_type == DT_REG &&
			 !strcmp(de->d_name, "link_power_management_policy") &&
			 sysfs_read(path, buf, sizeof(buf)) >= 0 &&
			 !strcmp(buf, val))
			n++;
	}
	closedir(d);
	return n;
}

/*
 * The device policy keeps USB host, NVMe and SATA controllers awake
 * because they have idle power management of their own, which goes on
 * working through a nap (devpolicy.h): USB autosuspend lets the host
 * controller runtime-suspend, NVMe has APST, SATA link power management.
 * What turns that off for @d, into @buf; "" when nothing does.
 */
static const char *own_idle_pm(const struct pf *p, const struct devinfo *d,
			       const char *control, char *buf, size_t size)
{
	char path[PATH_MAX], val[32];
	int n;

	buf[0] = '\0';
	switch (d->why) {
	case WHY_USB_HOST:
		if (!strcmp(control, "on"))
			snprintf(buf, size,
				 "; runtime PM off (power/control on): it cannot suspend when its ports are idle");
		break;
	case WHY_NVME:
		if (!path_fmt(path, sizeof(path),
			      "%s/module/nvme_core/parameters/default_ps_max_latency_us",
			      p->o->sysfs_root) &&
		    sysfs_read(path, val, sizeof(val)) >= 0 && !strcmp(val, "0"))
			snprintf(buf, size,
				 "; APST off (nvme_core.default_ps_max_latency_us=0): it stays in its operational power state");
		break;
	case WHY_SATA:
		n = count_lpm(d->path, "max_performance", 0);
		if (n)
			snprintf(buf, size,
				 "; link power management off on %d port%s (link_power_management_policy max_performance)",
				 n, n == 1 ? "" : "s");
		break;
	default:
		break;
	}
	return buf;
}

/* Runtime PM and ASPM of kept device @d; the verdict. */
static void check_kept(struct pf *p, const struct devtree *t, int i)
{
	const struct devinfo *d = &t->d[i];
	char why[160], control[32], status[32], link[PATH_MAX], val[16];
	char aspm[96] = "", note[192];
	static const char *const states[] = {
		"l0s_aspm", "l1_aspm", "l1_1_aspm", "l1_2_aspm",
	};
	bool on_rule, have_link = false, any_on = false;
	enum preflight_verdict v = PF_OK;
	unsigned int k;

	dev_why_str(t, i, why, sizeof(why));
	read_attr(d->path, "power/control", control, sizeof(control));
	read_attr(d->path, "power/runtime_status", status, sizeof(status));
	if (d->is_pci && !path_fmt(link, sizeof(link), "%s/link", d->path)) {
		for (k = 0; k < ARRAY_SIZE(states); k++) {
			size_t len = strlen(aspm);

			if (!read_attr(link, states[k], val, sizeof(val))[0])
				continue;
			have_link = true;
			any_on |= !strcmp(val, "1");
			snprintf(aspm + len, sizeof(aspm) - len, "%s%.*s %s",
				 len ? ", " : "", (int)(strlen(states[k]) - 5),
				 states[k], !strcmp(val, "1") ? "on" : "off");
		}
	}
	/*
	 * The NIC and its path up are busy anyway; a rule's device is not.
	 * Nothing manages a function without a driver: a nap would not
	 * change its link either.
	 */
	on_rule = d->why != WHY_NIC && d->why != WHY_UNDER &&
		  d->why != WHY_ABOVE && d->why != WHY_NO_DRIVER;
	if (own_idle_pm(p, d, control, note, sizeof(note))[0]) {
		v = PF_WARN;
	} else if (on_rule && have_link && !any_on) {
		v = PF_WARN;
		snprintf(note, sizeof(note),
			 "; ASPM off on its link: the link stays in L0 in every nap");
	}
	say(p, v, "device keep    %s (%s): runtime PM %s, %s; ASPM %s%s",
	    short_dev(d->path), why, control[0] ? control : "-",
	    status[0] ? status : "-", have_link ? aspm :
	    d->is_pci ? "n/a (no ASPM state on its link)" : "n/a (not PCI)",
	    note);
}

static void check_devices(struct pf *p, const struct napd_opts *wo)
{
	char err[PATH_MAX + 256], why[160], path[PATH_MAX], val[32];
	struct devtree t;
	int i, kept = 0, suspended = 0;

	if (devpolicy_scan(wo, &t, err, sizeof(err))) {
		say(p, PF_FAIL, "devices: %s", err);
		devtree_free(&t);
		return;
	}
	p->nosleep = t.nr && t.d[0].has_nosleep;
	for (i = 0; i < t.nr; i++) {
		if (!devpolicy_listed(&t, i))
			continue;
		if (dev_kept(&t, i)) {
			kept++;
			check_kept(p, &t, i);
			continue;
		}
		suspended++;
		say(p, PF_OK, "device suspend %s (%s)", short_dev(t.d[i].path),
		    dev_why_str(&t, i, why, sizeof(why)));
	}
	if (p->pseudo && !p->nosleep)
		say(p, PF_FAIL,
		    "devices: this kernel has no power/nosleep: a nap would suspend every device, the NIC too");
	else
		say(p, p->pseudo ? PF_OK : PF_NA,
		    "devices: a nap would keep %d and suspend %d of the %d listed (device policy %s; napd --list-devices)%s",
		    kept, suspended, kept + suspended,
		    wo->dev_policy == NAPD_POLICY_LEAN ? "lean" : "all",
		    p->pseudo ? "" : "; nothing is kept without pseudo-sleep");
	devtree_free(&t);

	if (path_fmt(path, sizeof(path),
		     "%s/module/pcie_aspm/parameters/policy", p->o->sysfs_root))
		return;
	if (sysfs_read(path, val, sizeof(val)) < 0)
		say(p, PF_NA, "aspm: no %s (no PCIe ASPM support in this kernel)",
		    path);
	else if (strstr(val, "[performance]"))
		say(p, PF_WARN,
		    "aspm: policy '%s': ASPM is off on every link, kept devices' links stay in L0",
		    val);
	else
		say(p, PF_OK, "aspm: policy '%s'", val);
}

/* ---- idle states ---- */

static void check_idle(struct pf *p)
{
	const char *root = p->o->sysfs_root;
	char path[PATH_MAX], drv[64], deep[16], name[32], lat[32], off[8];
	char list[512] = "", deepest[64] = "", first[64] = "";
	unsigned long long first_lat = 0, deep_lat = 0;
	size_t len = 0;
	int i;

	if (path_fmt(path, sizeof(path), "%s/devices/system/cpu/cpuidle", root))
		return;
	read_attr(path, "current_driver", drv, sizeof(drv));
	for (i = 0; i < 32; i++) {
		char dir[PATH_MAX];
		unsigned long long l;

		if (path_fmt(dir, sizeof(dir),
			     "%s/devices/system/cpu/cpu0/cpuidle/state%d", root,
			     i) || !path_exists(dir))
			break;
		read_attr(dir, "name", name, sizeof(name));
		read_attr(dir, "latency", lat, sizeof(lat));
		read_attr(dir, "disable", off, sizeof(off));
		l = strtoull(lat, NULL, 10);
		if (len < sizeof(list))
			len += snprintf(list + len, sizeof(list) - len,
					"%s%s (%s us%s)", len ? ", " : "",
					name, lat, !strcmp(off, "1") ?
					", disabled" : "");
		if (!strcmp(off, "1") || !strcmp(name, "POLL"))
			continue;
		if (!first[0]) {
			snprintf(first, sizeof(first), "%s", name);
			first_lat = l;
		}
		snprintf(deepest, sizeof(deepest), "%s", name);
		deep_lat = l;
	}
	if (!drv[0] || !strcmp(drv, "none") || !i)
		say(p, PF_OK,
		    "idle: no cpuidle driver: idle CPUs and napping CPUs both halt (the default idle routine)");
	else
		say(p, PF_OK, "idle: cpuidle driver %s: %s", drv, list);

	if (path_fmt(path, sizeof(path),
		     "%s/module/pseudosleep/parameters/deep_idle", root))
		return;
	if (sysfs_read(path, deep, sizeof(deep)) < 0) {
		say(p, PF_NA, "idle: no pseudosleep.deep_idle: not a pseudo-sleep kernel");
		return;
	}
	if (!strcmp(deep, "Y") || !strcmp(deep, "1")) {
		say(p, PF_OK,
		    "idle: pseudosleep.deep_idle=%s: napping CPUs idle through %s, down to %s",
		    deep, drv[0] ? drv : "the cpuidle governor",
		    deepest[0] ? deepest : "its deepest state");
		return;
	}
	if (deepest[0] && deep_lat > first_lat)
		say(p, PF_WARN,
		    "idle: pseudosleep.deep_idle=%s: napping CPUs halt, but idle ones reach %s (%llu us): a nap may draw more than idling awake; pseudosleep.deep_idle=1 lets naps use it",
		    deep, deepest, deep_lat);
	else
		say(p, PF_OK,
		    "idle: pseudosleep.deep_idle=%s: napping CPUs halt, as deep as %s goes",
		    deep, deepest[0] ? deepest : "idle");
}

/* ---- busy interrupts ---- */

static void check_busy(struct pf *p)
{
	const char *text = p->irq1;
	unsigned long long c;
	char names[256];
	unsigned int irq;
	int ncpu = 0, busy = 0;

	if (!p->irq0 || !p->irq1) {
		say(p, PF_NA, "interrupts: cannot read %s/interrupts",
		    p->o->proc_root);
		return;
	}
	while (procnet_irq_next(&text, &ncpu, &irq, &c, names, sizeof(names))) {
		char n0[256];
		double rate = irq_rate(p, irq, n0, sizeof(n0));

		if (rate <= PREFLIGHT_BUSY_IRQ)
			continue;
		busy++;
		say(p, PF_WARN,
		    "interrupts: IRQ %u (%s) fired %.0f times/s over %.1f s: while its device is kept awake each one wakes the CPUs in a nap",
		    irq, names, rate, p->sample_s);
	}
	if (!busy)
		say(p, PF_OK, "interrupts: no IRQ above %d/s over %.1f s",
		    PREFLIGHT_BUSY_IRQ, p->sample_s);
}

/* ---- watchdogs ---- */

static void check_hw_watchdogs(struct pf *p)
{
	const char *root = p->o->sysfs_root;
	unsigned long long max_ms = p->o->max_nap_ms;
	char path[PATH_MAX], dir[PATH_MAX], id[64], state[16], tmo[16];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (path_fmt(path, sizeof(path), "%s/class/watchdog", root))
		return;
	d = opendir(path);
	while (d && (de = readdir(d))) {
		unsigned long long t;

		if (de->d_name[0] == '.' ||
		    path_fmt(dir, sizeof(dir), "%s/%s", path, de->d_name))
			continue;
		n++;
		read_attr(dir, "identity", id, sizeof(id));
		read_attr(dir, "state", state, sizeof(state));
		read_attr(dir, "timeout", tmo, sizeof(tmo));
		t = strtoull(tmo, NULL, 10);
		if (!strcmp(state, "inactive")) {
			say(p, PF_OK, "watchdog: %s (%s) is not running",
			    de->d_name, id);
		} else if (!tmo[0]) {
			say(p, PF_WARN,
			    "watchdog: %s (%s), state %s, timeout unknown: its feeder is frozen in a nap; check that naps (max-nap) end well within its timeout",
			    de->d_name, id, state[0] ? state : "unknown");
		} else if (!max_ms || t * 1000 <= max_ms) {
			say(p, PF_FAIL,
			    "watchdog: %s (%s), state %s, timeout %llu s: %s, while its feeder is frozen: the machine would reset",
			    de->d_name, id, state[0] ? state : "unknown", t,
			    max_ms ? "a nap can last max-nap, as long or longer" :
			    "naps have no bound (max-nap 0) and can outlast it");
		} else {
			say(p, PF_OK,
			    "watchdog: %s (%s), state %s, timeout %llu s: naps end after max-nap %.1f s, before it",
			    de->d_name, id, state[0] ? state : "unknown", t,
			    max_ms / 1000.0);
		}
	}
	if (d)
		closedir(d);
	if (!n)
		say(p, PF_OK, "watchdog: no hardware watchdog (%s/class/watchdog%s)",
		    root, d ? " is empty" : " missing");
}

/* WatchdogSec= of a unit file, or "" if it sets none. */
static void unit_watchdog(const char *file, char *val, size_t size)
{
	char *text = read_whole(file), *line, *save;

	val[0] = '\0';
	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		while (isspace((unsigned char)*line))
			line++;
		if (!strncmp(line, "WatchdogSec=", 12))
			snprintf(val, size, "%s", line + 12);
	}
	free(text);
}

static void check_unit_watchdogs(struct pf *p)
{
	/* systemd's search order: the first file of a name wins. */
	static const char *const dirs[] = {
		"/etc/systemd/system", "/run/systemd/system",
		"/usr/lib/systemd/system", "/lib/systemd/system",
	};
	unsigned long long max_ms = p->o->max_nap_ms;
	const char *sys = p->o->sysfs_root;
	char seen[256][64], file[PATH_MAX], dir[PATH_MAX], val[64];
	int nr_seen = 0, with = 0, bad = 0, dirs_found = 0, j;
	size_t root_len = strlen(sys);
	bool followed = false;
	unsigned int i;

	/* The root whose /sys is sysfs-root: "" for /sys, DIR for DIR/sys. */
	if (root_len >= 4 && !strcmp(sys + root_len - 4, "/sys"))
		root_len -= 4;
	else
		root_len = 0;
	/*
	 * As napd decides: under systemd, with systemd-timers yes, it ends
	 * each nap within a quarter of the shortest running WatchdogSec=.
	 */
	if (p->o->systemd_timers &&
	    !path_fmt(dir, sizeof(dir), "%.*s/run", (int)root_len, sys))
		followed = timers_systemd_booted(dir);
	for (i = 0; i < ARRAY_SIZE(dirs); i++) {
		struct dirent *de;
		DIR *d;

		if (path_fmt(dir, sizeof(dir), "%.*s%s", (int)root_len, sys,
			     dirs[i]))
			continue;
		d = opendir(dir);
		if (!d)
			continue;
		dirs_found++;
		while ((de = readdir(d))) {
			size_t len = strlen(de->d_name);
			unsigned long long ms;

			if (len < 9 || len >= sizeof(seen[0]) ||
			    strcmp(de->d_name + len - 8, ".service"))
				continue;
			for (j = 0; j < nr_seen; j++)
				if (!strcmp(seen[j], de->d_name))
					break;
			if (j < nr_seen)
				continue;
			if (nr_seen < 256)
				memcpy(seen[nr_seen++], de->d_name, len + 1);
			if (path_fmt(file, sizeof(file), "%s/%s", dir,
				     de->d_name))
				continue;
			unit_watchdog(file, val, sizeof(val));
			if (!val[0])
				continue;
			if (preflight_timespan_ms(val, &ms)) {
				say(p, PF_WARN,
				    "watchdog: %s: WatchdogSec=%s does not parse; check it against max-nap by hand",
				    file, val);
				continue;
			}
			if (!ms)
				continue;
			with++;
			if (followed)
				continue;
			if (!max_ms || ms <= max_ms) {
				bad++;
				say(p, PF_FAIL,
				    "watchdog: %s: WatchdogSec=%s, %s: the service is frozen in a nap, cannot ping systemd and would be killed",
				    file, val, max_ms ? "no longer than max-nap" :
				    "and naps have no bound (max-nap 0)");
			}
		}
		closedir(d);
	}
	if (!dirs_found)
		say(p, PF_NA,
		    "watchdog: no systemd unit directories: no service watchdog to check");
	else if (with && followed)
		say(p, PF_OK,
		    "watchdog: %d service%s with WatchdogSec=: naps end within a quarter of the shortest running one (systemd-timers yes)",
		    with, with == 1 ? "" : "s");
	else if (!bad)
		say(p, PF_OK,
		    "watchdog: %d service%s with WatchdogSec=, each longer than a nap (max-nap %.1f s)",
		    with, with == 1 ? "" : "s", max_ms / 1000.0);
}

int preflight_run(const struct napd_opts *o, FILE *out)
{
	struct napd_opts wo = *o;
	struct napd_setup *s;
	struct pf p = { .out = out, .o = o };
	char *nics[MAX_NETDEVS];
	int nr_nics, i;

	s = calloc(1, sizeof(*s));
	if (!s) {
		fprintf(stderr, "napd: out of memory\n");
		return 2;
	}
	/* Before any output: what napd prints is no interrupt of ours. */
	sample_interrupts(&p);
	fprintf(out, "# napd %s --check: sysfs %s, proc %s\n", NAPD_VERSION,
		o->sysfs_root, o->proc_root);

	check_kernel(&p);
	nr_nics = list_nics(o->sysfs_root, nics, MAX_NETDEVS);
	check_nics(&p, &wo, s, nics, nr_nics);
	check_devices(&p, &wo);
	check_idle(&p);
	check_busy(&p);
	check_hw_watchdogs(&p);
	check_unit_watchdogs(&p);

	fprintf(out, "# %d ok, %d warn, %d fail, %d n/a: %s\n", p.nr[PF_OK],
		p.nr[PF_WARN], p.nr[PF_FAIL], p.nr[PF_NA],
		!p.pseudo ? "pseudo-sleep not supported by this kernel" :
		p.nr[PF_FAIL] ? "naps would fail or be unsafe here" :
		p.nr[PF_WARN] ? "naps work; see the warnings" :
		"this host suits naps");
	for (i = 0; i < nr_nics; i++)
		free(nics[i]);
	free(s);
	free(p.irq0);
	free(p.irq1);
	return p.nr[PF_FAIL] || !p.pseudo ? 2 : p.nr[PF_WARN] ? 1 : 0;
}
