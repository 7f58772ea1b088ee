/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Back-off after aborted nap entries.  An entry that fails again and
 * again (a task stuck in D state on NFS or 9p makes every freeze fail
 * with EBUSY, after up to /sys/power/pm_freeze_timeout of trying) must
 * not be retried after every quiet time: after BACKOFF_AFTER aborted
 * entries in a row napd holds naps off for BACKOFF_MIN_MS, twice that
 * after the next one, and so on up to BACKOFF_MAX_MS.  A nap that works
 * ends the back-off.
 *
 * Before that, each aborted entry doubles the quiet time napd waits for
 * (up to ADAPT_MAX_MS, never below idle-ms), and each nap that works
 * halves it again: under requests a few milliseconds apart a short
 * idle-ms would otherwise start a nap in every gap for the next request
 * to abort, while between sparse requests it keeps naps coming soon.
 * Pure, with the clock passed in, for the tests.
 */
#ifndef NAPD_BACKOFF_H
#define NAPD_BACKOFF_H

#include <stdbool.h>

#define BACKOFF_AFTER	3		/* aborted entries in a row */
#define BACKOFF_MIN_MS	1000UL
#define BACKOFF_MAX_MS	64000UL
#define ADAPT_MAX_MS	64UL		/* the longest quiet time it sets */
#define ADAPT_SHIFT_MAX	6

struct backoff {
	unsigned long aborted;		/* aborted entries in a row */
	unsigned long delay_ms;		/* the current hold-off, 0: none */
	unsigned long long until_ns;	/* held off until (monotonic) */
	unsigned int shift;		/* quiet time: idle-ms << shift */
};

/*
 * An aborted entry at @now_ns.  True when it starts a back-off (the
 * first hold-off since naps last worked): the caller logs that, once.
 */
bool backoff_aborted(struct backoff *b, unsigned long long now_ns);

/*
 * A nap that worked.  Returns the aborted entries in a row it ends if
 * they had started a back-off (for the log), else 0.
 */
unsigned long backoff_nap_ok(struct backoff *b);

/*
 * The quiet time to wait for before a nap: @idle_ms doubled for each
 * step of b->shift, but not above ADAPT_MAX_MS (nor below @idle_ms).
 */
unsigned long backoff_quiet_ms(const struct backoff *b,
			       unsigned long idle_ms);

/* How long naps are still held off at @now_ns, in ms; 0 if not. */
unsigned long backoff_left_ms(const struct backoff *b,
			      unsigned long long now_ns);

#endif /* NAPD_BACKOFF_H */
