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
#include <stdbool.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "compiler.h"
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

/*
 * Run @argv (argv[0] looked up in PATH) with stdout into @buf, within
 * @timeout_ms.  0, or -errno (-EPROTO for a failed exit status).
 */
static int run_capture(char *const argv[], char *buf, size_t size,
		       int timeout_ms)
{
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
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	ret = read_all(pfd[0], buf, size, timeout_ms);
	close(pfd[0]);
	if (ret)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (ret)
		return ret;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -EPROTO;
	return 0;
}

int timers_query(const char *systemctl, unsigned long long now_us,
		 int timeout_ms, unsigned long long *next_us)
{
	static char buf[256 * 1024];	/* ~150 bytes a timer */
	char *const argv[] = { (char *)systemctl, "--output=json",
			       "--no-pager", "list-timers", "--all", NULL };
	int ret = run_capture(argv, buf, sizeof(buf), timeout_ms);

	if (ret)
		return ret;
	return timers_parse_json(buf, now_us, next_us) ? -EPROTO : 0;
}

int timespan_parse_us(const char *s, unsigned long long *us)
{
	static const struct {
		const char *suffix;
		unsigned long long us;
	} units[] = {
		/* longest first: "ms" before "m", "min" before "m" */
		{ "month", 2629800000000ULL }, { "min", 60000000ULL },
		{ "ms", 1000ULL }, { "us", 1ULL }, { "\xc2\xb5s", 1ULL },
		{ "y", 31557600000000ULL }, { "w", 604800000000ULL },
		{ "d", 86400000000ULL }, { "h", 3600000000ULL },
		{ "s", 1000000ULL },
	};
	unsigned long long total = 0;
	bool any = false;

	while (*s == ' ')
		s++;
	if (!strncmp(s, "infinity", 8) && (!s[8] || s[8] == '\n')) {
		*us = 0;
		return 0;
	}
	while (*s && *s != '\n') {
		unsigned long long whole, frac = 0, scale = 1;
		unsigned int i;
		char *end;

		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		whole = strtoull(s, &end, 10);
		if (errno)
			return -1;
		s = end;
		if (*s == '.') {
			for (s++; *s >= '0' && *s <= '9'; s++) {
				if (scale < 1000000000ULL) {
					frac = frac * 10 + (*s - '0');
					scale *= 10;
				}
			}
		}
		/* a bare number: "0", or microseconds, the property's unit */
		if (!*s || *s == ' ' || *s == '\n') {
			total += whole;
		} else {
			for (i = 0; i < ARRAY_SIZE(units); i++)
				if (!strncmp(s, units[i].suffix,
					     strlen(units[i].suffix)))
					break;
			if (i == ARRAY_SIZE(units))
				return -1;
			s += strlen(units[i].suffix);
			if (*s && *s != ' ' && *s != '\n')
				return -1;
			total += whole * units[i].us +
				 frac * units[i].us / scale;
		}
		any = true;
		while (*s == ' ')
			s++;
	}
	if (!any)
		return -1;
	*us = total;
	return 0;
}

/* The value of "@key=" in the record from @rec to @end, or NULL. */
static const char *rec_value(const char *rec, const char *end,
			     const char *key, size_t *len)
{
	size_t klen = strlen(key);
	const char *p = rec;

	while (p && p < end) {
		const char *nl = memchr(p, '\n', end - p);

		if (!strncmp(p, key, klen) && p[klen] == '=') {
			*len = (nl ? nl : end) - (p + klen + 1);
			return p + klen + 1;
		}
		p = nl ? nl + 1 : NULL;
	}
	return NULL;
}

int watchdog_parse_show(const char *text, unsigned long long *min_us,
			char *unit, size_t size)
{
	const char *rec = text;

	*min_us = 0;
	if (size)
		unit[0] = '\0';
	while (*rec) {
		const char *end = strstr(rec, "\n\n"), *id, *state, *wd;
		size_t id_len, state_len, wd_len;
		unsigned long long us;
		char span[64];

		if (!end)
			end = rec + strlen(rec);
		id = rec_value(rec, end, "Id", &id_len);
		state = rec_value(rec, end, "ActiveState", &state_len);
		wd = rec_value(rec, end, "WatchdogUSec", &wd_len);
		if (!id && !state && !wd) {
			/* blank lines between records, or not ours */
			for (; rec < end; rec++)
				if (*rec != '\n' && *rec != ' ')
					return -1;
		} else {
			if (!wd || wd_len >= sizeof(span))
				return -1;
			memcpy(span, wd, wd_len);
			span[wd_len] = '\0';
			if (timespan_parse_us(span, &us))
				return -1;
			if (us && state &&
			    ((state_len == 6 && !strncmp(state, "active", 6)) ||
			     (state_len == 10 && !strncmp(state, "activating", 10)) ||
			     (state_len == 9 && !strncmp(state, "reloading", 9))) &&
			    (!*min_us || us < *min_us)) {
				*min_us = us;
				if (size)
					snprintf(unit, size, "%.*s",
						 id ? (int)id_len : 1,
						 id ? id : "?");
			}
		}
		rec = end;
		while (*rec == '\n')
			rec++;
	}
	return 0;
}

int watchdog_query(const char *systemctl, int timeout_ms,
		   unsigned long long *min_us, char *unit, size_t size)
{
	static char buf[256 * 1024];	/* ~80 bytes a unit */
	char *const argv[] = { (char *)systemctl, "--no-pager", "show",
			       "--property=Id,ActiveState,WatchdogUSec",
			       "*.service", NULL };
	int ret = run_capture(argv, buf, sizeof(buf), timeout_ms);

	if (ret)
		return ret;
	return watchdog_parse_show(buf, min_us, unit, size) ? -EPROTO : 0;
}
