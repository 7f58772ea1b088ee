/* SPDX-License-Identifier: GPL-2.0 */
/*
 * napd's own counters and their --log / --stats / --status output.
 */
#ifndef NAPD_STATS_H
#define NAPD_STATS_H

#include <stddef.h>
#include <stdio.h>

#include "checks.h"

#define NAPD_MAX_WAKE_IRQS	64

struct napd_stats {
	unsigned long naps;
	unsigned long aborted;		/* EBUSY/EAGAIN from /sys/power/state */
	unsigned long refused;		/* wakeup_count write refused */
	unsigned long alarm_wakes;	/* naps ended by napd's own alarm */
	long long pause_left_ms;	/* napctl pause: -1 none, -2 no end */
	unsigned long long nap_ns;
	struct {
		unsigned int irq;
		unsigned long count;
	} wake[NAPD_MAX_WAKE_IRQS];
	int nr_wake;
	long long last_wake_irq;	/* -1: none known */
	long long last_latency_ns;	/* -1: none known */
	unsigned long blocked[NR_CHECKS];	/* naps held back, by check */
	int last_blocked;		/* enum napd_check, -1: none yet */
	long long last_entry_ns;	/* CLOCK_REALTIME of the last nap, */
	long long last_exit_ns;		/* and of its wake; 0: none yet */
	char last_why[192];
};

void stats_init(struct napd_stats *st);

/* Count a wake by @irq; a full table drops new IRQs rather than fail. */
void stats_wake_irq(struct napd_stats *st, unsigned int irq);

/* {"naps":N,"aborted":N,"handshake_refused":N,"nap_ns":N,"wake_irqs":{}} */
void stats_print_json(const struct napd_stats *st, FILE *f);

/* The --log exit summary line, "summary naps=N ...", no newline. */
int stats_format_summary(const struct napd_stats *st, char *buf, size_t size);

/*
 * The --status answer, one JSON object and a newline:
 * {"pid":N,"idle_ms":N,"naps":N,"aborted":N,"handshake_refused":N,
 *  "asleep_ns":N,"alarm_wakes":N,"paused":null|{"left_ms":N|null},
 *  "last_wake_irq":N|null,"last_wake_latency_ns":N|null,
 *  "last_blocked":{"check":"cpu","why":"..."}|null,
 *  "blocked":{"connections":N,...},"wake_irqs":{"25":N}}
 * Returns the length, or -1 if it does not fit.
 */
int stats_format_status(const struct napd_stats *st, long pid,
			unsigned long idle_ms, char *buf, size_t size);

/*
 * The counters in the Prometheus text exposition format (version 0.0.4),
 * for node_exporter's textfile collector: napd_naps_total,
 * napd_asleep_seconds_total, napd_aborted_naps_total,
 * napd_skipped_naps_total{reason}, napd_wakeups_total{reason,irq},
 * napd_last_entry_seconds, napd_last_exit_seconds, each with HELP and
 * TYPE.  Returns the length, or -1 if it does not fit.
 */
int stats_format_metrics(const struct napd_stats *st, char *buf, size_t size);

#endif /* NAPD_STATS_H */
