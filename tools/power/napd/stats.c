// SPDX-License-Identifier: GPL-2.0
/*
 * napd counters.
 */
#include "stats.h"

void stats_wake_irq(struct napd_stats *st, unsigned int irq)
{
	int i;

	for (i = 0; i < st->nr_wake; i++) {
		if (st->wake[i].irq == irq) {
			st->wake[i].count++;
			return;
		}
	}
	if (st->nr_wake == NAPD_MAX_WAKE_IRQS)
		return;
	st->wake[st->nr_wake].irq = irq;
	st->wake[st->nr_wake].count = 1;
	st->nr_wake++;
}

void stats_print_json(const struct napd_stats *st, FILE *f)
{
	int i;

	fprintf(f, "{\"naps\":%lu,\"aborted\":%lu,\"handshake_refused\":%lu,"
		"\"nap_ns\":%llu,\"wake_irqs\":{", st->naps, st->aborted,
		st->refused, st->nap_ns);
	for (i = 0; i < st->nr_wake; i++)
		fprintf(f, "%s\"%u\":%lu", i ? "," : "", st->wake[i].irq,
			st->wake[i].count);
	fprintf(f, "}}\n");
}

void stats_print_summary(const struct napd_stats *st, FILE *f)
{
	fprintf(f, "napd: summary naps=%lu aborted=%lu handshake_refused=%lu nap_ns=%llu\n",
		st->naps, st->aborted, st->refused, st->nap_ns);
}
