// SPDX-License-Identifier: GPL-2.0
/*
 * The next systemd timer, from `systemctl --output=json list-timers`.
 *
 * sd-bus would be the direct way, but napd is a static binary (it runs
 * from a busybox initramfs too) and libsystemd comes as a shared library
 * only.  One systemctl run costs ~10 ms of CPU; napd asks once a minute
 * and when the timer it knows of has come due, so that is a few in a
 * thousand of one CPU at most, and nothing while the machine naps.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "timers.h"

bool timers_systemd_booted(const char *run)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/systemd/system", run);
	return !lstat(path, &st) && S_ISDIR(st.st_mode);
}

int timers_parse_json(const char *json, unsigned long long now_us,
		      unsigned long long *next_us)
{
	const char *p = json;

	*next_us = 0;
	while (*p == ' ' || *p == '\n' || *p == '\t')
		p++;
	if (*p != '[')
		return -1;
	/* [{"next":1589485390891904,"left":...,"unit":"a.timer",...},...] */
	while ((p = strstr(p, "\"next\""))) {
		unsigned long long v;
		char *end;

		p += 6;
		while (*p == ' ')
			p++;
		if (*p++ != ':')
			return -1;
		while (*p == ' ')
			p++;
		if (!strncmp(p, "null", 4))
			continue;
		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno)
			return -1;
		p = end;
		if (v > now_us && (!*next_us || v < *next_us))
			*next_us = v;
	}
	return 0;
}

/* Read @fd to EOF into @buf (NUL-terminated) within @timeout_ms. */
static int read_all(int fd, char *buf, size_t size, int timeout_ms)
{
	struct timespec t0, t;
	size_t len = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long left;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 +
				     (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, left);
		if (n < 0 && errno == EINTR)
			return -EINTR;
		if (n < 0)
			return -errno;
		if (!n)
			return -ETIMEDOUT;
		if (len + 1 >= size)
			return -E2BIG;
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;
		len += n;
	}
	buf[len] = '\0';
	return 0;
}

int timers_query(const char *systemctl, unsigned long long now_us,
		 int timeout_ms, unsigned long long *next_us)
{
	static char buf[256 * 1024];	/* ~150 bytes a timer */
	int pfd[2], status, ret;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return ret;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		dup2(pfd[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		/* napd ignores SIGPIPE; systemctl should not */
		signal(SIGPIPE, SIG_DFL);
		execlp(systemctl, systemctl, "--output=json", "--no-pager",
		       "list-timers", "--all", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	ret = read_all(pfd[0], buf, sizeof(buf), timeout_ms);
	close(pfd[0]);
	if (ret)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (ret)
		return ret;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -EPROTO;
	return timers_parse_json(buf, now_us, next_us) ? -EPROTO : 0;
}
