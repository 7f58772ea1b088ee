/* SPDX-License-Identifier: GPL-2.0 */
/*
 * napd's own counters and their --log / --stats output.
 */
#ifndef NAPD_STATS_H
#define NAPD_STATS_H

#include <stdio.h>

#define NAPD_MAX_WAKE_IRQS	64

struct napd_stats {
	unsigned long naps;
	unsigned long aborted;		/* EBUSY/EAGAIN from /sys/power/state */
	unsigned long refused;		/* wakeup_count write refused */
	unsigned long long nap_ns;
	struct {
		unsigned int irq;
		unsigned long count;
	} wake[NAPD_MAX_WAKE_IRQS];
	int nr_wake;
};

/* Count a wake by @irq; a full table drops new IRQs rather than fail. */
void stats_wake_irq(struct napd_stats *st, unsigned int irq);

/* {"naps":N,"aborted":N,"handshake_refused":N,"nap_ns":N,"wake_irqs":{}} */
void stats_print_json(const struct napd_stats *st, FILE *f);

/* The --log exit summary line. */
void stats_print_summary(const struct napd_stats *st, FILE *f);

#endif /* NAPD_STATS_H */
