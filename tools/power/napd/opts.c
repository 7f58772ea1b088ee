// SPDX-License-Identifier: GPL-2.0
/*
 * Command line parsing for napd.
 *
 * Hand-rolled rather than getopt_long() so that it keeps no global state
 * (optind) and can be called repeatedly from the unit tests.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

const char napd_usage[] =
"Usage: napd --port PORT [--port PORT]... --wake-dev NETDEV [options]\n"
"\n"
"Nap the machine between requests using pseudo-sleep.\n"
"\n"
"  --port PORT        TCP port served (1..65535, repeatable, required)\n"
"  --wake-dev NETDEV  network device whose IRQs end a nap (required)\n"
"  --idle-ms MS       quiet time before a nap (1..3600000, default 50)\n"
"  --mode MODE        pseudo (default), s2idle or deep\n"
"  --keep-awake DEV   keep a device running during naps (repeatable);\n"
"                     a sysfs device directory or a name such as ttyS0\n"
"  --dry-run          write nothing, do not nap, print what would happen\n"
"  --stats            print totals as JSON on exit\n"
"  --log              print one line per nap\n"
"  --max-naps N       exit after N naps\n"
"  --sysfs-root DIR   sysfs mount point (default /sys)\n"
"  --proc-root DIR    procfs mount point (default /proc)\n"
"  --help             show this text\n"
"  --version          show the version\n";

static const char *const mode_names[] = {
	[NAPD_MODE_PSEUDO] = "pseudo",
	[NAPD_MODE_S2IDLE] = "s2idle",
	[NAPD_MODE_DEEP] = "deep",
};

const char *napd_mode_name(enum napd_mode mode)
{
	return mode_names[mode];
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
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

enum opt_id {
	OPT_PORT, OPT_IDLE_MS, OPT_WAKE_DEV, OPT_MODE, OPT_KEEP_AWAKE,
	OPT_DRY_RUN, OPT_STATS, OPT_LOG, OPT_MAX_NAPS, OPT_SYSFS_ROOT,
	OPT_PROC_ROOT, OPT_HELP, OPT_VERSION,
};

static const struct {
	const char *name;
	enum opt_id id;
	bool has_arg;
} opt_table[] = {
	{ "port",	OPT_PORT,	true },
	{ "idle-ms",	OPT_IDLE_MS,	true },
	{ "wake-dev",	OPT_WAKE_DEV,	true },
	{ "mode",	OPT_MODE,	true },
	{ "keep-awake",	OPT_KEEP_AWAKE,	true },
	{ "dry-run",	OPT_DRY_RUN,	false },
	{ "stats",	OPT_STATS,	false },
	{ "log",	OPT_LOG,	false },
	{ "max-naps",	OPT_MAX_NAPS,	true },
	{ "sysfs-root",	OPT_SYSFS_ROOT,	true },
	{ "proc-root",	OPT_PROC_ROOT,	true },
	{ "help",	OPT_HELP,	false },
	{ "version",	OPT_VERSION,	false },
};

static int add_port(struct napd_opts *o, unsigned long port,
		    char *err, size_t errlen)
{
	int i;

	/* Duplicates are harmless but would waste a slot. */
	for (i = 0; i < o->nr_ports; i++)
		if (o->ports[i] == port)
			return 0;
	if (o->nr_ports == NAPD_MAX_PORTS)
		return fail(err, errlen, "too many --port (max %d)",
			    NAPD_MAX_PORTS);
	o->ports[o->nr_ports++] = port;
	return 0;
}

static int apply_opt(struct napd_opts *o, enum opt_id id, const char *name,
		     const char *arg, char *err, size_t errlen)
{
	unsigned long v;

	switch (id) {
	case OPT_PORT:
		if (parse_ulong(arg, 1, 65535, &v))
			return fail(err, errlen,
				    "bad --port '%s' (1..65535)", arg);
		return add_port(o, v, err, errlen);
	case OPT_IDLE_MS:
		if (parse_ulong(arg, 1, NAPD_IDLE_MS_MAX, &v))
			return fail(err, errlen,
				    "bad --idle-ms '%s' (1..%lu)", arg,
				    NAPD_IDLE_MS_MAX);
		o->idle_ms = v;
		return 0;
	case OPT_WAKE_DEV:
		if (!*arg || strchr(arg, '/'))
			return fail(err, errlen, "bad --wake-dev '%s'", arg);
		o->wake_dev = arg;
		return 0;
	case OPT_MODE:
		for (v = 0; v < ARRAY_SIZE(mode_names); v++) {
			if (!strcmp(arg, mode_names[v])) {
				o->mode = v;
				return 0;
			}
		}
		return fail(err, errlen,
			    "bad --mode '%s' (pseudo, s2idle or deep)", arg);
	case OPT_KEEP_AWAKE:
		if (!*arg)
			return fail(err, errlen, "empty --keep-awake");
		if (o->nr_keep == NAPD_MAX_KEEP)
			return fail(err, errlen,
				    "too many --keep-awake (max %d)",
				    NAPD_MAX_KEEP);
		o->keep_awake[o->nr_keep++] = arg;
		return 0;
	case OPT_MAX_NAPS:
		if (parse_ulong(arg, 1, ~0UL, &v))
			return fail(err, errlen, "bad --max-naps '%s'", arg);
		o->max_naps = v;
		return 0;
	case OPT_SYSFS_ROOT:
	case OPT_PROC_ROOT:
		if (!*arg)
			return fail(err, errlen, "empty --%s", name);
		if (id == OPT_SYSFS_ROOT)
			o->sysfs_root = arg;
		else
			o->proc_root = arg;
		return 0;
	case OPT_DRY_RUN:
		o->dry_run = true;
		return 0;
	case OPT_STATS:
		o->stats = true;
		return 0;
	case OPT_LOG:
		o->log = true;
		return 0;
	case OPT_HELP:
		o->help = true;
		return 0;
	case OPT_VERSION:
		o->version = true;
		return 0;
	}
	return fail(err, errlen, "internal error");
}

int napd_parse_opts(struct napd_opts *o, int argc, char *const argv[],
		    char *err, size_t errlen)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->idle_ms = NAPD_IDLE_MS_DEFAULT;
	o->mode = NAPD_MODE_PSEUDO;
	o->sysfs_root = "/sys";
	o->proc_root = "/proc";
	if (errlen)
		err[0] = '\0';

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

		if (opt_table[t].has_arg) {
			if (eq)
				arg = eq + 1;
			else if (i + 1 < argc)
				arg = argv[++i];
			else
				return fail(err, errlen, "--%s needs a value",
					    opt_table[t].name);
		} else if (eq) {
			return fail(err, errlen, "--%s takes no value",
				    opt_table[t].name);
		}

		if (apply_opt(o, opt_table[t].id, opt_table[t].name, arg,
			      err, errlen))
			return -1;
	}

	if (o->help || o->version)
		return 0;
	if (!o->nr_ports)
		return fail(err, errlen, "missing --port");
	if (!o->wake_dev)
		return fail(err, errlen, "missing --wake-dev");
	return 0;
}
