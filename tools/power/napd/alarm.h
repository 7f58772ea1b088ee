/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The alarm that ends a bounded nap: a CLOCK_BOOTTIME_ALARM timerfd.
 * An alarm timer coming due ends a pseudo-sleep nap (the alarmtimer
 * hook, Documentation/pseudosleep.rst) as it ends a suspend; creating
 * one needs CAP_WAKE_ALARM.
 */
#ifndef NAPD_ALARM_H
#define NAPD_ALARM_H

#include <stdbool.h>

/* The timerfd, or -errno (-EPERM without CAP_WAKE_ALARM). */
int alarm_open(void);

/* Arm @fd to fire once in @ms.  0 or -errno. */
int alarm_arm(int fd, unsigned long ms);

/* Disarm @fd; true if it fired since it was armed. */
bool alarm_disarm(int fd);

/*
 * How long the next nap may last, in ms: @max_nap_ms (0: no bound), or
 * less if the next systemd timer, at @timer_us (CLOCK_REALTIME us, 0:
 * none), is due sooner than that after @now_us.  At least 1 (a timer due
 * now); 0 for no bound at all.  Pure, for the tests.
 */
unsigned long nap_bound_ms(unsigned long max_nap_ms,
			   unsigned long long timer_us,
			   unsigned long long now_us);

/*
 * @bound_ms (0: none) shortened for a unit with WatchdogSec=: a quarter
 * of the shortest one, @watchdog_us (0: none).  A service pings every
 * half period, as sd_watchdog_enabled(3) advises; a ping due in a nap
 * comes when the nap ends, so with naps of at most a quarter period it
 * comes a quarter before the deadline.  At least 1.  Pure, for the tests.
 */
unsigned long watchdog_bound_ms(unsigned long bound_ms,
				unsigned long long watchdog_us);

#endif /* NAPD_ALARM_H */
