/* SPDX-License-Identifier: GPL-2.0 */
/*
 * napd --check: does this host suit naps?  It reads the host (kernel
 * support, the NICs and the IRQs napd would arm, the devices a nap keeps
 * and suspends, their runtime PM and ASPM, the idle states, busy
 * interrupts, watchdogs) and prints one verdict per line.  It changes
 * nothing, and it runs on any kernel: one without pseudo-sleep is the
 * common case before the patched kernel is installed.
 */
#ifndef NAPD_PREFLIGHT_H
#define NAPD_PREFLIGHT_H

#include <stdio.h>

#include "opts.h"

/* How long /proc/interrupts is sampled for busy interrupts. */
#define PREFLIGHT_SAMPLE_MS	1000

/* Above this many interrupts per second an IRQ is busy. */
#define PREFLIGHT_BUSY_IRQ	100	/* any IRQ: the CPUs wake that often */
#define PREFLIGHT_BUSY_ARMED	10	/* an armed one: every one ends a nap */

enum preflight_verdict {
	PF_OK,
	PF_WARN,
	PF_FAIL,
	PF_NA,
	PF_NR
};

/*
 * A systemd time span as in WatchdogSec= ("3min", "20s", "500ms", "1min
 * 30s", or seconds alone) into @ms.  0 for "0", "infinity" or an empty
 * value (no watchdog).  0, or -1 if it does not parse.
 */
int preflight_timespan_ms(const char *s, unsigned long long *ms);

/*
 * Run every check of @o's host (its sysfs and proc roots, the wake
 * devices and device policy of its configuration) and print a line per
 * verdict to @out.  Returns the exit status: 0 when everything is ok, 1
 * with warnings only, 2 when something fails or pseudo-sleep is not
 * supported.
 */
int preflight_run(const struct napd_opts *o, FILE *out);

#endif /* NAPD_PREFLIGHT_H */
