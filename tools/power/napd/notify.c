// SPDX-License-Identifier: GPL-2.0
/*
 * sd_notify() for napd, for Type=notify services, and log lines with
 * journal priorities.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "notify.h"

int notify_format(char *buf, size_t size, bool ready, bool stopping,
		  const char *status)
{
	size_t len;
	int n;

	n = snprintf(buf, size, "%s%s", ready ? "READY=1\n" : "",
		     stopping ? "STOPPING=1\n" : "");
	if (n < 0 || (size_t)n >= size)
		return -1;
	len = n;
	if (status) {
		size_t i, start;

		n = snprintf(buf + len, size - len, "STATUS=%s\n", status);
		if (n < 0 || (size_t)n >= size - len)
			return -1;
		/* One line per key: a newline in the text would end it. */
		start = len + strlen("STATUS=");
		for (i = start; i < len + n - 1; i++)
			if (buf[i] == '\n')
				buf[i] = ' ';
		len += n;
	}
	return len;
}

int notify_send(const char *path, const char *msg)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t plen = strlen(path);
	socklen_t salen;
	ssize_t n;
	int fd, err = 0;

	if ((path[0] != '/' && path[0] != '@') || plen < 2 ||
	    plen >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, plen);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	/* Abstract names are not NUL terminated: the length is exact. */
	salen = offsetof(struct sockaddr_un, sun_path) + plen +
		(path[0] == '/');

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL,
		   (struct sockaddr *)&sa, salen);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != strlen(msg))
		err = -EIO;
	close(fd);
	return err;
}

int notify(bool ready, bool stopping, const char *status)
{
	const char *path = getenv("NOTIFY_SOCKET");
	char msg[512];

	if (!path || !*path)
		return 0;
	if (notify_format(msg, sizeof(msg), ready, stopping, status) < 0)
		return -E2BIG;
	return notify_send(path, msg);
}

bool journal_stream_is(int fd, const char *env)
{
	unsigned long long dev, ino;
	struct stat st;
	int end = 0;

	if (!env || sscanf(env, "%llu:%llu%n", &dev, &ino, &end) != 2 ||
	    env[end] || fstat(fd, &st))
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

static bool to_journal(void)
{
	static int journal = -1;

	if (journal < 0)
		journal = journal_stream_is(2, getenv("JOURNAL_STREAM"));
	return journal;
}

const char *log_prio(int prio)
{
	static const char *const pfx[] = {
		"<0>", "<1>", "<2>", "<3>", "<4>", "<5>", "<6>", "<7>",
	};

	return to_journal() ? pfx[LOG_PRI(prio)] : "";
}

const char *log_prefix(int prio)
{
	return to_journal() ? log_prio(prio) : "napd: ";
}

void napd_log(int prio, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One write per line, so lines of a pipe do not interleave. */
	fprintf(stderr, "%s%s\n", log_prefix(prio), line);
}
