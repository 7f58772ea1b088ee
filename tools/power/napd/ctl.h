/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The status and control socket: a unix stream socket.  A client sends
 * one request line ("status", "pause MS", "pause", "resume"; nothing at
 * all means status), shuts down its writing side, and gets one JSON line
 * back; then the daemon closes the connection.
 */
#ifndef NAPD_CTL_H
#define NAPD_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#define NAPD_SOCKET_GROUP_DEFAULT	"napd"

/*
 * Listen on @path, mode 0660 with group @gid, or 0600 (root only) if
 * @gid is -1 or the group cannot be given: then *@shared is false, with
 * the reason in @err.  A stale socket left by a killed napd is replaced;
 * a live one (it accepts connections) means another napd runs: error.
 * Returns the non-blocking fd, or -1 with a message in @err.
 */
int ctl_listen(const char *path, gid_t gid, bool *shared, char *err,
	       size_t errlen);

/*
 * Answer every pending connection on @fd: @handle gets the request line
 * (without its newline; "" when the client sent none) and writes the
 * answer to @answer.
 */
void ctl_serve(int fd, void (*handle)(void *ctx, const char *req,
				      char *answer, size_t size),
	       void *ctx);

void ctl_close(int fd, const char *path);

/*
 * Connect to @path, send @req, and copy the answer to @out, waiting at
 * most @timeout_s seconds.  0, or -errno.
 */
int ctl_query(const char *path, const char *req, FILE *out, int timeout_s);

/*
 * What a failed ctl_query() (-@err) means for @path, in words a user can
 * act on: who may use the socket, whether napd runs.
 */
void ctl_explain(const char *path, int err, int timeout_s, char *buf,
		 size_t size);

/*
 * The id of group @name in @group_file (/etc/group), or -1.  Parsed by
 * hand: napd is static and glibc's getgrnam() would need NSS modules.
 */
long ctl_group_gid(const char *group_file, const char *name);

/* The name of group @gid in @group_file into @buf, or "gid N". */
void ctl_group_name(const char *group_file, long gid, char *buf,
		    size_t size);

#endif /* NAPD_CTL_H */
