// SPDX-License-Identifier: GPL-2.0
/*
 * Command line parsing for napd.
 *
 * Hand-rolled rather than getopt_long() so that it keeps no global state
 * (optind) and can be called repeatedly from the unit tests.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "fail.h"
#include "inhibit.h"
#include "devpolicy.h"
#include "opts.h"
#include "sysfs.h"

const char napd_usage[] =
"Usage: napd --port PORT [--port PORT]... --wake-dev NETDEV\n"
"            [--wake-dev NETDEV]... [options]\n"
"       napd --status [--status-socket PATH]\n"
"       napd --check-config [FILE]\n"
"       napd --restore [--state-dir DIR]\n"
"       napd --list-devices [--config FILE]\n"
"       napd --check [--config FILE]\n"
"\n"
"Nap the machine between requests using pseudo-sleep.\n"
"\n"
"  --port PORT          TCP port served (1..65535, repeatable, required)\n"
"  --udp-port PORT      UDP port served: queued data blocks a nap (repeatable)\n"
"  --wake-dev NETDEV    network device whose IRQs end a nap (required,\n"
"                       repeatable); a bond, team or VLAN stands for its NICs\n"
"  --idle-ms MS         quiet time before a nap (1..3600000, default 5)\n"
"  --mode MODE          pseudo (default), s2idle or deep\n"
"  --wake-on WHAT       pseudo naps end on: task (work for the servers of the\n"
"                       ports; ARP, ping and the like are served asleep), irq\n"
"                       (any packet), auto (default: task if the kernel and\n"
"                       napd's capabilities allow it)\n"
"  --keep-awake DEV     keep a device running during naps (repeatable);\n"
"                       a sysfs device directory or a name such as ttyS0\n"
"  --device-policy P    lean (default): naps leave USB host controllers,\n"
"                       NVMe and SATA controllers (and all below them) and\n"
"                       PCI functions without a driver awake; all: naps\n"
"                       suspend them too\n"
"  --nap-keep DEV       keep this device awake in naps (repeatable): a\n"
"                       sysfs device path or a PCI address (0000:00:1f.2)\n"
"  --nap-suspend DEV    let naps suspend it despite the policy (repeatable)\n"
"  --list-devices       print per device whether a nap suspends it, why,\n"
"                       and its cost in napd's last nap; exit\n"
"  --check              check whether this host suits naps (kernel, NICs and\n"
"                       their IRQs, devices, idle states, watchdogs); print\n"
"                       a verdict per line; exit 0 ok, 1 warnings, 2 fails\n"
"  --process NAME       no nap while a process of this name runs (repeatable)\n"
"  --cpu-max PCT        no nap if CPU use over the idle time was above PCT %\n"
"                       of all CPUs (1..100, default 10; 100: no check)\n"
"  --runnable-max N     no nap with more than N runnable tasks besides napd\n"
"                       (default 0)\n"
"  --disk-check yes|no  no nap with disk I/O in flight or done (default yes)\n"
"  --config FILE        settings file (default /etc/napd.conf if present);\n"
"                       command line options win\n"
"  --status-socket PATH unix socket for --status (default /run/napd.sock)\n"
"  --status             ask the running napd for its state, print JSON\n"
"  --state-dir DIR      where the original settings are saved while napd\n"
"                       runs (default /run/napd)\n"
"  --restore            put back the settings a killed napd saved, exit\n"
"  --check-config [FILE] check the settings file (default: --config or\n"
"                       /etc/napd.conf) and the command line, report every\n"
"                       error as FILE:LINE: reason; exit 2 on any\n"
"  --dry-run            write nothing, do not nap, print what would happen\n"
"  --stats              print totals as JSON on exit\n"
"  --metrics-file FILE  write Prometheus metrics for node_exporter's textfile\n"
"                       collector to FILE (absolute, *.prom; default none)\n"
"  --metrics-interval S seconds between metrics writes (1..3600, default 15)\n"
"  --max-nap DURATION   end every nap after DURATION (500ms, 5s, 2min; 0: no\n"
"                       bound; default 5s) with an alarm timer\n"
"  --systemd-timers yes|no  end a nap when the next systemd timer is due\n"
"                       (default yes; nothing without systemd)\n"
"  --sync yes|no        sync the filesystems before each pseudo nap (default\n"
"                       no: /sys/power/sync_on_suspend is 0 while napd runs)\n"
"  --inhibitors yes|no  no nap while a logind sleep inhibitor lock is held\n"
"                       (systemd-inhibit --what=sleep; default yes)\n"
"  --inhibit-dir DIR    logind's lock files (default /run/systemd/inhibit)\n"
"  --socket-group NAME  the group that may use the status socket (mode\n"
"                       0660; default napd if /etc/group has it, else\n"
"                       root only)\n"
"  --log                log one line per nap and per held back nap\n"
"  --max-naps N         exit after N naps\n"
"  --sysfs-root DIR     sysfs mount point (default /sys)\n"
"  --proc-root DIR      procfs mount point (default /proc)\n"
"  --help               show this text\n"
"  --version            show the version\n";

static const char *const wake_on_names[] = {
	[NAPD_WAKE_AUTO] = "auto",
	[NAPD_WAKE_IRQ] = "irq",
	[NAPD_WAKE_TASK] = "task",
};

static const char *const mode_names[] = {
	[NAPD_MODE_PSEUDO] = "pseudo",
	[NAPD_MODE_S2IDLE] = "s2idle",
	[NAPD_MODE_DEEP] = "deep",
};

const char *napd_mode_name(enum napd_mode mode)
{
	return mode_names[mode];
}

/*
 * Every error of a config file, one per line in @buf: a file with ten
 * bad lines is fixed in one go, not in ten restarts.
 */
struct errs {
	char *buf;
	size_t size, len;
	int nr, dropped;
};

static void add_err(struct errs *e, const char *fmt, ...)
	__printf(2, 3);

static void add_err(struct errs *e, const char *fmt, ...)
{
	/* room for "\n... N more errors" */
	const size_t reserve = 32;
	va_list ap;
	int n;

	e->nr++;
	if (!e->size || e->dropped || e->len + reserve >= e->size) {
		e->dropped++;
		return;
	}
	if (e->len)
		e->buf[e->len++] = '\n';
	va_start(ap, fmt);
	n = vsnprintf(e->buf + e->len, e->size - reserve - e->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= e->size - reserve - e->len) {
		/* does not fit whole: leave it out */
		if (e->len)
			e->len--;
		e->buf[e->len] = '\0';
		e->dropped++;
		return;
	}
	e->len += n;
}

static void end_errs(struct errs *e)
{
	if (e->dropped && e->size)
		snprintf(e->buf + e->len, e->size - e->len,
			 "%s... %d more error%s", e->len ? "\n" : "",
			 e->dropped, e->dropped == 1 ? "" : "s");
}

/*
 * Strict decimal: strtoul() alone would take " 12", "+12", "-1" (wrapping
 * to ULONG_MAX) and "0x50" with base 0, none of which we want.
 */
static int parse_ulong(const char *s, unsigned long min, unsigned long max,
		       unsigned long *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int napd_parse_duration_ms(const char *s, unsigned long max_ms,
			   unsigned long *ms)
{
	static const struct {
		const char *unit;
		unsigned long ms;
	} units[] = {
		{ "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "min", 60000 },
		{ "h", 3600000 },
	};
	unsigned long v;
	unsigned int i;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno)
		return -1;
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (v > max_ms / units[i].ms)
			return -1;
		*ms = v * units[i].ms;
		return 0;
	}
	return -1;
}

enum opt_id {
	OPT_PORT, OPT_IDLE_MS, OPT_WAKE_DEV, OPT_MODE, OPT_KEEP_AWAKE,
	OPT_DRY_RUN, OPT_STATS, OPT_LOG, OPT_MAX_NAPS, OPT_SYSFS_ROOT,
	OPT_PROC_ROOT, OPT_HELP, OPT_VERSION, OPT_UDP_PORT, OPT_PROCESS,
	OPT_CPU_MAX, OPT_RUNNABLE_MAX, OPT_DISK_CHECK, OPT_CONFIG,
	OPT_STATUS_SOCKET, OPT_STATUS, OPT_WAKE_ON, OPT_CHECK_CONFIG,
	OPT_STATE_DIR, OPT_RESTORE, OPT_METRICS_FILE, OPT_METRICS_INTERVAL,
	OPT_MAX_NAP, OPT_SYSTEMD_TIMERS, OPT_INHIBITORS, OPT_INHIBIT_DIR,
	OPT_SOCKET_GROUP,
	OPT_NAP_KEEP, OPT_NAP_SUSPEND, OPT_DEVICE_POLICY, OPT_LIST_DEVICES,
	OPT_CHECK, OPT_SYNC,
	OPT_NR
};

/* How an option may be given. */
enum {
	ARG = 1,	/* takes a value */
	LIST = 2,	/* repeatable; the config file may list several */
	NOCONF = 4,	/* command line only */
	OPTARG = 8,	/* may take a value: --opt=VALUE or a next non-option */
};

static const struct {
	const char *name;
	enum opt_id id;
	unsigned int flags;
} opt_table[] = {
	{ "port",		OPT_PORT,		ARG | LIST },
	{ "udp-port",		OPT_UDP_PORT,		ARG | LIST },
	{ "idle-ms",		OPT_IDLE_MS,		ARG },
	{ "wake-dev",		OPT_WAKE_DEV,		ARG | LIST },
	{ "mode",		OPT_MODE,		ARG },
	{ "wake-on",		OPT_WAKE_ON,		ARG },
	{ "keep-awake",		OPT_KEEP_AWAKE,		ARG | LIST },
	{ "process",		OPT_PROCESS,		ARG | LIST },
	{ "cpu-max",		OPT_CPU_MAX,		ARG },
	{ "runnable-max",	OPT_RUNNABLE_MAX,	ARG },
	{ "disk-check",		OPT_DISK_CHECK,		ARG },
	{ "dry-run",		OPT_DRY_RUN,		0 },
	{ "stats",		OPT_STATS,		0 },
	{ "log",		OPT_LOG,		0 },
	{ "max-naps",		OPT_MAX_NAPS,		ARG },
	{ "sysfs-root",		OPT_SYSFS_ROOT,		ARG },
	{ "proc-root",		OPT_PROC_ROOT,		ARG },
	{ "status-socket",	OPT_STATUS_SOCKET,	ARG },
	{ "config",		OPT_CONFIG,		ARG | NOCONF },
	{ "status",		OPT_STATUS,		NOCONF },
	{ "check-config",	OPT_CHECK_CONFIG,	OPTARG | NOCONF },
	{ "state-dir",		OPT_STATE_DIR,		ARG | NOCONF },
	{ "metrics-file",	OPT_METRICS_FILE,	ARG },
	{ "metrics-interval",	OPT_METRICS_INTERVAL,	ARG },
	{ "max-nap",		OPT_MAX_NAP,		ARG },
	{ "systemd-timers",	OPT_SYSTEMD_TIMERS,	ARG },
	{ "inhibitors",		OPT_INHIBITORS,		ARG },
	{ "sync",		OPT_SYNC,		ARG },
	{ "inhibit-dir",	OPT_INHIBIT_DIR,	ARG },
	{ "socket-group",	OPT_SOCKET_GROUP,	ARG },
	{ "restore",		OPT_RESTORE,		NOCONF },
	{ "nap-keep",		OPT_NAP_KEEP,		ARG | LIST },
	{ "nap-suspend",	OPT_NAP_SUSPEND,	ARG | LIST },
	{ "device-policy",	OPT_DEVICE_POLICY,	ARG },
	{ "list-devices",	OPT_LIST_DEVICES,	NOCONF },
	{ "check",		OPT_CHECK,		NOCONF },
	{ "help",		OPT_HELP,		NOCONF },
	{ "version",		OPT_VERSION,		NOCONF },
};

static int add_port(unsigned short *ports, int *nr, unsigned long port,
		    const char *pfx, const char *name, char *err,
		    size_t errlen)
{
	int i;

	/* Duplicates are harmless but would waste a slot. */
	for (i = 0; i < *nr; i++)
		if (ports[i] == port)
			return 0;
	if (*nr == NAPD_MAX_PORTS)
		return fail(err, errlen, "too many %s%s (max %d)", pfx, name,
			    NAPD_MAX_PORTS);
	ports[(*nr)++] = port;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

/*
 * nap-keep or nap-suspend: a sysfs device path or a PCI address, in one
 * of the two lists only.  Whether the device exists is checked at start.
 */
static int add_nap_dev(struct napd_opts *o, bool keep, const char *pfx,
		       const char *name, const char *arg, char *err,
		       size_t errlen)
{
	const char **list = keep ? o->nap_keep : o->nap_suspend;
	const char **other = keep ? o->nap_suspend : o->nap_keep;
	int *nr = keep ? &o->nr_nap_keep : &o->nr_nap_suspend;
	int nr_other = keep ? o->nr_nap_suspend : o->nr_nap_keep, i;

	if (!devpolicy_valid_name(arg))
		return fail(err, errlen,
			    "bad %s%s '%s' (a sysfs device path or a PCI address such as 0000:00:1f.2)",
			    pfx, name, arg);
	for (i = 0; i < nr_other; i++)
		if (!strcmp(other[i], arg))
			return fail(err, errlen,
				    "%s%s '%s': also given as %snap-%s", pfx,
				    name, arg, pfx, keep ? "suspend" : "keep");
	for (i = 0; i < *nr; i++)
		if (!strcmp(list[i], arg))
			return 0;
	if (*nr == NAPD_MAX_NAP_DEVS)
		return fail(err, errlen, "too many %s%s (max %d)", pfx, name,
			    NAPD_MAX_NAP_DEVS);
	list[(*nr)++] = arg;
	return 0;
}

/* The index of @arg in @names[@n] in @v: 0, or -1 if it is none of them. */
static int name_index(const char *const *names, size_t n, const char *arg,
		      unsigned long *v)
{
	for (*v = 0; *v < n; (*v)++)
		if (!strcmp(arg, names[*v]))
			return 0;
	return -1;
}

/*
 * Apply one setting.  @pfx is "--" on the command line and "" in the
 * config file, so that messages name the setting as the user wrote it.
 * A flag's @arg is NULL on the command line and yes/no in the file.
 */
static int apply_opt(struct napd_opts *o, enum opt_id id, const char *pfx,
		     const char *name, const char *arg, char *err,
		     size_t errlen)
{
	unsigned long v;
	bool b = true;

	if (arg && (id == OPT_DRY_RUN || id == OPT_STATS || id == OPT_LOG) &&
	    parse_bool(arg, &b))
		return fail(err, errlen, "bad %s%s '%s' (yes or no)", pfx,
			    name, arg);

	switch (id) {
	case OPT_PORT:
	case OPT_UDP_PORT:
		if (parse_ulong(arg, 1, 65535, &v))
			return fail(err, errlen,
				    "bad %s%s '%s' (1..65535)", pfx, name, arg);
		if (id == OPT_PORT)
			return add_port(o->ports, &o->nr_ports, v, pfx, name,
					err, errlen);
		return add_port(o->udp_ports, &o->nr_udp_ports, v, pfx, name,
				err, errlen);
	case OPT_IDLE_MS:
		if (parse_ulong(arg, 1, NAPD_IDLE_MS_MAX, &v))
			return fail(err, errlen,
				    "bad %sidle-ms '%s' (1..%lu)", pfx, arg,
				    NAPD_IDLE_MS_MAX);
		o->idle_ms = v;
		return 0;
	case OPT_CPU_MAX:
		if (parse_ulong(arg, 1, 100, &v))
			return fail(err, errlen,
				    "bad %scpu-max '%s' (1..100)", pfx, arg);
		o->cpu_max = v;
		return 0;
	case OPT_RUNNABLE_MAX:
		if (parse_ulong(arg, 0, 1000000, &v))
			return fail(err, errlen,
				    "bad %srunnable-max '%s' (0..1000000)", pfx,
				    arg);
		o->runnable_max = v;
		return 0;
	case OPT_DISK_CHECK:
		if (parse_bool(arg, &o->disk_check))
			return fail(err, errlen,
				    "bad %sdisk-check '%s' (yes or no)", pfx,
				    arg);
		return 0;
	case OPT_WAKE_DEV:
		if (!*arg || strchr(arg, '/') || strlen(arg) > 15)
			return fail(err, errlen, "bad %swake-dev '%s'", pfx,
				    arg);
		for (v = 0; v < (unsigned long)o->nr_wake_devs; v++)
			if (!strcmp(o->wake_devs[v], arg))
				return 0;
		if (o->nr_wake_devs == NAPD_MAX_WAKE_DEVS)
			return fail(err, errlen, "too many %swake-dev (max %d)",
				    pfx, NAPD_MAX_WAKE_DEVS);
		o->wake_devs[o->nr_wake_devs++] = arg;
		return 0;
	case OPT_MODE:
		if (name_index(mode_names, ARRAY_SIZE(mode_names), arg, &v))
			return fail(err, errlen,
				    "bad %smode '%s' (pseudo, s2idle or deep)",
				    pfx, arg);
		o->mode = v;
		return 0;
	case OPT_WAKE_ON:
		if (name_index(wake_on_names, ARRAY_SIZE(wake_on_names), arg, &v))
			return fail(err, errlen,
				    "bad %swake-on '%s' (auto, irq or task)",
				    pfx, arg);
		o->wake_on = v;
		return 0;
	case OPT_KEEP_AWAKE:
		if (!*arg)
			return fail(err, errlen, "empty %skeep-awake", pfx);
		if (o->nr_keep == NAPD_MAX_KEEP)
			return fail(err, errlen,
				    "too many %skeep-awake (max %d)", pfx,
				    NAPD_MAX_KEEP);
		o->keep_awake[o->nr_keep++] = arg;
		return 0;
	case OPT_PROCESS:
		/* A task's comm is at most 15 characters. */
		if (!*arg || strchr(arg, '/') || strlen(arg) > 15)
			return fail(err, errlen,
				    "bad %sprocess '%s' (a name of 1..15 characters, no '/')",
				    pfx, arg);
		for (v = 0; v < (unsigned long)o->nr_procs; v++)
			if (!strcmp(o->procs[v], arg))
				return 0;
		if (o->nr_procs == NAPD_MAX_PROCS)
			return fail(err, errlen, "too many %sprocess (max %d)",
				    pfx, NAPD_MAX_PROCS);
		o->procs[o->nr_procs++] = arg;
		return 0;
	case OPT_MAX_NAPS:
		if (parse_ulong(arg, 1, ~0UL, &v))
			return fail(err, errlen, "bad %smax-naps '%s'", pfx,
				    arg);
		o->max_naps = v;
		return 0;
	case OPT_SYSFS_ROOT:
	case OPT_PROC_ROOT:
	case OPT_CONFIG:
	case OPT_STATUS_SOCKET:
		if (!*arg)
			return fail(err, errlen, "empty %s%s", pfx, name);
		if (id == OPT_STATUS_SOCKET && strlen(arg) > 107)
			return fail(err, errlen, "%s%s too long (max 107)",
				    pfx, name);
		if (id == OPT_SYSFS_ROOT)
			o->sysfs_root = arg;
		else if (id == OPT_PROC_ROOT)
			o->proc_root = arg;
		else if (id == OPT_CONFIG)
			o->config = arg;
		else
			o->status_socket = arg;
		return 0;
	case OPT_DRY_RUN:
		o->dry_run = b;
		return 0;
	case OPT_STATS:
		o->stats = b;
		return 0;
	case OPT_LOG:
		o->log = b;
		return 0;
	case OPT_HELP:
		o->help = true;
		return 0;
	case OPT_VERSION:
		o->version = true;
		return 0;
	case OPT_STATUS:
		o->status = true;
		return 0;
	case OPT_STATE_DIR:
		/* a relative one would move with the working directory */
		if (*arg != '/')
			return fail(err, errlen,
				    "bad %s%s '%s' (an absolute path)", pfx,
				    name, arg);
		o->state_dir = arg;
		return 0;
	case OPT_RESTORE:
		o->restore = true;
		return 0;
	case OPT_METRICS_FILE:
		/* node_exporter's textfile collector reads *.prom only */
		v = strlen(arg);
		if (*arg != '/' || v < 6 || strcmp(arg + v - 5, ".prom") ||
		    arg[v - 6] == '/')
			return fail(err, errlen,
				    "bad %s%s '%s' (an absolute path ending in .prom)",
				    pfx, name, arg);
		o->metrics_file = arg;
		return 0;
	case OPT_METRICS_INTERVAL:
		if (parse_ulong(arg, 1, 3600, &v))
			return fail(err, errlen,
				    "bad %s%s '%s' (1..3600 seconds)", pfx,
				    name, arg);
		o->metrics_interval = v;
		return 0;
	case OPT_MAX_NAP:
		if (napd_parse_duration_ms(arg, NAPD_MAX_NAP_MS_MAX, &v) ||
		    (v && v < 10))
			return fail(err, errlen,
				    "bad %s%s '%s' (0 for none, or 10ms..24h: 500ms, 5s, 2min)",
				    pfx, name, arg);
		o->max_nap_ms = v;
		return 0;
	case OPT_SYSTEMD_TIMERS:
		if (parse_bool(arg, &o->systemd_timers))
			return fail(err, errlen, "bad %s%s '%s' (yes or no)",
				    pfx, name, arg);
		return 0;
	case OPT_INHIBITORS:
		if (parse_bool(arg, &o->inhibitors))
			return fail(err, errlen, "bad %s%s '%s' (yes or no)",
				    pfx, name, arg);
		return 0;
	case OPT_SYNC:
		if (parse_bool(arg, &o->sync_fs))
			return fail(err, errlen, "bad %s%s '%s' (yes or no)",
				    pfx, name, arg);
		return 0;
	case OPT_INHIBIT_DIR:
		if (*arg != '/')
			return fail(err, errlen,
				    "bad %s%s '%s' (an absolute path)", pfx,
				    name, arg);
		o->inhibit_dir = arg;
		return 0;
	case OPT_SOCKET_GROUP:
		/* a group name as /etc/group has it */
		if (!*arg || strlen(arg) > 32 || strpbrk(arg, ":/ \t,"))
			return fail(err, errlen,
				    "bad %s%s '%s' (a group name of 1..32 characters)",
				    pfx, name, arg);
		o->socket_group = arg;
		return 0;
	case OPT_NAP_KEEP:
	case OPT_NAP_SUSPEND:
		return add_nap_dev(o, id == OPT_NAP_KEEP, pfx, name, arg, err,
				   errlen);
	case OPT_DEVICE_POLICY:
		if (!strcmp(arg, "lean"))
			o->dev_policy = NAPD_POLICY_LEAN;
		else if (!strcmp(arg, "all"))
			o->dev_policy = NAPD_POLICY_ALL;
		else
			return fail(err, errlen,
				    "bad %s%s '%s' (lean or all)", pfx, name,
				    arg);
		return 0;
	case OPT_LIST_DEVICES:
		o->list_devices = true;
		return 0;
	case OPT_CHECK:
		o->check = true;
		return 0;
	case OPT_CHECK_CONFIG:
		if (arg && !*arg)
			return fail(err, errlen, "empty %s%s", pfx, name);
		o->check_config = true;
		if (arg)
			o->config = arg;
		return 0;
	case OPT_NR:
		break;
	}
	return fail(err, errlen, "internal error");
}

static void set_defaults(struct napd_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->idle_ms = NAPD_IDLE_MS_DEFAULT;
	o->mode = NAPD_MODE_PSEUDO;
	o->cpu_max = NAPD_CPU_MAX_DEFAULT;
	o->disk_check = true;
	o->sysfs_root = "/sys";
	o->proc_root = "/proc";
	o->status_socket = NAPD_SOCKET_DEFAULT;
	o->state_dir = NAPD_STATE_DIR_DEFAULT;
	o->metrics_interval = NAPD_METRICS_INTERVAL_DEFAULT;
	o->max_nap_ms = NAPD_MAX_NAP_MS_DEFAULT;
	o->systemd_timers = true;
	o->inhibitors = true;
	o->inhibit_dir = NAPD_INHIBIT_DIR_DEFAULT;
}

/* argv on top of @o; @seen gets a bit per option id given. */
static int parse_argv(struct napd_opts *o, unsigned long long *seen,
		      int argc, char *const argv[], char *err, size_t errlen)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *arg = NULL, *eq;
		size_t len;
		unsigned int t;

		if (!strcmp(a, "-h"))
			a = "--help";
		else if (!strcmp(a, "-V"))
			a = "--version";
		if (strncmp(a, "--", 2) || !a[2])
			return fail(err, errlen, "unexpected argument '%s'",
				    argv[i]);
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);

		for (t = 0; t < ARRAY_SIZE(opt_table); t++)
			if (strlen(opt_table[t].name) == len &&
			    !strncmp(opt_table[t].name, a, len))
				break;
		if (t == ARRAY_SIZE(opt_table))
			return fail(err, errlen, "unknown option '%s'",
				    argv[i]);

		if (opt_table[t].flags & ARG) {
			if (eq)
				arg = eq + 1;
			else if (i + 1 < argc)
				arg = argv[++i];
			else
				return fail(err, errlen, "--%s needs a value",
					    opt_table[t].name);
		} else if (opt_table[t].flags & OPTARG) {
			if (eq)
				arg = eq + 1;
			else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2))
				arg = argv[++i];
		} else if (eq) {
			return fail(err, errlen, "--%s takes no value",
				    opt_table[t].name);
		}

		if (apply_opt(o, opt_table[t].id, "--", opt_table[t].name,
			      arg, err, errlen))
			return -1;
		*seen |= 1ULL << opt_table[t].id;
	}
	return 0;
}

static int check_required(const struct napd_opts *o, const char *file,
			  char *err, size_t errlen)
{
	if (o->help || o->version || o->status || o->restore ||
	    o->list_devices || o->check)
		return 0;
	if (!o->nr_ports)
		return fail(err, errlen, "missing --port%s%s%s", file ?
			    " (or port in " : "", file ? file : "",
			    file ? ")" : "");
	if (!o->nr_wake_devs)
		return fail(err, errlen, "missing --wake-dev%s%s%s", file ?
			    " (or wake-dev in " : "", file ? file : "",
			    file ? ")" : "");
	return 0;
}

int napd_parse_opts(struct napd_opts *o, int argc, char *const argv[],
		    char *err, size_t errlen)
{
	unsigned long long seen = 0;

	set_defaults(o);
	if (errlen)
		err[0] = '\0';
	if (parse_argv(o, &seen, argc, argv, err, errlen))
		return -1;
	return check_required(o, NULL, err, errlen);
}

const char *napd_wake_devs_str(const struct napd_opts *o, char *buf,
			       size_t size)
{
	size_t len = 0;
	int i, n;

	if (size)
		buf[0] = '\0';
	for (i = 0; i < o->nr_wake_devs && len < size; i++) {
		n = snprintf(buf + len, size - len, "%s%s", i ? "," : "",
			     o->wake_devs[i]);
		if (n < 0)
			break;
		len += n;
	}
	return buf;
}

char *napd_opts_strdup(struct napd_opts *o, const char *s)
{
	size_t len = strlen(s) + 1;
	struct opt_str *n = malloc(sizeof(*n) + len);

	if (!n)
		return NULL;
	memcpy(n->s, s, len);
	n->next = o->strs;
	o->strs = n;
	return n->s;
}

void napd_opts_free(struct napd_opts *o)
{
	while (o->strs) {
		struct opt_str *n = o->strs;

		o->strs = n->next;
		free(n);
	}
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int parse_config(struct napd_opts *o, const char *file,
			const char *text, struct errs *e)
{
	int first_line[OPT_NR] = { 0 };
	const char *p = text;
	int lineno = 0, nr0 = e->nr;

	while (*p) {
		char line[1024], why[512], *key, *val, *eq, *tok, *save, *c;
		size_t len = strcspn(p, "\n");
		unsigned int t;
		int nvals = 0;

		lineno++;
		if (len >= sizeof(line)) {
			add_err(e, "%s:%d: line too long (max %zu characters)",
				file, lineno, sizeof(line) - 1);
			p += len + (p[len] == '\n');
			continue;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		p += len + (p[len] == '\n');

		key = trim(line);
		if (!*key || *key == '#')
			continue;
		for (c = key; *c; c++)
			if (iscntrl((unsigned char)*c) && *c != '\t')
				break;
		if (*c) {
			add_err(e, "%s:%d: control character 0x%02x in line",
				file, lineno, (unsigned char)*c);
			continue;
		}
		eq = strchr(key, '=');
		if (!eq) {
			add_err(e, "%s:%d: expected 'key = value', got '%s'",
				file, lineno, key);
			continue;
		}
		*eq = '\0';
		val = trim(eq + 1);
		key = trim(key);
		if (!*key) {
			add_err(e, "%s:%d: expected 'key = value', no key",
				file, lineno);
			continue;
		}
		for (t = 0; t < ARRAY_SIZE(opt_table); t++)
			if (!(opt_table[t].flags & NOCONF) &&
			    !strcmp(opt_table[t].name, key))
				break;
		if (t == ARRAY_SIZE(opt_table)) {
			add_err(e, "%s:%d: unknown key '%s'", file, lineno,
				key);
			continue;
		}
		if (!*val) {
			add_err(e, "%s:%d: %s needs a value", file, lineno,
				key);
			continue;
		}
		if (!(opt_table[t].flags & LIST)) {
			enum opt_id id = opt_table[t].id;
			char *copy;

			/* Which of two would win is a guess: say so. */
			if (first_line[id]) {
				add_err(e, "%s:%d: duplicate %s (first set on line %d)",
					file, lineno, key, first_line[id]);
				continue;
			}
			first_line[id] = lineno;
			copy = napd_opts_strdup(o, val);
			if (!copy) {
				add_err(e, "%s:%d: out of memory", file,
					lineno);
				return e->nr - nr0;
			}
			if (apply_opt(o, id, "", key, copy, why, sizeof(why)))
				add_err(e, "%s:%d: %s", file, lineno, why);
			continue;
		}
		/* "port = 80, 443" or "port = 80 443" or repeated keys */
		for (tok = strtok_r(val, ", \t", &save); tok;
		     tok = strtok_r(NULL, ", \t", &save)) {
			char *copy = napd_opts_strdup(o, tok);

			nvals++;
			if (!copy) {
				add_err(e, "%s:%d: out of memory", file,
					lineno);
				return e->nr - nr0;
			}
			if (apply_opt(o, opt_table[t].id, "", key, copy, why,
				      sizeof(why)))
				add_err(e, "%s:%d: %s", file, lineno, why);
		}
		if (!nvals)
			add_err(e, "%s:%d: %s needs a value", file, lineno,
				key);
	}
	return e->nr - nr0;
}

int napd_parse_config(struct napd_opts *o, const char *file,
		      const char *text, char *err, size_t errlen)
{
	struct errs e = { .buf = err, .size = errlen };
	int nr;

	if (errlen)
		err[0] = '\0';
	nr = parse_config(o, file, text, &e);
	end_errs(&e);
	return nr;
}

/* Copy option @id from @src to @dst: the command line wins. */
static void take_opt(struct napd_opts *dst, const struct napd_opts *src,
		     enum opt_id id)
{
	switch (id) {
	case OPT_PORT:
		memcpy(dst->ports, src->ports, sizeof(dst->ports));
		dst->nr_ports = src->nr_ports;
		break;
	case OPT_UDP_PORT:
		memcpy(dst->udp_ports, src->udp_ports, sizeof(dst->udp_ports));
		dst->nr_udp_ports = src->nr_udp_ports;
		break;
	case OPT_KEEP_AWAKE:
		memcpy(dst->keep_awake, src->keep_awake,
		       sizeof(dst->keep_awake));
		dst->nr_keep = src->nr_keep;
		break;
	case OPT_PROCESS:
		memcpy(dst->procs, src->procs, sizeof(dst->procs));
		dst->nr_procs = src->nr_procs;
		break;
	case OPT_IDLE_MS:
		dst->idle_ms = src->idle_ms;
		break;
	case OPT_WAKE_DEV:
		memcpy(dst->wake_devs, src->wake_devs, sizeof(dst->wake_devs));
		dst->nr_wake_devs = src->nr_wake_devs;
		break;
	case OPT_MODE:
		dst->mode = src->mode;
		break;
	case OPT_WAKE_ON:
		dst->wake_on = src->wake_on;
		break;
	case OPT_CPU_MAX:
		dst->cpu_max = src->cpu_max;
		break;
	case OPT_RUNNABLE_MAX:
		dst->runnable_max = src->runnable_max;
		break;
	case OPT_DISK_CHECK:
		dst->disk_check = src->disk_check;
		break;
	case OPT_DRY_RUN:
		dst->dry_run = src->dry_run;
		break;
	case OPT_STATS:
		dst->stats = src->stats;
		break;
	case OPT_LOG:
		dst->log = src->log;
		break;
	case OPT_MAX_NAPS:
		dst->max_naps = src->max_naps;
		break;
	case OPT_SYSFS_ROOT:
		dst->sysfs_root = src->sysfs_root;
		break;
	case OPT_PROC_ROOT:
		dst->proc_root = src->proc_root;
		break;
	case OPT_CONFIG:
		dst->config = src->config;
		break;
	case OPT_STATUS_SOCKET:
		dst->status_socket = src->status_socket;
		break;
	case OPT_HELP:
		dst->help = src->help;
		break;
	case OPT_VERSION:
		dst->version = src->version;
		break;
	case OPT_STATUS:
		dst->status = src->status;
		break;
	case OPT_STATE_DIR:
		dst->state_dir = src->state_dir;
		break;
	case OPT_RESTORE:
		dst->restore = src->restore;
		break;
	case OPT_METRICS_FILE:
		dst->metrics_file = src->metrics_file;
		break;
	case OPT_METRICS_INTERVAL:
		dst->metrics_interval = src->metrics_interval;
		break;
	case OPT_MAX_NAP:
		dst->max_nap_ms = src->max_nap_ms;
		break;
	case OPT_SYSTEMD_TIMERS:
		dst->systemd_timers = src->systemd_timers;
		break;
	case OPT_INHIBITORS:
		dst->inhibitors = src->inhibitors;
		break;
	case OPT_SYNC:
		dst->sync_fs = src->sync_fs;
		break;
	case OPT_INHIBIT_DIR:
		dst->inhibit_dir = src->inhibit_dir;
		break;
	case OPT_SOCKET_GROUP:
		dst->socket_group = src->socket_group;
		break;
	case OPT_NAP_KEEP:
		memcpy(dst->nap_keep, src->nap_keep, sizeof(dst->nap_keep));
		dst->nr_nap_keep = src->nr_nap_keep;
		break;
	case OPT_NAP_SUSPEND:
		memcpy(dst->nap_suspend, src->nap_suspend,
		       sizeof(dst->nap_suspend));
		dst->nr_nap_suspend = src->nr_nap_suspend;
		break;
	case OPT_DEVICE_POLICY:
		dst->dev_policy = src->dev_policy;
		break;
	case OPT_LIST_DEVICES:
		dst->list_devices = src->list_devices;
		break;
	case OPT_CHECK:
		dst->check = src->check;
		break;
	case OPT_CHECK_CONFIG:
		dst->check_config = src->check_config;
		if (src->config)
			dst->config = src->config;
		break;
	case OPT_NR:
		break;
	}
}

int napd_load_opts(struct napd_opts *o, int argc, char *const argv[],
		   char *err, size_t errlen)
{
	struct errs e = { .buf = err, .size = errlen };
	struct napd_opts cli;
	unsigned long long seen = 0;
	const char *file;
	char *text;
	unsigned int t;

	set_defaults(&cli);
	if (errlen)
		err[0] = '\0';
	if (parse_argv(&cli, &seen, argc, argv, err, errlen))
		return -1;
	/* --restore needs nothing from the file: a bad one cannot stop it */
	if (cli.help || cli.version || cli.restore) {
		*o = cli;
		return 0;
	}

	set_defaults(o);
	file = cli.config ? cli.config : NAPD_CONFIG_DEFAULT;
	text = read_whole(file);
	/* --check-config with no file to check is an error too */
	if (!text && (cli.config || cli.check_config || errno != ENOENT)) {
		fail(err, errlen, "cannot read %s: %s", file, strerror(errno));
		return cli.check_config ? -2 : -1;
	}
	if (text) {
		parse_config(o, file, text, &e);
		free(text);
	} else {
		file = NULL;
	}
	for (t = 0; t < ARRAY_SIZE(opt_table); t++)
		if (seen & (1ULL << opt_table[t].id))
			take_opt(o, &cli, opt_table[t].id);
	if (e.nr) {
		/* what is missing may be set on a bad line: no guess */
		end_errs(&e);
		return -2;
	}
	return check_required(o, file, err, errlen);
}
