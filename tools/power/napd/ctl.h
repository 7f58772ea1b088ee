/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The --status socket: a unix stream socket on which the daemon answers
 * every connection with one JSON line and closes it.
 */
#ifndef NAPD_CTL_H
#define NAPD_CTL_H

#include <stddef.h>
#include <stdio.h>

/*
 * Listen on @path.  A stale socket left by a killed napd is replaced; a
 * live one (it accepts connections) means another napd runs: error.
 * Returns the non-blocking fd, or -1 with a message in @err.
 */
int ctl_listen(const char *path, char *err, size_t errlen);

/* Answer every pending connection on @fd with @msg. */
void ctl_serve(int fd, const char *msg);

void ctl_close(int fd, const char *path);

/*
 * Connect to @path and copy the answer to @out, waiting at most
 * @timeout_s seconds.  0, or -errno.
 */
int ctl_query(const char *path, FILE *out, int timeout_s);

#endif /* NAPD_CTL_H */
