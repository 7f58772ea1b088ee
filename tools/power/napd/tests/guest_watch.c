// SPDX-License-Identifier: GPL-2.0
/*
 * What wake on task needs of the kernel's wakeup sources, checked on a
 * kernel with CONFIG_PM_SLEEP (a guest; the unit tests' host may lack
 it): napd's epoll sets register one wakeup source (and the outer
 * set's own), the copies of a server's listening socket and of its epoll
 * none; work for the server activates it, through the server's own epoll
 * too, so that the wakeup_count read blocks and napd's bounded read
 * gives up; draining napd's sets relaxes it, the read succeeds and the
 * count has moved.  Also the cost of one attempt's copies (add and
 * drop), and of an epoll item with and without a wakeup source.
 *
 *   tests/guest_watch [SYSFS_ROOT]     (run as root, CAP_BLOCK_SUSPEND)
 *
 * KTAP-like output; exit status 0 if every check passed.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "diag.h"
#include "sysfs.h"
#include "watch.h"
#include "wcount.h"

static int failed, n;

static void ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
	failed += !cond;
}

/* The number of wakeup sources in /sys/class/wakeup. */
static int nr_sources(const char *sys)
{
	char path[PATH_MAX];
	struct dirent *de;
	int nr = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/class/wakeup", sys);
	d = opendir(path);
	while (d && (de = readdir(d)))
		nr += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return d ? nr : -1;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A server: a listener in an epoll of its own, and @pair in it too. */
static void server(int ready, int pair)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct epoll_event ev = { .events = EPOLLIN };
	socklen_t len = sizeof(a);
	int lfd, ep;
	unsigned short port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ep = epoll_create1(0);
	if (bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 8) ||
	    getsockname(lfd, (struct sockaddr *)&a, &len))
		_exit(1);
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	epoll_ctl(ep, EPOLL_CTL_ADD, pair, &ev);
	port = ntohs(a.sin_port);
	if (write(ready, &port, sizeof(port)) != sizeof(port))
		_exit(1);
	for (;;)
		pause();	/* never in epoll_wait(), as if frozen */
}

int main(int argc, char *argv[])
{
	const char *sys = argc > 1 ? argv[1] : "/sys";
	static struct watch w;
	struct sockaddr_in a = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	unsigned short port;
	struct watch_ports wp = { &port, 1, NULL, 0 };
	char path[PATH_MAX], c0[32], c1[32], why[256];
	int ready[2], pair[2], cli, ws0, ws1, i;
	double t0;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(path, sizeof(path), "%s/power/wakeup_count", sys);
	if (pipe(ready) || socketpair(AF_UNIX, SOCK_STREAM, 0, pair))
		return 1;
	pid = fork();
	if (!pid)
		server(ready[1], pair[1]);
	if (read(ready[0], &port, sizeof(port)) != sizeof(port))
		return 1;
	ok(watch_wakeup_kept() == 1, "EPOLLWAKEUP kept on napd's items");
	if (!fork()) {
		/* without CAP_BLOCK_SUSPEND: dropped, and napd can tell */
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct d[2];

		if (syscall(SYS_capget, &h, d))
			_exit(2);
		d[CAP_TO_INDEX(CAP_BLOCK_SUSPEND)].effective &=
			~CAP_TO_MASK(CAP_BLOCK_SUSPEND);
		if (syscall(SYS_capset, &h, d))
			_exit(2);
		_exit(watch_wakeup_kept());
	}
	ok(wait(&i) > 0 && WIFEXITED(i) && WEXITSTATUS(i) == 0,
	   "EPOLLWAKEUP dropped without CAP_BLOCK_SUSPEND, and seen");
	ws0 = nr_sources(sys);
	if (watch_init(&w, "/proc"))
		return 1;
	ws1 = nr_sources(sys);
	printf("# wakeup sources %d -> %d\n", ws0, ws1);
	ok(ws1 == ws0 + 2, "napd's source and the outer set's own");
	ok(watch_add(&w, &wp) == 2, "the listener and the server's epoll copied");
	ok(nr_sources(sys) == ws1, "no source per copy");
	ok(watch_drain(&w, why, sizeof(why)) == 0, "idle: no event");
	ok(wcount_read(path, c0, sizeof(c0), WCOUNT_TIMEOUT_MS) >= 0,
	   "idle: wakeup_count read");

	/* a connection: napd's item's source is active until drained */
	cli = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_port = htons(port);
	ok(!connect(cli, (struct sockaddr *)&a, sizeof(a)), "connected");
	t0 = now_ms();
	ok(wcount_read(path, c1, sizeof(c1), WCOUNT_TIMEOUT_MS) == -ETIMEDOUT,
	   "work pending: the read blocks and is given up");
	printf("# gave up after %.1f ms\n", now_ms() - t0);
	ok(watch_drain(&w, why, sizeof(why)) > 0, why);
	ok(wcount_read(path, c1, sizeof(c1), WCOUNT_TIMEOUT_MS) >= 0,
	   "drained: the read returns");
	printf("# wakeup_count %s -> %s\n", c0, c1);
	ok(strcmp(c0, c1) != 0, "the count moved");

	/* work in the server's epoll only: the nested path */
	ok(write(pair[0], "x", 1) == 1, "work for the server's epoll");
	ok(wcount_read(path, c0, sizeof(c0), WCOUNT_TIMEOUT_MS) == -ETIMEDOUT,
	   "through the server's epoll: the read blocks");
	ok(watch_drain(&w, why, sizeof(why)) > 0 && strstr(why, "epoll"),
	   why);
	ok(wcount_read(path, c0, sizeof(c0), WCOUNT_TIMEOUT_MS) >= 0,
	   "drained again: the read returns");
	watch_drop(&w);
	ok(nr_sources(sys) == ws1, "none after the attempt");

	/* the cost of an attempt's copies */
	t0 = now_ms();
	for (i = 0; i < 100; i++) {
		watch_add(&w, &wp);
		watch_drain(&w, NULL, 0);
		watch_drop(&w);
	}
	printf("# add+drain+drop of %d copies: %.0f us per attempt\n", 2,
	       (now_ms() - t0) * 10);
	{
		double ta = 0, td = 0, tp = 0, t;

		for (i = 0; i < 20; i++) {
			t = now_ms();
			watch_add(&w, &wp);
			ta += now_ms() - t;
			t = now_ms();
			watch_drain(&w, NULL, 0);
			td += now_ms() - t;
			t = now_ms();
			watch_drop(&w);
			tp += now_ms() - t;
		}
		printf("# of which add %.0f us, drain %.0f us, drop %.0f us; %lu scans\n",
		       ta * 50, td * 50, tp * 50, w.scans);
		t = now_ms();
		for (i = 0; i < 20; i++) {
			free(read_whole("/proc/net/tcp"));
			free(read_whole("/proc/net/tcp6"));
			free(read_whole("/proc/net/udp"));
			free(read_whole("/proc/net/udp6"));
		}
		printf("# of add: the four /proc/net tables %.0f us\n",
		       (now_ms() - t) * 50);
		{
			struct diag d;
			struct conn_count cc;

			diag_open(&d);
			t = now_ms();
			for (i = 0; i < 20; i++)
				diag_tcp_count(&d, &port, 1, 1000, &cc);
			printf("# a sock_diag TCP dump (v4+v6, busy states): %.0f us\n",
			       (now_ms() - t) * 50);
			diag_close(&d);
		}
	}
	ok(nr_sources(sys) == ws1, "no source left behind");

	/* where it goes: one epoll item, with and without a wakeup source */
	for (i = 0; i < 2; i++) {
		struct epoll_event ev = {
			.events = EPOLLIN | EPOLLET | (i ? EPOLLWAKEUP : 0),
		};
		int ep = epoll_create1(0), k;

		t0 = now_ms();
		for (k = 0; k < 100; k++) {
			epoll_ctl(ep, EPOLL_CTL_ADD, pair[0], &ev);
			epoll_ctl(ep, EPOLL_CTL_DEL, pair[0], NULL);
		}
		printf("# EPOLL_CTL_ADD+DEL %s EPOLLWAKEUP: %.0f us\n",
		       i ? "with" : "without", (now_ms() - t0) * 10);
		close(ep);
	}

	watch_close(&w);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("# %d passed, %d failed\n", n - failed, failed);
	return !!failed;
}
