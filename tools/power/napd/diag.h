/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Count busy TCP connections on the served ports with NETLINK_SOCK_DIAG.
 */
#ifndef NAPD_DIAG_H
#define NAPD_DIAG_H

#include <stddef.h>

struct diag {
	int fd;
};

/* Returns 0, or -errno when sock_diag is not available. */
int diag_open(struct diag *d);
void diag_close(struct diag *d);

/*
 * Number of IPv4 and IPv6 TCP sockets with a local port in @ports in a
 * busy state, or -errno (e.g. -ENOENT without the tcp_diag module) so the
 * caller can fall back to /proc/net/tcp.
 */
int diag_tcp_busy(struct diag *d, const unsigned short *ports, int nr);

/*
 * Account one recv() worth of SOCK_DIAG_BY_FAMILY replies in @buf:
 * busy sockets are added to @busy.  Returns 1 at the end of the dump, 0
 * if more is to come, -errno for an error reply.  Pure, for the tests.
 */
int diag_parse(const void *buf, size_t len, const unsigned short *ports,
	       int nr, int *busy);

#endif /* NAPD_DIAG_H */
