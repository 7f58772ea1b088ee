/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What each device's system-sleep callbacks cost in a nap, from the PM
 * core's own trace events (power:device_pm_callback_start and _end, with
 * power:suspend_resume marking the phases) in a trace instance of napd's
 * own, tracing/instances/napd.
 *
 * Trace events rather than /sys/power/pm_print_times: the events go to a
 * private ring buffer, while pm_print_times writes two lines per callback
 * to the kernel log at every nap (hundreds per nap on a server), which
 * the journal would keep; and the events carry timestamps of their own.
 */
#ifndef NAPD_DEVTIMING_H
#define NAPD_DEVTIMING_H

#include <stdbool.h>
#include <stddef.h>

#define DEVTIMING_INSTANCE	"napd"

struct devcost {
	char name[64];		/* dev_name() as the event gives it */
	double suspend_ms;	/* callbacks of the suspend phases */
	double resume_ms;	/* and of the resume phases */
	/* Events that ran a PM callback, not only the PM core's walk. */
	int callbacks;
};

struct devcosts {
	struct devcost *c;
	int nr, cap;
	int naps;		/* naps (dpm_prepare) seen in the buffer */
};

/*
 * Create the trace instance under @sysfs_root's tracefs and turn its
 * events on (an instance left by a killed napd is reused).  0, or -1
 * with the reason in @err: no tracefs, not writable, no such events.
 */
int devtiming_start(const char *sysfs_root, char *err, size_t errlen);

/* Remove the instance, if there is one.  0 or -errno. */
int devtiming_stop(const char *sysfs_root);

/*
 * Parse trace text @text: per device, the callbacks' time in the last
 * nap it holds.  0, or -1 if out of memory.  devcosts_free() after.
 */
int devtiming_parse(const char *text, struct devcosts *out);

/*
 * The instance's costs of the last nap: 0, or -errno (-ENOENT: no
 * instance, napd does not run).
 */
int devtiming_read(const char *sysfs_root, struct devcosts *out);

const struct devcost *devcost_find(const struct devcosts *c,
				   const char *name);

void devcosts_free(struct devcosts *c);

#endif /* NAPD_DEVTIMING_H */
