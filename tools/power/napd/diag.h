/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TCP connections on the served ports, busy or idle, with NETLINK_SOCK_DIAG;
 * and the served sockets for wake on task's watches.
 */
#ifndef NAPD_DIAG_H
#define NAPD_DIAG_H

#include <stdbool.h>
#include <stddef.h>

struct inet_diag_msg;
struct tcp_info;

struct diag {
	int fd;
};

/* What a dump found on the served ports. */
struct conn_count {
	int busy;	/* moving data, bytes queued, or not established */
	int idle;	/* established, quiet for the idle time: a kept-alive one */
};

/* Returns 0, or -errno when sock_diag is not available. */
int diag_open(struct diag *d);
void diag_close(struct diag *d);

/*
 * Count the IPv4 and IPv6 TCP sockets with a local port in @ports in a
 * state that means a peer (everything but LISTEN and TIME_WAIT) into @c:
 * idle if diag_conn_idle() says so for @idle_ms, busy otherwise.  0, or
 * -errno (e.g. -ENOENT without the tcp_diag module) so the caller can
 * fall back to /proc/net/tcp.
 */
int diag_tcp_count(struct diag *d, const unsigned short *ports, int nr,
		   unsigned long idle_ms, struct conn_count *c);

/*
 * Is this an idle kept-alive connection?  ESTABLISHED, nothing unread
 * (rqueue), unsent or unacknowledged (wqueue, tcpi_unacked), no request
 * read and left unanswered for up to 5 s (data received after the last
 * data sent, or data received and none ever sent), and no data received
 * or sent nor ACK received for at least @idle_ms.  @ti is the
 * INET_DIAG_INFO attribute of @len bytes, NULL if there was none: then
 * it is busy, as is anything we cannot read.
 */
bool diag_conn_idle(const struct inet_diag_msg *m, const struct tcp_info *ti,
		    size_t len, unsigned long idle_ms);

struct procnet_sock;
typedef void (*diag_sock_fn)(const struct procnet_sock *sk, void *ctx);

/*
 * Each IPv4 and IPv6 socket of @protocol (IPPROTO_TCP, IPPROTO_UDP) in
 * one of @states (a mask of 1 << NAPD_TCP_*) through @fn: its local port,
 * state and inode, as /proc/net/tcp shows them, at a fraction of the
 * cost (no text; 0.6 against 8.8 ms for the four tables in a TCG guest).
 * 0, or -errno (-ENOENT without the tcp_diag or udp_diag module).
 */
int diag_socks(struct diag *d, int protocol, unsigned int states,
	       diag_sock_fn fn, void *ctx);

/*
 * Account one recv() worth of SOCK_DIAG_BY_FAMILY replies in @buf into
 * @c.  Returns 1 at the end of the dump, 0 if more is to come, -errno
 * for an error reply.  Pure, for the tests.
 */
int diag_parse(const void *buf, size_t len, const unsigned short *ports,
	       int nr, unsigned long idle_ms, struct conn_count *c);

#endif /* NAPD_DIAG_H */
