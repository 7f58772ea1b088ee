/* SPDX-License-Identifier: GPL-2.0 */
/*
 * napd command line options.
 *
 * Parsing is a pure function of argv so that the unit tests can feed it
 * good and bad command lines without forking.
 */
#ifndef NAPD_OPTS_H
#define NAPD_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#define NAPD_VERSION		"1.0"
#define NAPD_MAX_PORTS		64
#define NAPD_MAX_KEEP		16
#define NAPD_IDLE_MS_DEFAULT	50
#define NAPD_IDLE_MS_MAX	3600000UL

enum napd_mode {
	NAPD_MODE_PSEUDO,
	NAPD_MODE_S2IDLE,
	NAPD_MODE_DEEP,
};

struct napd_opts {
	unsigned short ports[NAPD_MAX_PORTS];
	int nr_ports;
	unsigned long idle_ms;
	const char *wake_dev;
	enum napd_mode mode;
	const char *keep_awake[NAPD_MAX_KEEP];
	int nr_keep;
	unsigned long max_naps;		/* 0: no limit */
	const char *sysfs_root;
	const char *proc_root;
	bool dry_run;
	bool stats;
	bool log;
	bool help;
	bool version;
};

/*
 * Fill @o from argv.  Returns 0 on success, -1 on a bad command line with
 * a one-line reason in @err.  --help and --version succeed without the
 * otherwise mandatory --port and --wake-dev.
 */
int napd_parse_opts(struct napd_opts *o, int argc, char *const argv[],
		    char *err, size_t errlen);

const char *napd_mode_name(enum napd_mode mode);

extern const char napd_usage[];

#endif /* NAPD_OPTS_H */
