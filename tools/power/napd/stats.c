// SPDX-License-Identifier: GPL-2.0
/*
 * napd counters.
 */
#include <stdarg.h>
#include <string.h>

#include "compiler.h"
#include "stats.h"

void stats_init(struct napd_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->last_wake_irq = -1;
	st->last_latency_ns = -1;
	st->last_blocked = -1;
	st->pause_left_ms = -1;
}

void stats_wake_irq(struct napd_stats *st, unsigned int irq)
{
	int i;

	st->last_wake_irq = irq;
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
	const char *sep;
	int i;

	fprintf(f, "{\"naps\":%lu,\"aborted\":%lu,\"handshake_refused\":%lu,",
		st->naps, st->aborted, st->refused);
	fprintf(f, "\"nap_ns\":%llu,\"wake_irqs\":{", st->nap_ns);
	for (i = 0; i < st->nr_wake; i++)
		fprintf(f, "%s\"%u\":%lu", i ? "," : "", st->wake[i].irq,
			st->wake[i].count);
	/* Where attempts were held back: the checks that did, no others. */
	fprintf(f, "},\"held_back\":{");
	for (i = 0, sep = ""; i < NR_CHECKS; i++) {
		if (!st->blocked[i])
			continue;
		fprintf(f, "%s\"%s\":%lu", sep, check_name(i), st->blocked[i]);
		sep = ",";
	}
	fprintf(f, "}}\n");
}

int stats_format_summary(const struct napd_stats *st, char *buf, size_t size)
{
	return snprintf(buf, size,
			"summary naps=%lu aborted=%lu handshake_refused=%lu nap_ns=%llu",
			st->naps, st->aborted, st->refused, st->nap_ns);
}

struct sbuf {
	char *buf;
	size_t size, len;
	bool over;
};

static void put(struct sbuf *b, const char *fmt, ...)
	__printf(2, 3);

static void put(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->over)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->len, b->size - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->size - b->len)
		b->over = true;
	else
		b->len += n;
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void put_str(struct sbuf *b, const char *s)
{
	put(b, "\"");
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			put(b, "\\%c", c);
		else if (c < 0x20)
			put(b, "\\u%04x", c);
		else
			put(b, "%c", c);
	}
	put(b, "\"");
}

static void put_opt(struct sbuf *b, long long v)
{
	if (v < 0)
		put(b, "null");
	else
		put(b, "%lld", v);
}

int stats_format_status(const struct napd_stats *st, long pid,
			unsigned long idle_ms, char *buf, size_t size)
{
	struct sbuf b = { .buf = buf, .size = size };
	int i;

	if (!size)
		return -1;
	put(&b, "{\"pid\":%ld,\"idle_ms\":%lu,\"naps\":%lu,\"aborted\":%lu,",
	    pid, idle_ms, st->naps, st->aborted);
	put(&b, "\"handshake_refused\":%lu,\"asleep_ns\":%llu,",
	    st->refused, st->nap_ns);
	put(&b, "\"alarm_wakes\":%lu,\"paused\":", st->alarm_wakes);
	if (st->pause_left_ms == -1)
		put(&b, "null");
	else if (st->pause_left_ms < 0)
		put(&b, "{\"left_ms\":null}");
	else
		put(&b, "{\"left_ms\":%lld}", st->pause_left_ms);
	put(&b, ",\"last_wake_irq\":");
	put_opt(&b, st->last_wake_irq);
	put(&b, ",\"last_wake_latency_ns\":");
	put_opt(&b, st->last_latency_ns);
	put(&b, ",\"last_blocked\":");
	if (st->last_blocked < 0) {
		put(&b, "null");
	} else {
		put(&b, "{\"check\":");
		put_str(&b, check_name(st->last_blocked));
		put(&b, ",\"why\":");
		put_str(&b, st->last_why);
		put(&b, "}");
	}
	put(&b, ",\"blocked\":{");
	for (i = 0; i < NR_CHECKS; i++)
		put(&b, "%s\"%s\":%lu", i ? "," : "", check_name(i),
		    st->blocked[i]);
	put(&b, "},\"wake_irqs\":{");
	for (i = 0; i < st->nr_wake; i++)
		put(&b, "%s\"%u\":%lu", i ? "," : "", st->wake[i].irq,
		    st->wake[i].count);
	put(&b, "}}\n");
	return b.over ? -1 : (int)b.len;
}

static void put_family(struct sbuf *b, const char *name, const char *type,
		       const char *help)
{
	put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int stats_format_metrics(const struct napd_stats *st, char *buf, size_t size)
{
	struct sbuf b = { .buf = buf, .size = size };
	unsigned long known = 0;
	int i;

	if (!size)
		return -1;
	put_family(&b, "napd_naps_total", "counter",
		   "Naps taken: entered and woken from.");
	put(&b, "napd_naps_total %lu\n", st->naps);
	put_family(&b, "napd_asleep_seconds_total", "counter",
		   "Time spent in naps.");
	put(&b, "napd_asleep_seconds_total %llu.%09llu\n",
	    st->nap_ns / 1000000000ULL, st->nap_ns % 1000000000ULL);
	put_family(&b, "napd_aborted_naps_total", "counter",
		   "Naps aborted by a wakeup event while being entered.");
	put(&b, "napd_aborted_naps_total %lu\n", st->aborted);
	put_family(&b, "napd_skipped_naps_total", "counter",
		   "Naps held back, by the check that held them back.");
	for (i = 0; i < NR_CHECKS; i++)
		put(&b, "napd_skipped_naps_total{reason=\"%s\"} %lu\n",
		    check_name(i), st->blocked[i]);
	put_family(&b, "napd_wakeups_total", "counter",
		   "Wakes from naps, by the IRQ that woke the machine (reason irq), napd's max-nap or systemd timer alarm (alarm), or unknown.");
	for (i = 0; i < st->nr_wake; i++) {
		put(&b, "napd_wakeups_total{reason=\"irq\",irq=\"%u\"} %lu\n",
		    st->wake[i].irq, st->wake[i].count);
		known += st->wake[i].count;
	}
	put(&b, "napd_wakeups_total{reason=\"alarm\",irq=\"\"} %lu\n",
	    st->alarm_wakes);
	known += st->alarm_wakes;
	put(&b, "napd_wakeups_total{reason=\"unknown\",irq=\"\"} %lu\n",
	    st->naps > known ? st->naps - known : 0);
	put_family(&b, "napd_last_entry_seconds", "gauge",
		   "Unix time the last nap began (0: none yet).");
	put(&b, "napd_last_entry_seconds %lld.%03lld\n",
	    st->last_entry_ns / 1000000000LL,
	    st->last_entry_ns % 1000000000LL / 1000000);
	put_family(&b, "napd_last_exit_seconds", "gauge",
		   "Unix time the last nap ended (0: none yet).");
	put(&b, "napd_last_exit_seconds %lld.%03lld\n",
	    st->last_exit_ns / 1000000000LL,
	    st->last_exit_ns % 1000000000LL / 1000000);
	return b.over ? -1 : (int)b.len;
}
