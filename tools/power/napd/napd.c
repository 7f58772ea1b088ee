// SPDX-License-Identifier: GPL-2.0
/*
 * napd - nap the machine between requests with pseudo-sleep.
 *
 * The loop is the upstream wakeup_count handshake around a cheap poll for
 * quiet: read wakeup_count, make sure nothing is in flight, write the
 * count back (refused if a wakeup event slipped in), then write "mem".
 * A request that arrives at any point either shows up in our checks or is
 * a wakeup event that makes the kernel refuse or abort the nap, so none
 * is slept through.
 *
 * Settings are restored in the main flow on every exit; the signal handler
 * only sets a flag.  It is installed without SA_RESTART so that a blocked
 * read or write returns EINTR and the loop notices.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "opts.h"
#include "procnet.h"
#include "setup.h"
#include "stats.h"
#include "sysfs.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct napd {
	const struct napd_opts *o;
	struct napd_setup setup;
	struct napd_stats stats;
	struct diag diag;
	bool use_diag;
	char tcp[2][PATH_MAX];		/* /proc/net/tcp and tcp6 */
	int rx_fd;
	unsigned long long last_rx;
	unsigned long long quiet_since;	/* CLOCK_MONOTONIC ns */
};

static unsigned long long now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int read_rx(struct napd *n, unsigned long long *rx)
{
	char buf[32], *end;
	ssize_t len;

	/* pread at 0 makes sysfs produce a fresh value on an open fd. */
	len = pread(n->rx_fd, buf, sizeof(buf) - 1, 0);
	if (len < 0)
		return -errno;
	buf[len] = '\0';
	*rx = strtoull(buf, &end, 10);
	if (end == buf)
		return -EINVAL;
	return 0;
}

static int procfs_busy(struct napd *n)
{
	const struct napd_opts *o = n->o;
	int i, busy = 0;

	for (i = 0; i < 2; i++) {
		char *text = read_whole(n->tcp[i]);
		int ret;

		if (!text) {
			/* No tcp6 without IPv6; nothing is listening there. */
			if (i == 1 && errno == ENOENT)
				continue;
			return -errno;
		}
		ret = procnet_tcp_busy(text, o->ports, o->nr_ports);
		free(text);
		if (ret < 0) {
			fprintf(stderr, "napd: cannot parse %s\n", n->tcp[i]);
			return -EINVAL;
		}
		busy += ret;
	}
	return busy;
}

/* Connections on the served ports: >0 busy, 0 none, -errno. */
static int conn_busy(struct napd *n)
{
	if (n->use_diag) {
		int ret = diag_tcp_busy(&n->diag, n->o->ports, n->o->nr_ports);

		if (ret >= 0)
			return ret;
		fprintf(stderr, "napd: sock_diag failed (%s), reading %s\n",
			strerror(-ret), n->tcp[0]);
		diag_close(&n->diag);
		n->use_diag = false;
	}
	return procfs_busy(n);
}

/* Anything going on?  1 yes, 0 quiet, -errno. */
static int activity(struct napd *n)
{
	unsigned long long rx;
	int ret;

	ret = read_rx(n, &rx);
	if (ret)
		return ret;
	if (rx != n->last_rx) {
		n->last_rx = rx;
		return 1;
	}
	ret = conn_busy(n);
	return ret < 0 ? ret : ret > 0;
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

static void after_nap(struct napd *n, unsigned long long slept_ns)
{
	unsigned long long dur, lat, irq;
	bool have_irq, have_lat;
	int ret;
	char irq_s[24] = "none", lat_s[24] = "-";

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
	if (have_irq) {
		stats_wake_irq(&n->stats, irq);
		snprintf(irq_s, sizeof(irq_s), "%llu", irq);
	}
	if (have_lat)
		snprintf(lat_s, sizeof(lat_s), "%llu", lat);
	if (n->o->log)
		printf("napd: nap %lu slept %.3f ms duration_ns=%llu wake_irq=%s wake_latency_ns=%s aborted=0\n",
		       n->stats.naps, dur / 1e6, dur, irq_s, lat_s);
}

enum { NAP_DONE, NAP_SKIPPED };

/* One handshake and nap attempt.  NAP_* or -errno on a fatal error. */
static int try_nap(struct napd *n)
{
	struct napd_setup *s = &n->setup;
	unsigned long long t0;
	char count[32];
	int ret;

	/* Blocks while wakeup events are in progress; EINTR on a signal. */
	ret = sysfs_read(s->wakeup_count, count, sizeof(count));
	if (ret == -EINTR)
		return NAP_SKIPPED;
	if (ret < 0) {
		fprintf(stderr, "napd: cannot read %s: %s\n",
			s->wakeup_count, strerror(-ret));
		return ret;
	}

	/*
	 * Look again now that the count is taken: work that arrived before
	 * is seen here, work that arrives after is a wakeup event.
	 */
	ret = activity(n);
	if (ret < 0)
		fprintf(stderr, "napd: cannot check for activity: %s\n",
			strerror(-ret));
	if (ret)
		return ret < 0 ? ret : NAP_SKIPPED;

	if (n->o->dry_run) {
		printf("napd: would nap (wakeup_count %s)\n", count);
		n->stats.naps++;
		return NAP_DONE;
	}

	ret = sysfs_write(s->wakeup_count, count);
	if (ret == -EINVAL) {
		n->stats.refused++;
		if (n->o->log)
			printf("napd: handshake refused: wakeup event since wakeup_count read\n");
		return NAP_SKIPPED;
	}
	if (ret == -EINTR)
		return NAP_SKIPPED;
	if (ret) {
		fprintf(stderr, "napd: cannot write %s: %s\n",
			s->wakeup_count, strerror(-ret));
		return ret;
	}

	/*
	 * Narrow the window for a SIGTERM that would otherwise wait for the
	 * next wake IRQ; the write itself cannot be made signal-atomic.
	 */
	if (stop)
		return NAP_SKIPPED;
	t0 = now_ns(CLOCK_BOOTTIME);
	ret = sysfs_write(s->state, "mem");
	if (!ret) {
		after_nap(n, now_ns(CLOCK_BOOTTIME) - t0);
		return NAP_DONE;
	}
	if (ret == -EBUSY || ret == -EAGAIN) {
		/* A wakeup event raced the entry: exactly what we want. */
		n->stats.aborted++;
		if (n->o->log)
			printf("napd: nap aborted by a wakeup event during entry aborted=1\n");
		return NAP_DONE;
	}
	if (ret == -EINTR)
		return NAP_SKIPPED;
	fprintf(stderr, "napd: cannot write 'mem' to %s: %s\n", s->state,
		strerror(-ret));
	return ret;
}

static void poll_sleep(unsigned long us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = (us % 1000000) * 1000,
	};

	/* An interrupting signal just ends the sleep early. */
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

static int run(struct napd *n)
{
	const struct napd_opts *o = n->o;
	unsigned long long idle_ns = o->idle_ms * 1000000ULL;
	/* Poll often enough to notice idle-ms of quiet within ~20%. */
	unsigned long poll_us = o->idle_ms * 200 < 10000 ?
				o->idle_ms * 200 : 10000;
	int ret;

	n->quiet_since = now_ns(CLOCK_MONOTONIC);
	while (!stop) {
		if (o->max_naps && n->stats.naps >= o->max_naps)
			return 0;
		poll_sleep(poll_us);
		if (stop)
			break;

		ret = activity(n);
		if (ret < 0) {
			fprintf(stderr, "napd: cannot check for activity: %s\n",
				strerror(-ret));
			return ret;
		}
		if (ret) {
			n->quiet_since = now_ns(CLOCK_MONOTONIC);
			continue;
		}
		if (now_ns(CLOCK_MONOTONIC) - n->quiet_since < idle_ns)
			continue;

		ret = try_nap(n);
		if (ret < 0)
			return ret;
		/*
		 * After a wake (or an aborted or refused attempt, or work
		 * found at the last moment) stay up for idle-ms of quiet.
		 */
		n->quiet_since = now_ns(CLOCK_MONOTONIC);
	}
	return 0;
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

static int start(struct napd *n)
{
	const struct napd_opts *o = n->o;
	char irqs[SETTING_VAL_MAX] = "";
	int ret;

	n->rx_fd = open(n->setup.rx_packets, O_RDONLY | O_CLOEXEC);
	if (n->rx_fd < 0 || read_rx(n, &n->last_rx)) {
		fprintf(stderr, "napd: cannot read %s\n", n->setup.rx_packets);
		return -1;
	}
	if (path_fmt(n->tcp[0], sizeof(n->tcp[0]), "%s/net/tcp",
		     o->proc_root) ||
	    path_fmt(n->tcp[1], sizeof(n->tcp[1]), "%s/net/tcp6",
		     o->proc_root))
		return -1;

	/* sock_diag sees the real kernel; a fake --proc-root means files. */
	n->diag.fd = -1;
	n->use_diag = !strcmp(o->proc_root, "/proc") && !diag_open(&n->diag);
	ret = conn_busy(n);
	if (ret < 0) {
		fprintf(stderr, "napd: cannot list TCP connections: %s\n",
			strerror(-ret));
		return -1;
	}

	if (o->log) {
		irqlist_format(n->setup.irqs, n->setup.nr_irqs, irqs,
			       sizeof(irqs));
		printf("napd: mode %s, idle %lu ms, wake device %s, wake irqs %s (from %s), connections via %s\n",
		       napd_mode_name(o->mode), o->idle_ms, o->wake_dev,
		       irqs[0] ? irqs : "none",
		       n->setup.irq_src.from[0] ? n->setup.irq_src.from : "-",
		       n->use_diag ? "sock_diag" : n->tcp[0]);
	}
	return 0;
}

int main(int argc, char *argv[])
{
	static struct napd n;
	struct napd_opts o;
	char err[512];
	int ret = 0;

	if (napd_parse_opts(&o, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "napd: %s\n\n%s", err, napd_usage);
		return 2;
	}
	if (o.help) {
		fputs(napd_usage, stdout);
		return 0;
	}
	if (o.version) {
		printf("napd %s\n", NAPD_VERSION);
		return 0;
	}

	/* Log lines must reach a pipe or serial console before a nap. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	n.o = &o;
	n.rx_fd = -1;
	n.diag.fd = -1;

	/* Before the first change, so a signal during setup still restores. */
	if (install_signals()) {
		perror("napd: sigaction");
		return 1;
	}

	if (napd_setup(&o, &n.setup, err, sizeof(err))) {
		fprintf(stderr, "napd: %s\n", err);
		napd_restore(&n.setup);
		return 1;
	}

	if (start(&n) || run(&n) < 0)
		ret = 1;

	if (napd_restore(&n.setup))
		ret = 1;
	diag_close(&n.diag);
	if (n.rx_fd >= 0)
		close(n.rx_fd);

	if (o.log)
		stats_print_summary(&n.stats, stdout);
	if (o.stats)
		stats_print_json(&n.stats, stdout);
	return ret;
}
