// SPDX-License-Identifier: GPL-2.0
/*
 * napd's status socket.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include "notify.h"
#include "ctl.h"
#include "sysfs.h"

static int fill_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	return path_fmt(sa->sun_path, sizeof(sa->sun_path), "%s", path);
}

int ctl_listen(const char *path, gid_t gid, bool *shared, char *err,
	       size_t errlen)
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
	/*
	 * connect() needs write permission on the socket file: the group's
	 * members may ask and pause, nobody else (the unit's UMask= would
	 * leave it root's only; chmod sets it whatever the umask).
	 */
	*shared = false;
	if (gid != (gid_t)-1) {
		if (chown(path, -1, gid))
			snprintf(err, errlen,
				 "cannot give %s to group %ld: %s%s", path,
				 (long)gid, strerror(errno),
				 errno == EPERM ?
				 " (napd needs CAP_CHOWN and the chown system calls)" :
				 "");
		else
			*shared = true;
	}
	if (chmod(path, *shared ? 0660 : 0600)) {
		snprintf(err, errlen, "cannot chmod %s: %s", path,
			 strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

/*
 * The request line of connection @c: the client sends it right after
 * connecting, so wait a little for it; a client that sends nothing (an
 * old --status, a liveness probe) gets the status after that.
 */
#define CTL_REQUEST_WAIT_MS	100

static void read_request(int c, char *req, size_t size)
{
	struct pollfd pfd = { .fd = c, .events = POLLIN };
	size_t len = 0;

	while (len + 1 < size && poll(&pfd, 1, CTL_REQUEST_WAIT_MS) > 0) {
		ssize_t n = recv(c, req + len, size - 1 - len, MSG_DONTWAIT);

		if (n <= 0)
			break;
		len += n;
		if (memchr(req + len - n, '\n', n))
			break;
	}
	req[len] = '\0';
	req[strcspn(req, "\r\n")] = '\0';
}

void ctl_serve(int fd, void (*handle)(void *ctx, const char *req,
				      char *answer, size_t size),
	       void *ctx)
{
	char req[128], answer[2048];
	int c;

	while ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		read_request(c, req, sizeof(req));
		handle(ctx, req, answer, sizeof(answer));
		/* The answer fits the socket buffer: this does not block. */
		/* A client that hung up (a liveness probe) is no error. */
		if (send(c, answer, strlen(answer),
			 MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
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

int ctl_query(const char *path, const char *req, FILE *out, int timeout_s)
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
	/* Then EOF: napd answers at once, without waiting for more. */
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0 ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) < 0 || shutdown(fd, SHUT_WR)) {
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

long ctl_group_gid(const char *group_file, const char *name)
{
	char line[1024];
	size_t nlen = strlen(name);
	long gid = -1;
	FILE *f = fopen(group_file, "re");

	if (!f)
		return -1;
	/* name:password:gid:members */
	while (gid < 0 && fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, name, nlen) || line[nlen] != ':')
			continue;
		p = strchr(line + nlen + 1, ':');
		if (!p)
			continue;
		gid = strtol(p + 1, &end, 10);
		if (end == p + 1 || *end != ':' || gid < 0)
			gid = -1;
	}
	fclose(f);
	return gid;
}

void ctl_group_name(const char *group_file, long gid, char *buf, size_t size)
{
	char line[1024];
	FILE *f = fopen(group_file, "re");

	snprintf(buf, size, "gid %ld", gid);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2, *end;

		c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		if (strtol(c2 + 1, &end, 10) == gid && end != c2 + 1 &&
		    *end == ':') {
			snprintf(buf, size, "%.*s", (int)(c1 - line), line);
			break;
		}
	}
	fclose(f);
}

void ctl_explain(const char *path, int err, int timeout_s, char *buf,
		 size_t size)
{
	struct stat st;
	char group[64];

	switch (-err) {
	case ENOENT:
		snprintf(buf, size,
			 "%s does not exist: napd is not running, or listens on another --status-socket",
			 path);
		return;
	case ECONNREFUSED:
		snprintf(buf, size,
			 "nobody listens on %s: napd is not running (a killed napd left the socket)",
			 path);
		return;
	case EACCES:
	case EPERM:
		if (stat(path, &st)) {
			snprintf(buf, size, "permission denied on %s", path);
			return;
		}
		ctl_group_name("/etc/group", st.st_gid, group, sizeof(group));
		if (st.st_mode & 020)
			snprintf(buf, size,
				 "permission denied on %s (mode %04o, group %s): run as root or as a member of group %s",
				 path, st.st_mode & 07777, group, group);
		else
			snprintf(buf, size,
				 "permission denied on %s (mode %04o): root only; set socket-group in napd's settings to let a group in",
				 path, st.st_mode & 07777);
		return;
	case ETIMEDOUT:
		snprintf(buf, size,
			 "napd did not answer on %s within %d s (it answers between naps; is it stuck?)",
			 path, timeout_s);
		return;
	}
	snprintf(buf, size, "no answer from %s: %s", path, strerror(-err));
}
