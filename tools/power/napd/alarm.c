// SPDX-License-Identifier: GPL-2.0
/*
 * The alarm that bounds a nap.
 *
 * A nap freezes all of user space: cron, systemd timers, monitoring
 * agents and watchdog pings wait for whatever wakes the machine next.  An
 * alarm timer armed before the nap wakes it in time.  It has to be an
 * alarm clock: hrtimers keep running during a nap, but an ordinary one
 * fires into a frozen task and the nap goes on; an alarm timer's firing
 * is a system wakeup.  CLOCK_BOOTTIME_ALARM counts time asleep too.
 */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/timerfd.h>

#include "alarm.h"

int alarm_open(void)
{
	int fd = timerfd_create(CLOCK_BOOTTIME_ALARM,
				TFD_NONBLOCK | TFD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int alarm_arm(int fd, unsigned long ms)
{
	struct itimerspec its = {
		.it_value.tv_sec = ms / 1000,
		.it_value.tv_nsec = (ms % 1000) * 1000000,
	};

	return timerfd_settime(fd, 0, &its, NULL) ? -errno : 0;
}

bool alarm_disarm(int fd)
{
	struct itimerspec its = { 0 };
	uint64_t fired = 0;
	bool ret;

	/* First: setting the timer clears the count.  EAGAIN: not fired. */
	ret = read(fd, &fired, sizeof(fired)) == sizeof(fired) && fired;
	timerfd_settime(fd, 0, &its, NULL);
	return ret;
}

unsigned long nap_bound_ms(unsigned long max_nap_ms,
			   unsigned long long timer_us,
			   unsigned long long now_us)
{
	unsigned long long due_ms;

	if (!timer_us)
		return max_nap_ms;
	due_ms = timer_us > now_us ? (timer_us - now_us + 999) / 1000 : 1;
	if (!due_ms)
		due_ms = 1;
	if (!max_nap_ms || due_ms < max_nap_ms)
		return due_ms;
	return max_nap_ms;
}

unsigned long watchdog_bound_ms(unsigned long bound_ms,
				unsigned long long watchdog_us)
{
	unsigned long long quarter_ms = watchdog_us / 4000;

	if (!watchdog_us)
		return bound_ms;
	if (!quarter_ms)
		quarter_ms = 1;
	if (!bound_ms || quarter_ms < bound_ms)
		return quarter_ms;
	return bound_ms;
}
