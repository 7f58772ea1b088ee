/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When is the next systemd timer due?  Asked of systemctl, since napd is
 * linked statically for the initramfs and Debian ships no static
 * libsystemd for sd-bus.
 */
#ifndef NAPD_TIMERS_H
#define NAPD_TIMERS_H

#include <stdbool.h>
#include <stddef.h>

/* Was the machine booted with systemd (sd_booted())?  @run: "/run". */
bool timers_systemd_booted(const char *run);

/*
 * The earliest "next" after @now_us in `systemctl --output=json
 * list-timers` text @json (CLOCK_REALTIME microseconds; systemd gives
 * monotonic timers there in realtime too).  Timers already due, and
 * those with no next elapse (null), are left out: systemd runs a due
 * one within its AccuracySec=, and waking for it again and again would
 * keep the machine up.  0 with *@next_us = 0 if none, -1 if the text is
 * not such a list.  Pure, for the tests.
 */
int timers_parse_json(const char *json, unsigned long long now_us,
		      unsigned long long *next_us);

/*
 * Run @systemctl --output=json list-timers --all and parse its answer
 * as above, waiting at most @timeout_ms.  0, or -errno (-ETIMEDOUT, or
 * -EPROTO for an exit status or answer we do not understand).
 */
int timers_query(const char *systemctl, unsigned long long now_us,
		 int timeout_ms, unsigned long long *next_us);

/*
 * A systemd time span as systemctl show prints one ("3min", "1min 30s",
 * "1.500000s", "500ms", "0", "infinity") in microseconds; infinity is
 * 0, no limit.  0 or -1 if it does not parse.  Pure, for the tests.
 */
int timespan_parse_us(const char *s, unsigned long long *us);

/*
 * The shortest WatchdogUSec of the running units in `systemctl show
 * --property=Id,ActiveState,WatchdogUSec` text @text (records parted by
 * blank lines): *@min_us, 0 if none has a watchdog, with the unit's
 * name in @unit.  Units not active, activating or reloading are left
 * out.  0, or -1 if the text is not such a list.  Pure, for the tests.
 */
int watchdog_parse_show(const char *text, unsigned long long *min_us,
			char *unit, size_t size);

/*
 * Run @systemctl --no-pager show --property=Id,ActiveState,WatchdogUSec
 * '*.service' and parse its answer as above, within @timeout_ms.  0, or
 * -errno as timers_query().
 */
int watchdog_query(const char *systemctl, int timeout_ms,
		   unsigned long long *min_us, char *unit, size_t size);

#endif /* NAPD_TIMERS_H */
