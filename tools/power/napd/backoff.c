// SPDX-License-Identifier: GPL-2.0
/*
 * Back-off after aborted nap entries: see backoff.h.
 */
#include "backoff.h"

bool backoff_aborted(struct backoff *b, unsigned long long now_ns)
{
	bool first;

	b->aborted++;
	if (b->shift < ADAPT_SHIFT_MAX)
		b->shift++;
	if (b->aborted < BACKOFF_AFTER)
		return false;
	first = !b->delay_ms;
	if (first)
		b->delay_ms = BACKOFF_MIN_MS;
	else if (b->delay_ms < BACKOFF_MAX_MS / 2)
		b->delay_ms *= 2;
	else
		b->delay_ms = BACKOFF_MAX_MS;
	b->until_ns = now_ns + b->delay_ms * 1000000ULL;
	return first;
}

unsigned long backoff_nap_ok(struct backoff *b)
{
	unsigned long ended = b->delay_ms ? b->aborted : 0;

	b->aborted = 0;
	b->delay_ms = 0;
	b->until_ns = 0;
	if (b->shift)
		b->shift--;
	return ended;
}

unsigned long backoff_quiet_ms(const struct backoff *b,
			       unsigned long idle_ms)
{
	unsigned long ms;

	if (idle_ms >= ADAPT_MAX_MS || !b->shift)
		return idle_ms;
	ms = idle_ms << b->shift;
	return ms < ADAPT_MAX_MS ? ms : ADAPT_MAX_MS;
}

unsigned long backoff_left_ms(const struct backoff *b,
			      unsigned long long now_ns)
{
	if (!b->delay_ms || now_ns >= b->until_ns)
		return 0;
	/* rounded up: 1 ns left is still held off */
	return (b->until_ns - now_ns + 999999) / 1000000;
}
