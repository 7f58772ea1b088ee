// SPDX-License-Identifier: GPL-2.0
/*
 * The bounded read of wakeup_count: a one-shot POSIX timer sends SIGALRM
 * to napd.  The timer and the handler are set up at the first read.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "sysfs.h"
#include "wcount.h"

static timer_t timer;
static bool have_timer;

/* Only there to interrupt the read: whether the timer fired is asked of it. */
static void on_alarm(int sig)
{
	(void)sig;
}

static int wcount_setup(void)
{
	struct sigevent sev = {
		.sigev_notify = SIGEV_SIGNAL,
		.sigev_signo = SIGALRM,
	};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: the read must return EINTR */
	if (sigaction(SIGALRM, &sa, NULL) ||
	    timer_create(CLOCK_MONOTONIC, &sev, &timer))
		return -errno;
	have_timer = true;
	return 0;
}

static int set_timer(unsigned long ms)
{
	struct itimerspec its = {
		.it_value.tv_sec = ms / 1000,
		.it_value.tv_nsec = (ms % 1000) * 1000000,
	};

	return timer_settime(timer, 0, &its, NULL) ? -errno : 0;
}

/* A one-shot timer that has run out reads back as disarmed: it fired. */
static bool timer_ran_out(void)
{
	struct itimerspec left;

	return !timer_gettime(timer, &left) && !left.it_value.tv_sec &&
	       !left.it_value.tv_nsec;
}

int wcount_read(const char *path, char *buf, size_t size, unsigned long ms)
{
	bool out;
	int ret;

	if (!have_timer) {
		ret = wcount_setup();
		if (ret)
			return ret;
	}
	ret = set_timer(ms);
	if (ret)
		return ret;
	ret = sysfs_read(path, buf, size);
	out = ret == -EINTR && timer_ran_out();
	set_timer(0);	/* disarm; a late SIGALRM interrupts nothing */
	return out ? -ETIMEDOUT : ret;
}
