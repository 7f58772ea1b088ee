/* SPDX-License-Identifier: GPL-2.0 */
/*
 * napd settings: command line options and the config file.
 *
 * Parsing is a pure function of argv (or of the config text) so that the
 * unit tests can feed it good and bad input without forking.
 */
#ifndef NAPD_OPTS_H
#define NAPD_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#define NAPD_VERSION		"1.1"
#define NAPD_MAX_PORTS		64
#define NAPD_MAX_KEEP		16
#define NAPD_MAX_PROCS		16
#define NAPD_MAX_WAKE_DEVS	8
#define NAPD_MAX_NAP_DEVS	16	/* nap-keep, nap-suspend each */
#define NAPD_IDLE_MS_DEFAULT	5
#define NAPD_IDLE_MS_MAX	3600000UL
#define NAPD_CPU_MAX_DEFAULT	10
#define NAPD_CONFIG_DEFAULT	"/etc/napd.conf"
#define NAPD_SOCKET_DEFAULT	"/run/napd.sock"
#define NAPD_STATE_DIR_DEFAULT	"/run/napd"
#define NAPD_METRICS_INTERVAL_DEFAULT	15
#define NAPD_MAX_NAP_MS_DEFAULT	5000UL
#define NAPD_MAX_NAP_MS_MAX	86400000UL	/* a day */

enum napd_mode {
	NAPD_MODE_PSEUDO,
	NAPD_MODE_S2IDLE,
	NAPD_MODE_DEEP,
};

/* What ends a pseudo nap (auto: task where setup.c finds it possible). */
enum napd_wake_on {
	NAPD_WAKE_AUTO,
	NAPD_WAKE_IRQ,
	NAPD_WAKE_TASK,
};

/* Which devices a nap leaves alone (devpolicy.h). */
enum napd_dev_policy {
	NAPD_POLICY_LEAN,	/* USB hosts, NVMe, SATA, no-driver PCI awake */
	NAPD_POLICY_ALL,	/* no class rule: a nap suspends them too */
};

struct napd_opts {
	unsigned short ports[NAPD_MAX_PORTS];
	int nr_ports;
	unsigned short udp_ports[NAPD_MAX_PORTS];
	int nr_udp_ports;
	unsigned long idle_ms;
	const char *wake_devs[NAPD_MAX_WAKE_DEVS];	/* as given */
	int nr_wake_devs;
	enum napd_mode mode;
	enum napd_wake_on wake_on;
	const char *keep_awake[NAPD_MAX_KEEP];
	int nr_keep;
	const char *nap_keep[NAPD_MAX_NAP_DEVS];	/* path or PCI address */
	int nr_nap_keep;
	const char *nap_suspend[NAPD_MAX_NAP_DEVS];
	int nr_nap_suspend;
	enum napd_dev_policy dev_policy;
	const char *procs[NAPD_MAX_PROCS];	/* names that block naps */
	int nr_procs;
	unsigned long cpu_max;		/* % of all CPUs; 100: no check */
	unsigned long runnable_max;	/* runnable tasks besides napd */
	bool disk_check;
	unsigned long max_naps;		/* 0: no limit */
	const char *sysfs_root;
	const char *proc_root;
	const char *config;		/* NULL: NAPD_CONFIG_DEFAULT if any */
	const char *status_socket;
	const char *state_dir;		/* saved originals; "": none */
	const char *metrics_file;	/* Prometheus textfile; NULL: none */
	unsigned long metrics_interval;	/* s between writes */
	unsigned long max_nap_ms;	/* longest nap; 0: unbounded */
	bool systemd_timers;		/* wake for the next systemd timer */
	bool inhibitors;		/* honour logind sleep inhibitors */
	bool sync_fs;			/* keep the PM core's sync before naps */
	const char *inhibit_dir;	/* logind's lock files */
	const char *socket_group;	/* NULL: "napd" if there is one */
	bool dry_run;
	bool stats;
	bool log;
	bool help;
	bool version;
	bool status;			/* --status: ask the daemon */
	bool check_config;		/* --check-config: parse, report, exit */
	bool restore;			/* --restore: put saved settings back */
	bool list_devices;		/* --list-devices: print the policy */
	bool check;			/* --check: preflight of the host */
	struct opt_str *strs;		/* config file strings, owned */
};

struct opt_str {
	struct opt_str *next;
	char s[];
};

/* A copy of @s owned by @o (NULL if out of memory). */
char *napd_opts_strdup(struct napd_opts *o, const char *s);

/* Free the strings a config file left in @o. */
void napd_opts_free(struct napd_opts *o);

/*
 * Fill @o from argv alone.  Returns 0 on success, -1 on a bad command
 * line with a one-line reason in @err.  --help, --version and --status
 * succeed without the otherwise mandatory --port and --wake-dev.
 */
int napd_parse_opts(struct napd_opts *o, int argc, char *const argv[],
		    char *err, size_t errlen);

/*
 * Apply config file text @text (named @file in messages) on top of @o.
 * "key = value" lines, keys are the long option names; flags take
 * yes/no.  Strings are copied.  Every bad line is reported, not just the
 * first: returns the number of errors (0: clean), with one
 * "file:line: reason" per line in @err (and "... N more errors" if they
 * do not all fit).  A key that takes one value may be given once.
 */
int napd_parse_config(struct napd_opts *o, const char *file,
		      const char *text, char *err, size_t errlen);

/*
 * Everything napd runs with: the config file (--config, or
 * /etc/napd.conf if it exists), then argv on top: an option given on the
 * command line replaces the file's value (a list option the whole list).
 * On bad input a message in @err and -1 for the command line, or -2 for
 * the config file, with every error of the file, one per line, as
 * napd_parse_config() gives them.
 */
int napd_load_opts(struct napd_opts *o, int argc, char *const argv[],
		   char *err, size_t errlen);

const char *napd_mode_name(enum napd_mode mode);

/*
 * A duration: digits with ms, s, min or h after them, or digits alone
 * for seconds ("500ms", "5s", "5", "2min").  At most @max_ms.  0 or -1.
 */
int napd_parse_duration_ms(const char *s, unsigned long max_ms,
			   unsigned long *ms);

/* The wake devices as "eth0,eth1" in @buf (cut short if need be). */
const char *napd_wake_devs_str(const struct napd_opts *o, char *buf,
			       size_t size);

extern const char napd_usage[];

#endif /* NAPD_OPTS_H */
