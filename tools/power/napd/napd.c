// SPDX-License-Identifier: GPL-2.0
/*
 * napd - nap the machine between requests with pseudo-sleep.
 *
 * The loop is the upstream wakeup_count handshake around a cheap poll for
 * quiet: arm the wake IRQs' report (pseudosleep/arm), read wakeup_count,
 * make sure nothing is in flight, write the count back (refused if a
 * wakeup event slipped in), then write "mem".
 * A request that arrives at any point either shows up in our checks or is
 * a wakeup event that makes the kernel refuse or abort the nap, so none
 * is slept through.
 *
 * Before a nap the machine must also be idle: CPU use over the idle
 * window, runnable tasks, disk I/O and listed processes are checked once
 * per window (cheap: two reads of /proc/stat per window), connections and
 * packets at every poll.
 *
 * Settings are restored in the main flow on every exit; the signal
 * handlers only set a flag.  They are installed without SA_RESTART so that
 * a blocked read or write returns EINTR and the loop notices.  SIGHUP
 * reloads the config file.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/times.h>

#include "alarm.h"
#include "backoff.h"
#include "compiler.h"
#include "devpolicy.h"
#include "devtiming.h"
#include "checks.h"
#include "ctl.h"
#include "diag.h"
#include "inhibit.h"
#include "notify.h"
#include "preflight.h"
#include "opts.h"
#include "procnet.h"
#include "setup.h"
#include "stats.h"
#include "sysfs.h"
#include "timers.h"
#include "watch.h"
#include "wcount.h"

/*
 * Set by on_signal(): lock-free atomics, which C11 lets a signal handler
 * write as it does a volatile sig_atomic_t.
 */
static atomic_int stop, reload;
static_assert(ATOMIC_INT_LOCK_FREE == 2, "signal flags must be lock-free");

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload = 1;
	else
		stop = 1;
}

/* Samples of /proc/stat kept for a CPU window longer than the quiet time. */
#define CPU_HIST	32

struct napd {
	struct napd_opts *o;
	int argc;
	char *const *argv;
	int ctl_fd;
	char stat_path[PATH_MAX], diskstats_path[PATH_MAX];
	char udp[2][PATH_MAX];
	char net_dev[PATH_MAX];		/* /proc/net/dev */
	bool have_net_dev;
	bool conn_clean;		/* last dump: nothing busy ... */
	unsigned long long conn_clean_rx;	/* ... with this all_rx() */
	bool have_diskstats;
	bool link_held;			/* naps held back: no link up */
	bool sampled;			/* cpu0/disk0 taken for this window */
	struct cpu_sample cpu0;
	struct cpu_sample cpu_hist[CPU_HIST];	/* the latest samples ... */
	unsigned long long cpu_hist_at[CPU_HIST];	/* ... taken then */
	unsigned int cpu_hist_next;
	struct disk_sample disk0;
	int busy_check;			/* per-poll check seen busy, or -1 */
	unsigned int busy_polls;	/* polls held back since the last try */
	bool napped;			/* since the last nap held back */
	char why[192];
	struct napd_setup setup;
	struct napd_stats stats;
	struct diag diag;
	bool use_diag;
	int conn_idle;			/* last dump: idle kept-alive ones */
	char tcp[2][PATH_MAX];		/* /proc/net/tcp and tcp6 */
	int rx_fds[NAPD_MAX_WAKE_DEVS];	/* as setup.rx_packets */
	int rx6_fd;			/* wake_task: /proc/net/snmp6 */
	unsigned long long last_rx;
	unsigned long long quiet_since;	/* CLOCK_MONOTONIC ns */
	unsigned long long metrics_at;	/* CLOCK_MONOTONIC ns, last write */
	bool metrics_failing;		/* logged; quiet until it works */
	int alarm_fd;			/* ends a bounded nap; -1: none */
	bool timers_on;			/* asking systemd for its timers */
	bool timers_failing;		/* logged; quiet until it works */
	unsigned long long timer_us;	/* next systemd timer, realtime */
	unsigned long long timers_at;	/* CLOCK_MONOTONIC ns, last asked */
	unsigned long long watchdog_us;	/* shortest WatchdogSec=, 0: none */
	unsigned long long watchdog_at;	/* CLOCK_MONOTONIC ns, last asked */
	bool watchdog_failing;		/* logged; quiet until it works */
	bool paused;			/* napctl pause ... */
	unsigned long long pause_until;	/* ... until CLOCK_MONOTONIC ns; 0: resume */
	bool inhibit_failing;		/* logged; quiet until it works */
	struct backoff backoff;		/* after aborted entries in a row */
	struct watch watch;		/* wake_task: the servers' fds */
	int watch_err;			/* last logged watch_add() trouble */
};

/* The longest napctl pause with an end. */
#define PAUSE_MS_MAX	(30 * 86400000UL)

/* Ask systemd again at most this often, and at least this often. */
#define TIMERS_MIN_NS	1000000000ULL
#define TIMERS_MAX_NS	60000000000ULL
#define TIMERS_TIMEOUT_MS	5000

static unsigned long long now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * --log lines go to stderr (the journal under systemd, at priority
 * @prio).
 */
static void logmsg(const struct napd *n, int prio, const char *fmt, ...)
	__printf(3, 4);

static void logmsg(const struct napd *n, int prio, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!n->o->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	napd_log(prio, "%s", line);
}

/* Each line of @msg on stderr at @prio, with "napd: " if @named. */
static void print_lines(int prio, bool named, const char *msg)
{
	while (*msg) {
		size_t len = strcspn(msg, "\n");

		fprintf(stderr, "%s%.*s\n",
			named ? log_prefix(prio) : log_prio(prio), (int)len,
			msg);
		msg += len + (msg[len] == '\n');
	}
}

/* Up to @size - 1 bytes of @fd from offset 0, NUL-terminated; -errno. */
static int pread_text(int fd, char *buf, size_t size)
{
	/* pread at 0 makes sysfs and procfs produce fresh values. */
	ssize_t len = pread(fd, buf, size - 1, 0);

	if (len < 0)
		return -errno;
	buf[len] = '\0';
	return 0;
}

/* Wake on task: add the IPv6 UDP datagrams, if the kernel has IPv6. */
static int read_rx6(struct napd *n, unsigned long long *rx)
{
	unsigned long long dgrams;
	char buf[8192];

	if (n->rx6_fd < 0)
		return 0;
	if (pread_text(n->rx6_fd, buf, sizeof(buf)) ||
	    procnet_snmp6_in(buf, &dgrams))
		return -EINVAL;
	*rx += dgrams;
	return 0;
}

/*
 * Wake device @i's receive counter.  Unbinding its driver (a vector
 * reallocation, an AER reset) removes the file under the open fd: open it
 * again by name, and while the device is gone say so with -ENODEV.
 */
static int read_counter(struct napd *n, int i, unsigned long long *v)
{
	char buf[32], *end;
	int tries;

	for (tries = 0; tries < 2; tries++) {
		if (n->rx_fds[i] >= 0 &&
		    !pread_text(n->rx_fds[i], buf, sizeof(buf))) {
			*v = strtoull(buf, &end, 10);
			if (end != buf)
				return 0;
		}
		if (n->rx_fds[i] >= 0)
			close(n->rx_fds[i]);
		n->rx_fds[i] = open(n->setup.rx_packets[i],
				    O_RDONLY | O_CLOEXEC);
		if (n->rx_fds[i] < 0)
			break;
	}
	return -ENODEV;
}

static int read_rx(struct napd *n, unsigned long long *rx)
{
	char buf[8192];
	unsigned long long v;
	int ret, i;

	if (n->setup.rx_snmp) {
		ret = pread_text(n->rx_fds[0], buf, sizeof(buf));
		if (ret)
			return ret;
		return procnet_snmp_in(buf, rx) || read_rx6(n, rx) ? -EINVAL : 0;
	}
	/* The sum over the wake devices: any change is traffic. */
	*rx = 0;
	for (i = 0; i < n->setup.nr_rx; i++) {
		ret = read_counter(n, i, &v);
		if (ret)
			return ret;
		*rx += v;
	}
	return 0;
}

/*
 * Sum a parser over /proc/net/{tcp,tcp6} or {udp,udp6}: a missing v6
 * file (no IPv6) counts as nothing listening there.
 */
static int procfs_count(char paths[2][PATH_MAX],
			int (*parse)(const char *, const unsigned short *, int),
			const unsigned short *ports, int nr)
{
	int i, busy = 0;

	for (i = 0; i < 2; i++) {
		char *text = read_whole(paths[i]);
		int ret;

		if (!text) {
			if (i == 1 && errno == ENOENT)
				continue;
			return -errno;
		}
		ret = parse(text, ports, nr);
		free(text);
		if (ret < 0) {
			napd_log(LOG_ERR, "cannot parse %s", paths[i]);
			return -EINVAL;
		}
		busy += ret;
	}
	return busy;
}

/*
 * Packets received on all interfaces (lo too), or false if unknown.  A
 * new connection or datagram needs packets: while this total stands
 * still, a dump that found nothing busy still holds.
 */
static bool all_rx(struct napd *n, unsigned long long *rx)
{
	char *text;
	int ret;

	if (!n->have_net_dev)
		return false;
	text = read_whole(n->net_dev);
	if (!text)
		return false;
	ret = procnet_dev_rx(text, rx);
	free(text);
	return !ret;
}

/*
 * Connections on the served ports: >0 busy, 0 none, -errno.  Through
 * sock_diag a kept-alive connection quiet for idle-ms is idle (counted in
 * n->conn_idle); /proc/net/tcp has no last-data times, so there every
 * open connection is busy.
 */
static int conn_busy(struct napd *n)
{
	n->conn_idle = 0;
	if (n->use_diag) {
		struct conn_count c;
		int ret = diag_tcp_count(&n->diag, n->o->ports,
					 n->o->nr_ports, n->o->idle_ms, &c);

		if (!ret) {
			n->conn_idle = c.idle;
			return c.busy;
		}
		napd_log(LOG_WARNING, "sock_diag failed (%s), reading %s",
			 strerror(-ret), n->tcp[0]);
		diag_close(&n->diag);
		n->use_diag = false;
	}
	return procfs_count(n->tcp, procnet_tcp_busy, n->o->ports,
			    n->o->nr_ports);
}

/*
 * Received packets, the per-poll check, and with @full the connections
 * and UDP queues.  Those are for the end of the quiet time only: a
 * sock_diag dump walks the whole TCP hash table (~0.3 ms with 256k
 * buckets), and a new connection or datagram from the network is a
 * received packet anyway.  Busy: the check's number, with the reason in
 * n->why.  Quiet: -1.  Error: -1000 - errno.
 */
#define CHECK_ERR(e)	(-1000 + (e))
#define CHECK_WAIT	(-2)	/* not enough measured yet */
#define CPU_MIN_TICKS	5
#define CPU_WINDOW_MAX_NS	100000000ULL

static int activity(struct napd *n, bool full)
{
	const struct napd_opts *o = n->o;
	unsigned long long rx;
	bool have_rx;
	int ret;

	ret = read_rx(n, &rx);
	if (ret == -ENODEV) {
		/* Its driver rebinding: wait for it, and re-arm then. */
		snprintf(n->why, sizeof(n->why), "a wake device is gone");
		return CHECK_PACKETS;
	}
	if (ret)
		return CHECK_ERR(ret);
	if (rx != n->last_rx) {
		snprintf(n->why, sizeof(n->why), "%lld %s received",
			 (long long)(rx - n->last_rx),
			 n->setup.rx_snmp ? "segments/datagrams" : "packets");
		n->last_rx = rx;
		return CHECK_PACKETS;
	}
	if (!full)
		return -1;
	have_rx = all_rx(n, &rx);
	if (have_rx && n->conn_clean && rx == n->conn_clean_rx)
		return -1;	/* nothing came in since all was clear */
	ret = conn_busy(n);
	if (ret < 0)
		return CHECK_ERR(ret);
	if (ret) {
		n->conn_clean = false;
		if (n->use_diag)
			snprintf(n->why, sizeof(n->why),
				 "%d connection%s busy, %d idle", ret,
				 ret == 1 ? "" : "s", n->conn_idle);
		else
			snprintf(n->why, sizeof(n->why), "%d connection%s open",
				 ret, ret == 1 ? "" : "s");
		return CHECK_CONN;
	}
	if (o->nr_udp_ports) {
		ret = procfs_count(n->udp, procnet_udp_busy, o->udp_ports,
				   o->nr_udp_ports);
		if (ret < 0)
			return CHECK_ERR(ret);
		if (ret) {
			n->conn_clean = false;
			snprintf(n->why, sizeof(n->why),
				 "%d UDP socket%s with queued data", ret,
				 ret == 1 ? "" : "s");
			return CHECK_UDP;
		}
	}
	/*
	 * An idle connection may start sending with no packet in first (a
	 * server push): only a dump with no connection at all stands for
	 * the next ones.
	 */
	n->conn_clean = have_rx && !n->conn_idle;
	n->conn_clean_rx = rx;
	return -1;
}

/* napd's own CPU time in USER_HZ ticks, as /proc/stat counts. */
static unsigned long long napd_ticks(void)
{
	struct tms t;

	if (times(&t) == (clock_t)-1)
		return 0;
	return (unsigned long long)t.tms_utime + t.tms_stime;
}

/*
 * The start of the CPU window ending at @cpu: the quiet time's own
 * sample if at least CPU_MIN_TICKS went by since, else the latest
 * earlier sample that far back (@at: when it was taken), else NULL.  At
 * a short idle time the window reaches back before the quiet time: CPU
 * use "over the last few ticks" rather than a guess from one tick.
 */
static const struct cpu_sample *cpu_base(const struct napd *n,
					 const struct cpu_sample *cpu,
					 unsigned long long *at)
{
	const struct cpu_sample *best = NULL;
	unsigned int i;

	*at = n->quiet_since;
	if (cpu->total - n->cpu0.total >= CPU_MIN_TICKS)
		return &n->cpu0;
	for (i = 0; i < CPU_HIST; i++) {
		const struct cpu_sample *h = &n->cpu_hist[i];

		if (!h->total || h->total > cpu->total ||
		    cpu->total - h->total < CPU_MIN_TICKS)
			continue;
		if (!best || h->total > best->total) {
			best = h;
			*at = n->cpu_hist_at[i];
		}
	}
	return best;
}

static int sample(struct napd *n, struct cpu_sample *cpu,
		  struct disk_sample *disk)
{
	char *text = read_whole(n->stat_path);
	int ret;

	if (!text)
		return -errno;
	ret = parse_proc_stat(text, cpu);
	free(text);
	if (ret) {
		napd_log(LOG_ERR, "cannot parse %s", n->stat_path);
		return -EINVAL;
	}
	cpu->self = napd_ticks();
	n->cpu_hist[n->cpu_hist_next] = *cpu;
	n->cpu_hist_at[n->cpu_hist_next] = now_ns(CLOCK_MONOTONIC);
	n->cpu_hist_next = (n->cpu_hist_next + 1) % CPU_HIST;
	memset(disk, 0, sizeof(*disk));
	if (!n->have_diskstats || !n->o->disk_check)
		return 0;
	text = read_whole(n->diskstats_path);
	if (!text)
		return -errno;
	ret = parse_diskstats(text, disk);
	free(text);
	if (ret) {
		napd_log(LOG_ERR, "cannot parse %s", n->diskstats_path);
		return -EINVAL;
	}
	return 0;
}

/* napctl pause in force?  The reason goes to n->why. */
static bool pause_in_force(struct napd *n)
{
	unsigned long long now = now_ns(CLOCK_MONOTONIC);

	if (n->paused && n->pause_until && now >= n->pause_until) {
		n->paused = false;
		napd_log(LOG_INFO, "pause over, napping again");
	}
	if (!n->paused)
		return false;
	if (n->pause_until)
		snprintf(n->why, sizeof(n->why),
			 "paused by napctl for %.1f s more",
			 (n->pause_until - now) / 1e9);
	else
		snprintf(n->why, sizeof(n->why),
			 "paused by napctl until napctl resume");
	return true;
}

/* Holding naps off after aborted entries?  The reason goes to n->why. */
static bool backing_off(struct napd *n)
{
	unsigned long left = backoff_left_ms(&n->backoff,
					     now_ns(CLOCK_MONOTONIC));

	if (!left)
		return false;
	snprintf(n->why, sizeof(n->why),
		 "backing off after %lu aborted entries in a row, %.1f s more",
		 n->backoff.aborted, left / 1e3);
	return true;
}

/*
 * No wake device's link up (no carrier yet at boot, a cable pulled, a
 * bond with no active slave, a VLAN whose NIC is down)?  No request can
 * come to end a nap.  At boot, where network-online.target does not wait
 * for the link, napd starts before an e1000e has finished negotiating it;
 * and a link that comes up during a nap gets its address from
 * systemd-networkd (or ifupdown's hooks) only once the nap is over, since
 * they are frozen.  With several wake devices one with its link up is
 * enough.  A device whose operstate cannot be read (gone) is not up.
 * Going into and out of this state is logged, since it can last.
 */
static bool link_down(struct napd *n)
{
	const struct napd_opts *o = n->o;
	char state[64];
	int i, ret;

	if (!o->nr_wake_devs)
		return false;
	for (i = 0; i < o->nr_wake_devs; i++) {
		ret = link_state(o->sysfs_root, o->wake_devs[i], state,
				 sizeof(state));
		if (ret > 0) {
			if (n->link_held)
				napd_log(LOG_NOTICE, "%s: link up, napping again",
					 o->wake_devs[i]);
			n->link_held = false;
			return false;
		}
		if (!i)
			snprintf(n->why, sizeof(n->why), "%s: %s%s",
				 o->wake_devs[0],
				 ret < 0 ? "no operstate: " : "operstate ", state);
	}
	if (!n->link_held)
		napd_log(LOG_NOTICE, "no nap until a wake device's link is up (%s%s)",
			 n->why, o->nr_wake_devs > 1 ? ", and the others" : "");
	n->link_held = true;
	return true;
}

/*
 * A logind sleep inhibitor held?  A directory that cannot be read is
 * logged once and counts as none: logind's own files, not ours.
 */
static bool inhibited(struct napd *n)
{
	int ret;

	if (!n->o->inhibitors)
		return false;
	ret = inhibit_sleep_held(n->o->inhibit_dir, n->why, sizeof(n->why));
	if (ret < 0 && !n->inhibit_failing)
		napd_log(LOG_WARNING, "cannot read %s: %s; logind sleep inhibitors not seen",
			 n->o->inhibit_dir, strerror(-ret));
	n->inhibit_failing = ret < 0;
	return ret > 0;
}

/*
 * The once-per-window checks, against the sample taken when the window
 * began.  Same return convention as activity(), or CHECK_WAIT; the new
 * sample becomes the start of the next window.
 */
static int idle_checks(struct napd *n)
{
	const struct napd_opts *o = n->o;
	const struct cpu_sample *base;
	unsigned long long base_at;
	struct cpu_sample cpu;
	struct disk_sample disk;
	unsigned int use;
	int ret, check = -1;

	ret = sample(n, &cpu, &disk);
	if (ret)
		return CHECK_ERR(ret);
	/*
	 * /proc/stat counts in USER_HZ ticks (10 ms): a short idle window
	 * may hold none.  Measure from an earlier sample at least a few
	 * ticks back (cpu_base()); with none yet (at start), wait for a few
	 * ticks, or CPU_WINDOW_MAX_NS; a window with no tick at all says
	 * nothing about the CPU use (napd itself may not have run for a
	 * while), so it is never idle.
	 */
	base = cpu_base(n, &cpu, &base_at);
	if (o->cpu_max < 100 && !base &&
	    (cpu.total == n->cpu0.total ||
	     now_ns(CLOCK_MONOTONIC) - n->quiet_since < CPU_WINDOW_MAX_NS))
		return CHECK_WAIT;
	use = cpu_use_permille(base ? base : &n->cpu0, &cpu);
	ret = o->nr_procs ? find_process(o->proc_root, o->procs, o->nr_procs,
					 getpid(), n->why, sizeof(n->why)) : 0;
	if (ret < 0)
		return CHECK_ERR(ret);
	if (backing_off(n)) {
		check = CHECK_BACKOFF;
	} else if (pause_in_force(n)) {
		check = CHECK_PAUSED;
	} else if (inhibited(n)) {
		check = CHECK_INHIBITOR;
	} else if (link_down(n)) {
		check = CHECK_LINK;
	} else if (ret) {
		check = CHECK_PROCESS;
	} else if (o->cpu_max < 100 && use > o->cpu_max * 10) {
		snprintf(n->why, sizeof(n->why),
			 "CPU use %u.%u%% > %lu%% over the last %llu ms",
			 use / 10, use % 10, o->cpu_max,
			 (now_ns(CLOCK_MONOTONIC) - base_at) / 1000000);
		check = CHECK_CPU;
	} else if (cpu.running > 1 + o->runnable_max) {
		/* procs_running counts napd itself: it is reading. */
		snprintf(n->why, sizeof(n->why),
			 "%lu runnable task%s besides napd > %lu",
			 cpu.running - 1, cpu.running == 2 ? "" : "s",
			 o->runnable_max);
		check = CHECK_RUNNABLE;
	} else if (o->disk_check && n->have_diskstats &&
		   (disk.in_flight || disk.ios != n->disk0.ios)) {
		snprintf(n->why, sizeof(n->why),
			 "disk I/O: %llu in flight, %llu done in the last %lu ms",
			 disk.in_flight, disk.ios - n->disk0.ios, o->idle_ms);
		check = CHECK_DISK;
	}
	n->cpu0 = cpu;
	n->disk0 = disk;
	n->sampled = true;
	return check;
}

/*
 * Count and (with --log) log a nap held back by @check.  The same reason
 * as the last one logged is not logged again until a nap: an idle
 * keep-alive connection would otherwise log every quiet time.
 */
static void held_back(struct napd *n, int check)
{
	bool repeat = n->stats.last_blocked == check &&
		      !strcmp(n->stats.last_why, n->why) && !n->napped;

	n->stats.blocked[check]++;
	n->stats.last_blocked = check;
	snprintf(n->stats.last_why, sizeof(n->stats.last_why), "%s", n->why);
	n->napped = false;
	if (!repeat)
		logmsg(n, LOG_DEBUG, "nap held back by %s: %s", check_name(check),
		       n->why);
}

/* Read /sys/power/pseudosleep/@name; false without pseudo-sleep. */
static bool pseudo_value(struct napd *n, const char *name,
			 unsigned long long *val)
{
	char path[PATH_MAX];

	if (!n->setup.have_pseudo ||
	    path_fmt(path, sizeof(path), "%s/%s", n->setup.pseudo_dir, name))
		return false;
	return !sysfs_read_ull(path, val);
}

static void after_nap(struct napd *n, unsigned long long slept_ns,
		      bool alarm)
{
	unsigned long long dur, lat, irq;
	bool have_irq, have_lat;
	int ret;
	char irq_s[24] = "none", lat_s[24] = "-", status[128];
	char path[PATH_MAX], name[64], src[80] = "";

	if (!pseudo_value(n, "last_nap_ns", &dur))
		dur = slept_ns;
	have_lat = pseudo_value(n, "wake_latency_ns", &lat);
	/*
	 * ENODATA when the kernel does not know the waking IRQ.  The file
	 * only exists with CONFIG_PM_SLEEP_DEBUG; pseudo-sleep keeps its own
	 * copy (0 for none).
	 */
	ret = sysfs_read_ull(n->setup.pm_wakeup_irq, &irq);
	if (ret == -ENOENT)
		ret = (pseudo_value(n, "last_wake_irq", &irq) && irq) ?
		      0 : -ENODATA;
	have_irq = !ret;

	n->stats.naps++;
	n->stats.nap_ns += dur;
	n->napped = true;
	n->stats.last_wake_irq = -1;
	n->stats.last_latency_ns = have_lat ? (long long)lat : -1;
	if (have_irq) {
		stats_wake_irq(&n->stats, irq);
		snprintf(irq_s, sizeof(irq_s), "%llu", irq);
	} else if (alarm) {
		n->stats.alarm_wakes++;
		snprintf(irq_s, sizeof(irq_s), "alarm");
	}
	if (have_lat)
		snprintf(lat_s, sizeof(lat_s), "%llu", lat);
	/* Wake on task: the wakeup source that ended it, if the kernel says. */
	if (n->setup.wake_task &&
	    !path_fmt(path, sizeof(path), "%s/last_wake_source",
		      n->setup.pseudo_dir) &&
	    sysfs_read(path, name, sizeof(name)) > 0)
		snprintf(src, sizeof(src), " wake_source=%s", name);
	logmsg(n, LOG_DEBUG,
	       "nap %lu slept %.3f ms duration_ns=%llu wake_irq=%s wake_latency_ns=%s aborted=0%s",
	       n->stats.naps, dur / 1e6, dur, irq_s, lat_s, src);
	snprintf(status, sizeof(status), "%lu naps, %.1f s asleep, last woken by IRQ %s",
		 n->stats.naps, n->stats.nap_ns / 1e9, irq_s);
	notify(false, false, status);
}

/*
 * The metrics file for node_exporter: whole or not at all, written to
 * FILE.tmp (not *.prom, so never read half written) and renamed over.
 * No fsync: a reader sees the rename at once, and forcing it to disk
 * every interval would be disk I/O that holds naps back.  0 or -errno.
 */
static int write_metrics(struct napd *n)
{
	const char *file = n->o->metrics_file;
	char buf[8192], tmp[PATH_MAX];
	int fd, len, err = 0;

	if (!file || n->o->dry_run)
		return 0;
	n->metrics_at = now_ns(CLOCK_MONOTONIC);
	len = stats_format_metrics(&n->stats, buf, sizeof(buf));
	if (len < 0)
		return -E2BIG;
	if (path_fmt(tmp, sizeof(tmp), "%s.tmp", file))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* node_exporter runs as its own user: readable whatever the umask */
	if (fchmod(fd, 0644))
		err = -errno;
	errno = EIO;	/* for a short write */
	if (!err && write(fd, buf, len) != len)
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, file))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* Every --metrics-interval, and at @force; a failure is logged once. */
static void update_metrics(struct napd *n, bool force)
{
	int ret;

	if (!n->o->metrics_file ||
	    (!force && now_ns(CLOCK_MONOTONIC) - n->metrics_at <
		       n->o->metrics_interval * 1000000000ULL))
		return;
	ret = write_metrics(n);
	if (ret && !n->metrics_failing)
		napd_log(LOG_WARNING, "cannot write %s: %s",
			 n->o->metrics_file, strerror(-ret));
	n->metrics_failing = ret != 0;
}

/*
 * The next systemd timer: asked once a minute, and again once the one
 * known has come due (not more than once a second).  A timer started
 * in between is found within a minute; until then max-nap bounds how
 * late it runs.
 */
static void update_timers(struct napd *n)
{
	unsigned long long now = now_ns(CLOCK_MONOTONIC);
	unsigned long long rt = now_ns(CLOCK_REALTIME) / 1000;
	int ret;

	if (!n->timers_on ||
	    (n->timers_at &&
	     (now - n->timers_at < TIMERS_MIN_NS ||
	      (now - n->timers_at < TIMERS_MAX_NS &&
	       (!n->timer_us || rt < n->timer_us)))))
		return;
	n->timers_at = now;
	ret = timers_query("systemctl", rt, TIMERS_TIMEOUT_MS, &n->timer_us);
	if (ret == -EINTR) {
		n->timers_at = 0;	/* a signal: stopping, or ask again */
		return;
	}
	if (ret) {
		n->timer_us = 0;
		if (!n->timers_failing)
			napd_log(LOG_WARNING,
				 "cannot list systemd timers (systemctl list-timers): %s; naps are bounded by max-nap only",
				 strerror(-ret));
		n->timers_failing = true;
		return;
	}
	if (n->timers_failing)
		napd_log(LOG_INFO, "systemd timers listed again");
	n->timers_failing = false;
}

static const char *fmt_ms(unsigned long ms, char *buf, size_t size);

/*
 * The shortest WatchdogSec= of the running services, asked of systemd
 * once a minute with the timers: a unit whose watchdog pings a nap
 * delays must not be killed for it (a unit started since is found
 * within a minute).  Logged when it changes.
 */
static void update_watchdogs(struct napd *n)
{
	unsigned long long now = now_ns(CLOCK_MONOTONIC), us;
	char unit[128], span[32], bound[32];
	int ret;

	if (!n->timers_on ||
	    (n->watchdog_at && now - n->watchdog_at < TIMERS_MAX_NS))
		return;
	n->watchdog_at = now;
	ret = watchdog_query("systemctl", TIMERS_TIMEOUT_MS, &us, unit,
			     sizeof(unit));
	if (ret == -EINTR) {
		n->watchdog_at = 0;
		return;
	}
	/* the last answer stands: a unit's watchdog rarely changes */
	if (ret && !n->watchdog_failing)
		napd_log(LOG_WARNING, "cannot list WatchdogSec= (systemctl show): %s; using %s",
			 strerror(-ret), n->watchdog_us ?
			 "the last one found" : "max-nap only");
	if (ret) {
		n->watchdog_failing = true;
		return;
	}
	n->watchdog_failing = false;
	if (us == n->watchdog_us)
		return;
	n->watchdog_us = us;
	if (us)
		napd_log(LOG_INFO, "shortest WatchdogSec= %s (%s): naps end within %s",
			 fmt_ms(us / 1000, span, sizeof(span)), unit,
			 fmt_ms(watchdog_bound_ms(0, us), bound, sizeof(bound)));
	else
		napd_log(LOG_INFO, "no running unit with WatchdogSec=");
}

/* Arm the alarm for this nap; its length in ms, 0 for unbounded. */
static unsigned long arm_bound(struct napd *n)
{
	unsigned long ms;
	int ret;

	if (n->alarm_fd < 0)
		return 0;
	ms = nap_bound_ms(n->o->max_nap_ms, n->timers_on ? n->timer_us : 0,
			  now_ns(CLOCK_REALTIME) / 1000);
	ms = watchdog_bound_ms(ms, n->timers_on ? n->watchdog_us : 0);
	if (!ms)
		return 0;
	ret = alarm_arm(n->alarm_fd, ms);
	if (ret) {
		napd_log(LOG_ERR, "cannot arm the max-nap alarm: %s; nap not bounded",
			 strerror(-ret));
		return 0;
	}
	return ms;
}

enum { NAP_DONE, NAP_SKIPPED };

/* Once per back-off: the entries keep failing, and what may be why. */
static void log_backoff(const struct napd *n, int err)
{
	napd_log(LOG_WARNING, "%lu nap entries in a row aborted (%s): backing off up to %lu s",
		 n->backoff.aborted, strerror(-err), BACKOFF_MAX_MS / 1000);
	napd_log(LOG_WARNING, "requests racing each entry, or a task that will not freeze?");
}

/* The handshake and the nap.  NAP_* or -errno on a fatal error. */
static int attempt(struct napd *n)
{
	struct napd_setup *s = &n->setup;
	unsigned long long t0, entry;
	unsigned long bound;
	char count[32];
	bool alarm;
	int ret;

	/* The kernel drops the arm of an IRQ whose handler went. */
	ret = napd_rearm(n->o, s);
	if (ret == 1) {
		napd_log(LOG_NOTICE, "wake IRQs changed (driver reallocated them): re-armed");
	} else if (ret == -ENOENT) {
		snprintf(n->why, sizeof(n->why), "a wake NIC has no IRQ (link down?)");
		held_back(n, CHECK_HANDSHAKE);
		return NAP_SKIPPED;
	} else if (ret < 0) {
		napd_log(LOG_ERR, "cannot re-arm the wake IRQs: %s", strerror(-ret));
		return ret;
	}

	/*
	 * The arm step (wake on irq): from here on the first wake IRQ is a
	 * wakeup event, which makes the count written below stale or the
	 * nap abort; what came before is seen by activity().  With wake on
	 * task the watches are the wakeup sources, added before.
	 */
	if (s->arm[0] && !s->wake_task && !n->o->dry_run) {
		ret = sysfs_write(s->arm, "1");
		if (ret) {
			napd_log(LOG_ERR, "cannot write %s: %s", s->arm,
				 strerror(-ret));
			return ret;
		}
	}

	/*
	 * Work a watched server has now, or had since the copies were
	 * added: a busy server, and its events would block the read below.
	 */
	if (s->wake_task) {
		ret = watch_drain(&n->watch, n->why, sizeof(n->why));
		if (ret < 0) {
			napd_log(LOG_ERR, "cannot read napd's watches: %s",
				 strerror(-ret));
			return ret;
		}
		if (ret) {
			held_back(n, CHECK_WAKE_SOURCE);
			return NAP_SKIPPED;
		}
	}

	/*
	 * Blocks while wakeup events are in progress (napd's own watches
	 * too, if work came since the drain): bounded, see wcount.h.
	 */
	ret = wcount_read(s->wakeup_count, count, sizeof(count),
			  WCOUNT_TIMEOUT_MS);
	if (ret == -ETIMEDOUT) {
		snprintf(n->why, sizeof(n->why),
			 "a wakeup source active for %d ms at the wakeup_count read",
			 WCOUNT_TIMEOUT_MS);
		held_back(n, CHECK_WAKE_SOURCE);
		return NAP_SKIPPED;
	}
	if (ret == -EINTR)
		return NAP_SKIPPED;
	if (ret < 0) {
		napd_log(LOG_ERR, "cannot read %s: %s",
			 s->wakeup_count, strerror(-ret));
		return ret;
	}

	/*
	 * Look again now that the report is armed and the count taken: work
	 * that arrived before is seen here, work after is a wakeup event.
	 */
	ret = activity(n, true);
	if (ret <= CHECK_ERR(0)) {
		napd_log(LOG_ERR, "cannot check for activity: %s",
			 strerror(-(ret - CHECK_ERR(0))));
		return ret - CHECK_ERR(0);
	}
	if (ret >= 0) {
		held_back(n, ret);
		return NAP_SKIPPED;
	}

	if (n->o->dry_run) {
		printf("napd: would nap (wakeup_count %s)\n", count);
		n->stats.naps++;
		return NAP_DONE;
	}

	ret = sysfs_write(s->wakeup_count, count);
	if (ret == -EINVAL) {
		n->stats.refused++;
		snprintf(n->why, sizeof(n->why),
			 "wakeup event since wakeup_count was read");
		held_back(n, CHECK_HANDSHAKE);
		return NAP_SKIPPED;
	}
	if (ret == -EINTR)
		return NAP_SKIPPED;
	if (ret) {
		napd_log(LOG_ERR, "cannot write %s: %s",
			 s->wakeup_count, strerror(-ret));
		return ret;
	}

	/*
	 * Narrow the window for a SIGTERM that would otherwise wait for the
	 * next wake IRQ; the write itself cannot be made signal-atomic.
	 */
	if (stop)
		return NAP_SKIPPED;
	bound = arm_bound(n);
	entry = now_ns(CLOCK_REALTIME);
	t0 = now_ns(CLOCK_BOOTTIME);
	ret = sysfs_write(s->state, "mem");
	alarm = bound && alarm_disarm(n->alarm_fd);
	if (!ret) {
		unsigned long ended = backoff_nap_ok(&n->backoff);

		if (ended)
			napd_log(LOG_INFO, "back-off over: a nap worked after %lu aborted",
				 ended);
		n->stats.last_entry_ns = entry;
		n->stats.last_exit_ns = now_ns(CLOCK_REALTIME);
		after_nap(n, now_ns(CLOCK_BOOTTIME) - t0, alarm);
		return NAP_DONE;
	}
	if (ret == -EBUSY || ret == -EAGAIN) {
		/*
		 * A wakeup event raced the entry (exactly what we want), or a
		 * task did not freeze: again and again, and napd backs off.
		 */
		n->stats.aborted++;
		logmsg(n, LOG_DEBUG, "nap aborted by a wakeup event during entry aborted=1");
		if (backoff_aborted(&n->backoff, now_ns(CLOCK_MONOTONIC)))
			log_backoff(n, ret);
		return NAP_DONE;
	}
	if (ret == -EINTR)
		return NAP_SKIPPED;
	napd_log(LOG_ERR, "cannot write 'mem' to %s: %s", s->state,
		 strerror(-ret));
	return ret;
}

/* Log a trouble of watch_add() when it changes: once, not per attempt. */
static void log_watch_err(struct napd *n)
{
	const struct watch *w = &n->watch;

	if (w->err == n->watch_err)
		return;
	n->watch_err = w->err;
	if (w->err)
		napd_log(LOG_WARNING,
			 "cannot watch the fds of server pid %d: %s; its work does not end naps%s",
			 (int)w->err_pid, w->err == -ENOSPC ?
			 "more fds to watch than napd takes" :
			 strerror(-w->err),
			 w->err == -EPERM ? " (napd needs CAP_SYS_PTRACE)" : "");
	else
		napd_log(LOG_INFO, "every server watched again");
}

/*
 * One nap attempt.  With wake on task the servers' fds are copied into
 * napd's epoll set for this attempt only, and closed whatever happened:
 * napped, aborted or held back (watch.h says why).
 */
static int try_nap(struct napd *n)
{
	struct watch_ports ports = {
		n->o->ports, n->o->nr_ports, n->o->udp_ports,
		n->o->nr_udp_ports,
	};
	int ret;

	if (!n->setup.wake_task)
		return attempt(n);
	ret = watch_add(&n->watch, &ports);
	if (ret < 0) {
		napd_log(LOG_ERR, "cannot find the servers to watch: %s",
			 strerror(-ret));
		watch_drop(&n->watch);
		return ret;
	}
	log_watch_err(n);
	ret = attempt(n);
	/* The events of the nap relax the wakeup sources before they go. */
	watch_drain(&n->watch, NULL, 0);
	watch_drop(&n->watch);
	return ret;
}

/* One request on the status socket (see ctl.h), answered in @answer. */
static void handle_ctl(void *ctx, const char *req, char *answer, size_t size)
{
	struct napd *n = ctx;
	unsigned long long now = now_ns(CLOCK_MONOTONIC);
	unsigned long ms;

	if (!*req || !strcmp(req, "status")) {
		pause_in_force(n);	/* an expired pause ends here too */
		n->stats.pause_left_ms = !n->paused ? -1 : !n->pause_until ?
			-2 : (long long)((n->pause_until - now) / 1000000);
		if (stats_format_status(&n->stats, getpid(), n->o->idle_ms,
					answer, size) < 0)
			snprintf(answer, size, "{\"error\":\"too long\"}\n");
		return;
	}
	if (!strcmp(req, "pause") || !strncmp(req, "pause ", 6)) {
		const char *arg = req[5] ? req + 6 : NULL;

		if (arg && (napd_parse_duration_ms(arg, PAUSE_MS_MAX, &ms) ||
			    !ms)) {
			snprintf(answer, size,
				 "{\"error\":\"bad pause duration '%.40s' (500ms, 5s, 10min, 2h; up to 30 days)\"}\n",
				 arg);
			return;
		}
		n->paused = true;
		n->pause_until = arg ? now + ms * 1000000ULL : 0;
		if (arg) {
			napd_log(LOG_INFO, "paused by napctl for %lu ms", ms);
			snprintf(answer, size,
				 "{\"paused\":true,\"for_ms\":%lu}\n", ms);
		} else {
			napd_log(LOG_INFO, "paused by napctl until napctl resume");
			snprintf(answer, size,
				 "{\"paused\":true,\"for_ms\":null}\n");
		}
		return;
	}
	if (!strcmp(req, "resume")) {
		bool was = n->paused;

		n->paused = false;
		if (was)
			napd_log(LOG_INFO, "resumed by napctl");
		snprintf(answer, size, "{\"paused\":false,\"was_paused\":%s}\n",
			 was ? "true" : "false");
		return;
	}
	snprintf(answer, size,
		 "{\"error\":\"unknown request '%.40s' (status, pause [DURATION], resume)\"}\n",
		 req);
}

/* Sleep @us, answering status socket requests that come in meanwhile. */
static void poll_sleep(struct napd *n, unsigned long us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = (us % 1000000) * 1000,
	};
	struct pollfd pfd = { .fd = n->ctl_fd, .events = POLLIN };

	/* An interrupting signal just ends the sleep early. */
	if (ppoll(&pfd, n->ctl_fd >= 0, &ts, NULL) > 0)
		ctl_serve(n->ctl_fd, handle_ctl, n);
}

/*
 * SIGHUP: read the config file again, command line still on top.  What
 * setup fixed at start (device, mode, roots, socket) stays; a bad file
 * changes nothing.
 */
static void do_reload(struct napd *n)
{
	static struct napd_opts fresh;
	struct napd_opts *o = n->o;
	char err[8192], status[160];
	bool ok;
	int i, ret;

	reload = 0;
	if (napd_load_opts(&fresh, n->argc, n->argv, err, sizeof(err))) {
		napd_opts_free(&fresh);
		napd_log(LOG_ERR, "reload failed, settings kept:");
		print_lines(LOG_ERR, true, err);
		notify(false, false, "reload failed, settings kept");
		return;
	}
	bool same_devs = fresh.nr_wake_devs == o->nr_wake_devs;

	for (i = 0; same_devs && i < o->nr_wake_devs; i++)
		same_devs = !strcmp(fresh.wake_devs[i], o->wake_devs[i]);
	if (!same_devs || fresh.mode != o->mode ||
	    fresh.nr_keep != o->nr_keep ||
	    strcmp(fresh.sysfs_root, o->sysfs_root) ||
	    strcmp(fresh.proc_root, o->proc_root) ||
	    strcmp(fresh.status_socket, o->status_socket) ||
	    fresh.dry_run != o->dry_run || fresh.sync_fs != o->sync_fs)
		napd_log(LOG_WARNING,
			 "reload: wake-dev, mode, keep-awake, sysfs-root, proc-root, status-socket, dry-run and sync take a restart; kept");
	/* Copies: the old strings go with the old settings. */
	for (i = 0; i < o->nr_wake_devs; i++)
		fresh.wake_devs[i] = napd_opts_strdup(&fresh, o->wake_devs[i]);
	fresh.nr_wake_devs = o->nr_wake_devs;
	fresh.mode = o->mode;
	for (i = 0; i < o->nr_keep; i++)
		fresh.keep_awake[i] = napd_opts_strdup(&fresh, o->keep_awake[i]);
	fresh.nr_keep = o->nr_keep;
	fresh.sysfs_root = napd_opts_strdup(&fresh, o->sysfs_root);
	fresh.proc_root = napd_opts_strdup(&fresh, o->proc_root);
	fresh.status_socket = napd_opts_strdup(&fresh, o->status_socket);
	fresh.dry_run = o->dry_run;
	fresh.sync_fs = o->sync_fs;
	ret = devpolicy_keep_opts(&fresh, o);
	if (ret > 0)
		napd_log(LOG_WARNING,
			 "reload: device-policy, nap-keep and nap-suspend take a restart; kept");
	ok = ret >= 0 && fresh.sysfs_root && fresh.proc_root &&
	     fresh.status_socket;
	for (i = 0; i < fresh.nr_wake_devs; i++)
		ok = ok && fresh.wake_devs[i];
	for (i = 0; i < fresh.nr_keep; i++)
		ok = ok && fresh.keep_awake[i];
	if (!ok) {
		napd_opts_free(&fresh);
		napd_log(LOG_ERR, "reload failed, settings kept: out of memory");
		return;
	}
	if (n->alarm_fd < 0 && !o->dry_run &&
	    (fresh.max_nap_ms || fresh.systemd_timers) &&
	    !o->max_nap_ms && !o->systemd_timers)
		napd_log(LOG_WARNING,
			 "reload: max-nap and systemd-timers, off at start, take a restart");
	napd_opts_free(o);
	*o = fresh;
	n->timers_on = n->alarm_fd >= 0 && o->systemd_timers &&
		       timers_systemd_booted("/run");
	n->timers_at = 0;
	n->watchdog_at = 0;
	n->sampled = false;
	n->conn_clean = false;	/* the ports may have changed */
	napd_log(LOG_INFO,
		 "reloaded: idle %lu ms, cpu-max %lu%%, runnable-max %lu, %d process name%s",
		 o->idle_ms, o->cpu_max, o->runnable_max, o->nr_procs,
		 o->nr_procs == 1 ? "" : "s");
	snprintf(status, sizeof(status), "reloaded: idle %lu ms", o->idle_ms);
	notify(false, false, status);
}

/* How often run() looks for quiet, in us. */
#define POLL_MIN_US	2000UL
#define POLL_MAX_US	25000UL

static unsigned long clamp_ul(unsigned long v, unsigned long lo,
			      unsigned long hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static unsigned long min_ul(unsigned long a, unsigned long b)
{
	return a < b ? a : b;
}

static int run(struct napd *n)
{
	int ret;

	update_timers(n);
	update_watchdogs(n);
	n->quiet_since = now_ns(CLOCK_MONOTONIC);
	while (!stop) {
		const struct napd_opts *o = n->o;
		/*
		 * The quiet time: idle-ms, longer after aborted entries
		 * (backoff.h).  Notice it within a third of it, but not more
		 * often than every POLL_MIN_US: each wakeup costs (a read of
		 * the packet counters; at --idle-ms 50, 60 a second are
		 * ~0.35 % of a CPU).
		 */
		unsigned long quiet_ms = backoff_quiet_ms(&n->backoff,
							  o->idle_ms);
		unsigned long poll_us = clamp_ul(quiet_ms * 333, POLL_MIN_US,
						 POLL_MAX_US);

		/*
		 * A busy server is looked at less often: every look costs a
		 * read of the counters (under load, at POLL_MIN_US, a fifth
		 * of a CPU in a TCG guest), and looking does not bring the
		 * quiet sooner.  The gap doubles per look that held a nap
		 * back, up to POLL_MAX_US, until the next nap attempt; a nap
		 * starts at most that much later.
		 */
		poll_us = min_ul(poll_us << min_ul(n->busy_polls, 4),
				 POLL_MAX_US);

		if (o->max_naps && n->stats.naps >= o->max_naps)
			return 0;
		poll_sleep(n, poll_us);
		if (stop)
			break;
		if (reload)
			do_reload(n);
		update_metrics(n, false);

		ret = activity(n, false);
		if (ret <= CHECK_ERR(0))
			goto fatal;
		if (ret >= 0) {
			/* A busy spell holds back one nap, logged once. */
			if (n->busy_check != ret)
				held_back(n, ret);
			n->busy_check = ret;
			n->busy_polls++;
			n->quiet_since = now_ns(CLOCK_MONOTONIC);
			n->sampled = false;
			continue;
		}
		n->busy_check = -1;
		if (!n->sampled) {
			/* The window's CPU and disk baseline. */
			ret = sample(n, &n->cpu0, &n->disk0);
			if (ret)
				goto fatal_errno;
			n->sampled = true;
			n->quiet_since = now_ns(CLOCK_MONOTONIC);
		}
		if (now_ns(CLOCK_MONOTONIC) - n->quiet_since <
		    quiet_ms * 1000000ULL)
			continue;

		/* Connections and UDP: in try_nap(), after wakeup_count. */
		ret = idle_checks(n);
		if (ret <= CHECK_ERR(0))
			goto fatal;
		if (ret == CHECK_WAIT)
			continue;
		if (ret >= 0) {
			held_back(n, ret);
			n->busy_polls++;
			n->quiet_since = now_ns(CLOCK_MONOTONIC);
			continue;
		}

		n->busy_polls = 0;
		ret = try_nap(n);
		if (ret < 0)
			return ret;
		/* Awake anyway: before the next window's CPU sample. */
		update_timers(n);
		update_watchdogs(n);
		/*
		 * After a wake (or an aborted or refused attempt, or work
		 * found at the last moment) stay up for idle-ms of quiet.
		 */
		n->quiet_since = now_ns(CLOCK_MONOTONIC);
		n->sampled = false;
	}
	return 0;

fatal:
	ret -= CHECK_ERR(0);
fatal_errno:
	napd_log(LOG_ERR, "cannot check for activity: %s",
		 strerror(-ret));
	return ret;
}

static int install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: see the top of the file */
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL))
		return -1;
	/* A closed log pipe must not kill us before the restore. */
	sa.sa_handler = SIG_IGN;
	return sigaction(SIGPIPE, &sa, NULL);
}

static const char *fmt_ms(unsigned long ms, char *buf, size_t size)
{
	if (ms % 1000)
		snprintf(buf, size, "%lu ms", ms);
	else
		snprintf(buf, size, "%lu s", ms / 1000);
	return buf;
}

static int start(struct napd *n)
{
	const struct napd_opts *o = n->o;
	char irqs[SETTING_VAL_MAX] = "", path6[PATH_MAX], devs[160];
	char nics[NAPD_MAX_NICS * 17] = "", bound_s[32];
	const struct napd_setup *s = &n->setup;
	bool detail;
	int ret, i;

	for (i = 0; i < n->setup.nr_rx; i++) {
		n->rx_fds[i] = open(n->setup.rx_packets[i],
				    O_RDONLY | O_CLOEXEC);
		if (n->rx_fds[i] < 0) {
			napd_log(LOG_ERR, "cannot open %s: %s",
				 n->setup.rx_packets[i], strerror(errno));
			return -1;
		}
	}
	if (n->setup.rx_snmp) {
		/* No snmp6 without IPv6: then there is nothing to add. */
		if (path_fmt(path6, sizeof(path6), "%s/net/snmp6",
			     o->proc_root)) {
			napd_log(LOG_ERR, "path too long under %s",
				 o->proc_root);
			return -1;
		}
		n->rx6_fd = open(path6, O_RDONLY | O_CLOEXEC);
	}
	if (s->wake_task) {
		ret = watch_init(&n->watch, o->proc_root);
		if (ret) {
			napd_log(LOG_ERR, "cannot make napd's epoll set: %s",
				 strerror(-ret));
			return -1;
		}
	}
	if (read_rx(n, &n->last_rx)) {
		napd_log(LOG_ERR, "cannot read %s%s",
			 n->setup.rx_packets[0],
			 n->setup.nr_rx > 1 ? " or another wake device's" : "");
		return -1;
	}
	if (path_fmt(n->tcp[0], sizeof(n->tcp[0]), "%s/net/tcp",
		     o->proc_root) ||
	    path_fmt(n->tcp[1], sizeof(n->tcp[1]), "%s/net/tcp6",
		     o->proc_root) ||
	    path_fmt(n->udp[0], sizeof(n->udp[0]), "%s/net/udp",
		     o->proc_root) ||
	    path_fmt(n->udp[1], sizeof(n->udp[1]), "%s/net/udp6",
		     o->proc_root) ||
	    path_fmt(n->stat_path, sizeof(n->stat_path), "%s/stat",
		     o->proc_root) ||
	    path_fmt(n->net_dev, sizeof(n->net_dev), "%s/net/dev",
		     o->proc_root) ||
	    path_fmt(n->diskstats_path, sizeof(n->diskstats_path),
		     "%s/diskstats", o->proc_root))
		return -1;

	/* sock_diag sees the real kernel; a fake --proc-root means files. */
	n->diag.fd = -1;
	n->use_diag = !strcmp(o->proc_root, "/proc") && !diag_open(&n->diag);
	ret = conn_busy(n);
	if (ret < 0) {
		napd_log(LOG_ERR, "cannot list TCP connections: %s",
			 strerror(-ret));
		return -1;
	}
	n->have_net_dev = path_exists(n->net_dev);
	/* No block layer (CONFIG_BLOCK=n), no disk I/O to wait for. */
	n->have_diskstats = path_exists(n->diskstats_path);
	if (!n->have_diskstats && o->disk_check)
		napd_log(LOG_NOTICE, "no %s, not checking disk I/O",
			 n->diskstats_path);
	ret = sample(n, &n->cpu0, &n->disk0);
	if (ret) {
		napd_log(LOG_ERR, "cannot read %s or %s: %s",
			 n->stat_path, n->diskstats_path, strerror(-ret));
		return -1;
	}

	/* Wake on task arms no IRQ: the NICs' IRQs only run. */
	if (s->wake_task)
		snprintf(irqs, sizeof(irqs), "none (wake on task)");
	else
		irqlist_format(n->setup.irqs, s->nr_irqs, irqs, sizeof(irqs));
	for (i = 0; i < s->nr_nics; i++)
		snprintf(nics + strlen(nics), sizeof(nics) - strlen(nics),
			 "%s%s", i ? "," : "", s->nics[i]);
	logmsg(n, LOG_INFO,
	       "mode %s, idle %lu ms, wake device%s %s, wake irqs %s (from %s), connections via %s",
	       napd_mode_name(o->mode), o->idle_ms,
	       o->nr_wake_devs == 1 ? "" : "s",
	       napd_wake_devs_str(o, devs, sizeof(devs)),
	       irqs[0] ? irqs : "none",
	       s->nr_nics > 1 ? nics :
	       s->nr_nics && s->irq_src[0].from[0] ? s->irq_src[0].from : "-",
	       n->use_diag ? "sock_diag" : n->tcp[0]);
	/* A bond, a VLAN or several devices: where each NIC's IRQs are. */
	detail = s->nr_nics > 1 ||
		 (s->nr_nics == 1 && strcmp(s->nics[0], s->nic_of[0]));
	if (!detail && !s->wake_task)
		logmsg(n, LOG_INFO, "armed %s: %s", irqs[0] ? irqs : "none",
		       s->nr_nics && s->irq_src[0].armed[0] ?
		       s->irq_src[0].armed : "-");
	for (i = 0; detail && i < s->nr_nics; i++)
		logmsg(n, LOG_INFO, "NIC %s (wake-dev %s): IRQs from %s, armed %s",
		       s->nics[i], s->nic_of[i],
		       s->irq_src[i].from[0] ? s->irq_src[i].from : "-",
		       s->irq_src[i].armed[0] && !s->wake_task ?
		       s->irq_src[i].armed : "none");
	logmsg(n, LOG_INFO, "naps end on %s; activity: %s",
	       s->wake_task ? "the servers' work (wake on task: EPOLLWAKEUP watches)" :
	       "any armed IRQ (wake on irq)",
	       s->rx_snmp ? "TCP segments for sockets and UDP datagrams" :
	       "packets of the wake device");
	if (s->wake_why[0])
		logmsg(n, LOG_INFO, "--wake-on auto chose irq: %s",
		       s->wake_why);
	logmsg(n, LOG_INFO, "naps end after %s%s; systemd timers: %s",
	       o->max_nap_ms && n->alarm_fd >= 0 ? "at most " : "no bound",
	       o->max_nap_ms && n->alarm_fd >= 0 ?
	       fmt_ms(o->max_nap_ms, bound_s, sizeof(bound_s)) : "",
	       n->timers_on ? "followed" : !o->systemd_timers ? "off" :
	       n->alarm_fd < 0 ? "no alarm timer" : "no systemd");
	logmsg(n, LOG_INFO, "logind sleep inhibitors: %s; status socket %s",
	       o->inhibitors ? o->inhibit_dir : "ignored", o->status_socket);
	if (o->mode == NAPD_MODE_PSEUDO)
		logmsg(n, LOG_INFO,
		       "device policy %s: %d device%s kept awake by its rules (napd --list-devices)",
		       o->dev_policy == NAPD_POLICY_LEAN ? "lean" : "all",
		       s->nr_policy, s->nr_policy == 1 ? "" : "s");
	if (o->mode == NAPD_MODE_PSEUDO)
		logmsg(n, LOG_INFO, "%s", o->sync_fs ?
		       "filesystems synced before each nap, as the PM core does (--sync yes)" :
		       "no filesystem sync before naps, nor any suspend while napd runs (sync_on_suspend 0)");
	logmsg(n, LOG_INFO,
	       "idle checks: cpu-max %lu%%, runnable-max %lu, disk %s, %d process name%s, %d UDP port%s",
	       o->cpu_max, o->runnable_max,
	       o->disk_check && n->have_diskstats ? "yes" : "no",
	       o->nr_procs, o->nr_procs == 1 ? "" : "s", o->nr_udp_ports,
	       o->nr_udp_ports == 1 ? "" : "s");
	return 0;
}

static int status_client(const struct napd_opts *o)
{
	int ret = ctl_query(o->status_socket, "status", stdout, 30);
	char why[PATH_MAX + 256];

	if (ret) {
		ctl_explain(o->status_socket, ret, 30, why, sizeof(why));
		napd_log(LOG_ERR, "%s", why);
		return 1;
	}
	return 0;
}

/* --restore: put back what a killed napd saved, then exit. */
static int restore_saved(const struct napd_opts *o)
{
	static struct settings st;
	char err[PATH_MAX + 128];
	int fd = -1, n, ret;

	st.dry_run = o->dry_run;
	if (path_fmt(st.file, sizeof(st.file), "%s/" SETTINGS_FILE,
		     o->state_dir)) {
		napd_log(LOG_ERR, "path too long under %s", o->state_dir);
		return 1;
	}
	/* A running napd restores its own on SIGTERM: leave them alone. */
	if (!o->dry_run) {
		fd = state_lock(o->state_dir, err, sizeof(err));
		if (fd < 0) {
			napd_log(LOG_ERR, "%s; stop it instead", err);
			return 1;
		}
	}
	if (!o->dry_run)
		devtiming_stop(o->sysfs_root);
	n = settings_load(&st, err, sizeof(err));
	if (n <= 0) {
		if (n < 0)
			napd_log(LOG_ERR, "%s", err);
		else
			napd_log(LOG_INFO, "nothing to restore: no %s",
				 st.file);
		if (fd >= 0)
			close(fd);
		return n < 0;
	}
	ret = settings_restore(&st);
	if (fd >= 0)
		close(fd);
	if (ret) {
		napd_log(LOG_ERR, "restoring from %s failed: %s; the file is kept",
			 st.file, strerror(-ret));
		return 1;
	}
	napd_log(LOG_INFO, "restored %d setting%s from %s", n,
		 n == 1 ? "" : "s", st.file);
	return 0;
}

/*
 * The alarm for max-nap and systemd timers.  Without CAP_WAKE_ALARM napd
 * refuses to start (the unit file grants it); a kernel without alarm
 * timers (no RTC) only gets a warning: its naps cannot be bounded.
 */
static int open_alarm(struct napd *n)
{
	const struct napd_opts *o = n->o;

	if ((!o->max_nap_ms && !o->systemd_timers) || o->dry_run)
		return 0;
	n->alarm_fd = alarm_open();
	if (n->alarm_fd == -EPERM) {
		napd_log(LOG_ERR,
			 "max-nap and systemd-timers need CAP_WAKE_ALARM for an alarm timer (CLOCK_BOOTTIME_ALARM); run napd as root with it, or set max-nap = 0 and systemd-timers = no for unbounded naps");
		return -1;
	}
	if (n->alarm_fd < 0) {
		napd_log(LOG_WARNING,
			 "no alarm timer (CLOCK_BOOTTIME_ALARM: %s): naps are not bounded",
			 strerror(-n->alarm_fd));
		n->alarm_fd = -1;
		return 0;
	}
	n->timers_on = o->systemd_timers && timers_systemd_booted("/run");
	return 0;
}

/*
 * The status socket's group: socket-group, or "napd" if /etc/group has
 * one; none (root only) otherwise.  A socket-group that does not exist
 * is an error.
 */
static int socket_gid(const struct napd_opts *o, gid_t *gid)
{
	const char *name = o->socket_group ? o->socket_group :
			   NAPD_SOCKET_GROUP_DEFAULT;
	long g = ctl_group_gid("/etc/group", name);

	*gid = (gid_t)-1;
	if (g < 0 && o->socket_group) {
		napd_log(LOG_ERR, "socket-group '%s': no such group in /etc/group",
			 name);
		return -1;
	}
	if (g >= 0)
		*gid = g;
	return 0;
}

static struct napd_opts o;

static void free_opts(void)
{
	napd_opts_free(&o);
}

int main(int argc, char *argv[])
{
	static struct napd n;
	char err[8192], status[192], devs[160];
	int ret = 0, state_fd = -1, i;
	bool restore_failed = false, shared;
	gid_t gid;

	ret = napd_load_opts(&o, argc, argv, err, sizeof(err));
	if (o.check_config) {
		/* FILE:LINE: reason, as compilers say it, for editors */
		if (!ret)
			printf("%s: ok\n",
			       o.config ? o.config : NAPD_CONFIG_DEFAULT);
		else
			print_lines(LOG_ERR, false, err);
		napd_opts_free(&o);
		return ret ? 2 : 0;
	}
	if (ret) {
		napd_opts_free(&o);
		print_lines(LOG_ERR, true, err);
		/* the usage helps with a command line, not with a file */
		if (ret == -1)
			fprintf(stderr, "\n%s", napd_usage);
		return 2;
	}
	atexit(free_opts);
	if (o.help) {
		fputs(napd_usage, stdout);
		return 0;
	}
	if (o.version) {
		printf("napd %s\n", NAPD_VERSION);
		return 0;
	}
	if (o.status)
		return status_client(&o);
	if (o.restore)
		return restore_saved(&o);
	if (o.list_devices)
		return devpolicy_list(&o, stdout);
	if (o.check)
		return preflight_run(&o, stdout);

	/* Output must reach a pipe or serial console before a nap. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	n.o = &o;
	n.argc = argc;
	n.argv = argv;
	for (i = 0; i < NAPD_MAX_WAKE_DEVS; i++)
		n.rx_fds[i] = -1;
	n.rx6_fd = -1;
	n.watch.ep = -1;
	n.diag.fd = -1;
	n.ctl_fd = -1;
	n.alarm_fd = -1;
	n.busy_check = -1;
	stats_init(&n.stats);

	/* Before the first change, so a signal during setup still restores. */
	if (install_signals()) {
		napd_log(LOG_ERR, "sigaction: %s", strerror(errno));
		return 1;
	}

	/* Before any change: a second napd must leave the first's alone. */
	if (socket_gid(&o, &gid))
		return 1;
	n.ctl_fd = ctl_listen(o.status_socket, gid, &shared, err, sizeof(err));
	if (n.ctl_fd < 0) {
		napd_log(LOG_ERR, "%s", err);
		return 1;
	}
	/* An explicit socket-group must work; the default may fall back. */
	if (gid != (gid_t)-1 && !shared) {
		napd_log(o.socket_group ? LOG_ERR : LOG_WARNING, "%s%s", err,
			 o.socket_group ? "" : "; the socket is root's only");
		if (o.socket_group) {
			ctl_close(n.ctl_fd, o.status_socket);
			return 1;
		}
	}

	/* Before any change, so that they are saved before they are made. */
	if (!o.dry_run) {
		state_fd = state_lock(o.state_dir, err, sizeof(err));
		if (state_fd < 0) {
			napd_log(LOG_ERR, "%s", err);
			ctl_close(n.ctl_fd, o.status_socket);
			return 1;
		}
	}

	/* Bounded naps need an alarm clock: refused before changes. */
	ret = open_alarm(&n);
	if (ret) {
		ctl_close(n.ctl_fd, o.status_socket);
		return 1;
	}

	/* A metrics file that cannot be written: refused before changes. */
	ret = write_metrics(&n);
	if (ret) {
		napd_log(LOG_ERR, "cannot write metrics file %s: %s",
			 o.metrics_file, strerror(-ret));
		ctl_close(n.ctl_fd, o.status_socket);
		return 1;
	}

	if (napd_setup(&o, &n.setup, err, sizeof(err))) {
		napd_log(LOG_ERR, "%s", err);
		notify(false, true, err);
		napd_restore(&n.setup);
		ctl_close(n.ctl_fd, o.status_socket);
		return 1;
	}
	if (n.setup.recovered)
		napd_log(LOG_WARNING,
			 "%s: the originals of %d setting%s, left by a napd that did not stop cleanly, are taken as the originals",
			 n.setup.settings.file, n.setup.recovered,
			 n.setup.recovered == 1 ? "" : "s");

	/* Per-device nap costs for --list-devices: nice to have. */
	if (!o.dry_run && o.mode == NAPD_MODE_PSEUDO &&
	    devtiming_start(o.sysfs_root, err, sizeof(err)))
		napd_log(LOG_NOTICE, "no per-device nap costs: %s", err);

	if (start(&n)) {
		ret = 1;
	} else {
		snprintf(status, sizeof(status),
			 "napping when idle for %lu ms; wake device %s",
			 o.idle_ms, napd_wake_devs_str(&o, devs, sizeof(devs)));
		notify(true, false, status);
		if (run(&n) < 0)
			ret = 1;
	}

	notify(false, true, ret ? "failed, restoring settings" :
	       "stopping, restoring settings");
	if (napd_restore(&n.setup)) {
		restore_failed = true;
		ret = 1;
	}
	if (!o.dry_run)
		devtiming_stop(o.sysfs_root);
	update_metrics(&n, true);
	ctl_close(n.ctl_fd, o.status_socket);
	if (state_fd >= 0)
		close(state_fd);
	diag_close(&n.diag);
	if (n.alarm_fd >= 0)
		close(n.alarm_fd);
	for (i = 0; i < NAPD_MAX_WAKE_DEVS; i++)
		if (n.rx_fds[i] >= 0)
			close(n.rx_fds[i]);
	if (n.rx6_fd >= 0)
		close(n.rx6_fd);
	watch_close(&n.watch);

	if (o.log) {
		char sum[192];

		stats_format_summary(&n.stats, sum, sizeof(sum));
		napd_log(LOG_INFO, "%s", sum);
		if (!restore_failed)
			napd_log(LOG_INFO, "stopped%s; settings restored",
				 ret ? " on an error" : "");
	}
	if (o.stats)
		stats_print_json(&n.stats, stdout);
	return ret;
}
