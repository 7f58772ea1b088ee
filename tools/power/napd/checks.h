/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Is the machine idle?  The checks made once per idle window, besides the
 * per-poll connection and packet checks: CPU use and runnable tasks from
 * /proc/stat, disk I/O from /proc/diskstats, and processes by name.
 *
 * The parsers take NUL-terminated text so that the unit tests can feed
 * them canned files.
 */
#ifndef NAPD_CHECKS_H
#define NAPD_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Why a nap was held back. */
enum napd_check {
	CHECK_CONN,		/* a TCP connection on a served port */
	CHECK_PACKETS,		/* the wake device received packets */
	CHECK_UDP,		/* data queued on a served UDP port */
	CHECK_PROCESS,		/* a --process is running */
	CHECK_CPU,		/* CPU use above --cpu-max */
	CHECK_RUNNABLE,		/* more than --runnable-max runnable tasks */
	CHECK_DISK,		/* disk I/O in flight or done */
	CHECK_HANDSHAKE,	/* wakeup_count write refused */
	CHECK_INHIBITOR,	/* a logind sleep inhibitor lock is held */
	CHECK_PAUSED,		/* napctl pause */
	CHECK_BACKOFF,		/* backing off after aborted entries */
	/* a watched server has work, or a wakeup source stayed active */
	CHECK_WAKE_SOURCE,
	CHECK_LINK,		/* a wake device's link is not up */
	NR_CHECKS,
};

const char *check_name(enum napd_check c);

struct cpu_sample {
	unsigned long long busy;	/* USER_HZ ticks, all CPUs */
	unsigned long long total;
	unsigned long running;		/* procs_running, napd included */
	unsigned long long self;	/* napd's own CPU time, same ticks */
};

/* The "cpu " and "procs_running" lines of /proc/stat.  0 or -1. */
int parse_proc_stat(const char *text, struct cpu_sample *s);

/*
 * CPU use between two samples in tenths of a percent of all CPUs, napd's
 * own (@self) left out: its polls are not the machine's work, and at a
 * short idle time they would hold back every nap.
 */
unsigned int cpu_use_permille(const struct cpu_sample *from,
			      const struct cpu_sample *to);

struct disk_sample {
	unsigned long long ios;		/* completed I/Os, all devices */
	unsigned long long in_flight;
};

/* Sum /proc/diskstats.  0, or -1 if a line does not parse. */
int parse_diskstats(const char *text, struct disk_sample *s);

/*
 * Split "PID (COMM) S ..." from /proc/PID/stat: copy the command name
 * to @comm and return the state letter, or 0 if it does not parse.
 */
char parse_pid_stat(const char *text, char *comm, size_t size);

/*
 * Look through <proc_root>/[0-9]* for a live (not zombie) process other
 * than @self whose name (comm) is one of @names.  Returns 1 with its name and
 * pid in @found, 0 if none, -errno if proc_root cannot be read.
 */
int find_process(const char *proc_root, const char *const names[], int nr,
		 pid_t self, char *found, size_t size);

/*
 * Whether a /sys/class/net/DEV/operstate value (@state, a trailing
 * newline allowed) says packets can come in: "up", or "unknown" from a
 * driver that does not report its link.
 */
bool operstate_up(const char *state);

/*
 * Read <sysfs_root>/class/net/@dev/operstate into @state: 1 if it says up
 * (operstate_up()), 0 if not, -errno if it cannot be read (@state then
 * holds strerror's text).
 */
int link_state(const char *sysfs_root, const char *dev, char *state,
	       size_t size);

#endif /* NAPD_CHECKS_H */
