// SPDX-License-Identifier: GPL-2.0
/*
 * napd's status socket.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include "notify.h"
#include "ctl.h"

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

int ctl_listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd;

	if (fill_addr(&sa, path)) {
		snprintf(err, errlen, "status socket path too long: %s", path);
		return -1;
	}
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen,
				 "%s exists and is not a socket", path);
			return -1;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa,
					sizeof(sa))) {
			close(fd);
			snprintf(err, errlen,
				 "another napd is running (%s answers)", path);
			return -1;
		}
		if (fd >= 0)
			close(fd);
		unlink(path);	/* left behind by a napd that was killed */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 8)) {
		snprintf(err, errlen, "cannot listen on %s: %s", path,
			 strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

void ctl_serve(int fd, const char *msg)
{
	int c;

	while ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		/* The answer fits the socket buffer: this does not block. */
		/* A client that hung up (a liveness probe) is no error. */
		if (send(c, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
		    errno != EPIPE && errno != ECONNRESET)
			napd_log(LOG_WARNING, "status answer failed: %s",
				strerror(errno));
		close(c);
	}
}

void ctl_close(int fd, const char *path)
{
	if (fd < 0)
		return;
	close(fd);
	unlink(path);
}

int ctl_query(const char *path, FILE *out, int timeout_s)
{
	struct timeval tv = { .tv_sec = timeout_s };
	struct sockaddr_un sa;
	char buf[4096];
	ssize_t n;
	int fd, err = 0, got = 0;

	if (fill_addr(&sa, path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		fwrite(buf, 1, n, out);
		got = 1;
	}
	if (n < 0)
		err = errno == EAGAIN ? -ETIMEDOUT : -errno;
	else if (!got)
		err = -ECONNRESET;
	close(fd);
	return err;
}
