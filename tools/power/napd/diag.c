// SPDX-License-Identifier: GPL-2.0
/*
 * sock_diag TCP dump.
 *
 * This runs once per nap attempt, so it asks the kernel only for the
 * states that mean a peer and keeps one netlink socket open.  The port
 * filter is applied here rather than with inet_diag bytecode: it is
 * simpler and the dump is small on an idle machine, which is the only
 * time the cost matters.
 *
 * An open connection is not work by itself: load balancers, connection
 * pools and HTTP/2 keep connections open for minutes between requests.
 * tcp_info (INET_DIAG_INFO) says when data last moved and the queues say
 * whether any is waiting, so a kept-alive connection that is quiet counts
 * as idle.  The request that comes on it later is a wakeup event like a
 * new connection (the armed NIC, or wake on work).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>

#include "diag.h"
#include "procnet.h"

int diag_open(struct diag *d)
{
	d->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
		       NETLINK_SOCK_DIAG);
	return d->fd < 0 ? -errno : 0;
}

void diag_close(struct diag *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

static unsigned int busy_states(void)
{
	unsigned int s, mask = 0;

	for (s = NAPD_TCP_ESTABLISHED; s <= NAPD_TCP_NEW_SYN_RECV; s++)
		if (tcp_state_busy(s))
			mask |= 1U << s;
	return mask;
}

/* The tcp_info fields we read, present since Linux 2.6. */
#define TCP_INFO_NEED	(offsetof(struct tcp_info, tcpi_last_ack_recv) + \
			 sizeof(((struct tcp_info *)0)->tcpi_last_ack_recv))

/*
 * Data received after the last data sent is a request the server has read
 * and not answered yet: it may be waiting for a backend, a disk or a timer,
 * and a nap would freeze it with nothing to end the nap when that wait is
 * over.  For this long at most, the default max-nap: past it the client is
 * taken to have had the last word (a WebSocket pong, an HTTP/2 PING ACK,
 * SSH's window adjust, a one-way log stream) and naps go on; a request
 * that takes longer is late by at most one max-nap.
 */
#define ANSWER_OWED_MAX_MS	5000U

/* tcpi_data_segs_in and _out, since Linux 4.6. */
#define TCP_INFO_SEGS	(offsetof(struct tcp_info, tcpi_data_segs_out) + \
			 sizeof(((struct tcp_info *)0)->tcpi_data_segs_out))

/*
 * The times are in jiffies: a request that comes in the jiffy of the last
 * answer, or of the handshake (a new connection's last "send"), looks no
 * newer than it.  A connection that received data and never sent any owes
 * an answer whatever the times say.
 */
static bool answer_owed(const struct tcp_info *ti, size_t len)
{
	if (ti->tcpi_last_data_recv >= ANSWER_OWED_MAX_MS)
		return false;
	if (ti->tcpi_last_data_recv < ti->tcpi_last_data_sent)
		return true;
	return len >= TCP_INFO_SEGS && ti->tcpi_data_segs_in &&
	       !ti->tcpi_data_segs_out;
}

bool diag_conn_idle(const struct inet_diag_msg *m, const struct tcp_info *ti,
		    size_t len, unsigned long idle_ms)
{
	if (m->idiag_state != NAPD_TCP_ESTABLISHED || !ti ||
	    len < TCP_INFO_NEED)
		return false;
	/* A request not yet read, or an answer not yet delivered. */
	if (m->idiag_rqueue || m->idiag_wqueue || ti->tcpi_unacked)
		return false;
	/* A request read and not answered yet. */
	if (answer_owed(ti, len))
		return false;
	return ti->tcpi_last_data_recv >= idle_ms &&
	       ti->tcpi_last_data_sent >= idle_ms &&
	       ti->tcpi_last_ack_recv >= idle_ms;
}

/* The INET_DIAG_INFO attribute after @m in @h, or NULL. */
static const struct tcp_info *tcp_info_of(const struct nlmsghdr *h,
					  const struct inet_diag_msg *m,
					  size_t *len)
{
	const struct rtattr *a = (const struct rtattr *)(m + 1);
	int left = h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));

	for (; RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		if (a->rta_type == INET_DIAG_INFO) {
			*len = RTA_PAYLOAD(a);
			return RTA_DATA(a);
		}
	}
	*len = 0;
	return NULL;
}

/* Each message of a reply: 0 to go on, or -errno. */
typedef int (*diag_msg_fn)(const struct nlmsghdr *h,
			   const struct inet_diag_msg *m, void *ctx);

/*
 * Walk one recv() worth of SOCK_DIAG_BY_FAMILY replies in @buf.  1 at
 * the end of the dump, 0 if more is to come, -errno for an error reply.
 */
static int walk(const void *buf, size_t len, diag_msg_fn fn, void *ctx)
{
	const struct nlmsghdr *h;
	int left = len, ret;

	for (h = buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		if (h->nlmsg_type == NLMSG_DONE)
			return 1;
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
				return -EIO;
			/* An error reply ends the dump. */
			return e->error ? e->error : -EIO;
		}
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
		    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
			return -EIO;
		ret = fn(h, NLMSG_DATA(h), ctx);
		if (ret)
			return ret;
	}
	return 0;
}

struct count_ctx {
	const unsigned short *ports;
	int nr;
	unsigned long idle_ms;
	struct conn_count *c;
};

static int count_msg(const struct nlmsghdr *h, const struct inet_diag_msg *m,
		     void *ctx)
{
	struct count_ctx *cc = ctx;
	const struct tcp_info *ti;
	size_t ti_len;

	if (!tcp_state_busy(m->idiag_state) ||
	    !port_in_list(ntohs(m->id.idiag_sport), cc->ports, cc->nr))
		return 0;
	ti = tcp_info_of(h, m, &ti_len);
	if (diag_conn_idle(m, ti, ti_len, cc->idle_ms))
		cc->c->idle++;
	else
		cc->c->busy++;
	return 0;
}

int diag_parse(const void *buf, size_t len, const unsigned short *ports,
	       int nr, unsigned long idle_ms, struct conn_count *c)
{
	struct count_ctx cc = { ports, nr, idle_ms, c };

	return walk(buf, len, count_msg, &cc);
}

/* One dump of @family/@protocol sockets in @states through @fn. */
static int dump_family(struct diag *d, int family, int protocol,
		       unsigned int states, unsigned char ext,
		       diag_msg_fn fn, void *ctx)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		},
		.req = {
			.sdiag_family = family,
			.sdiag_protocol = protocol,
			.idiag_states = states,
			.idiag_ext = ext,
		},
	};
	struct sockaddr_nl nladdr = { .nl_family = AF_NETLINK };
	long buf[8192 / sizeof(long)];	/* aligned for nlmsghdr */
	int ret = 0;

	if (sendto(d->fd, &msg, sizeof(msg), 0, (struct sockaddr *)&nladdr,
		   sizeof(nladdr)) < 0)
		return -errno;

	do {
		ssize_t len = recv(d->fd, buf, sizeof(buf), 0);

		if (len < 0 && errno == EINTR)
			continue;	/* finish the dump; the caller checks */
		if (len < 0)
			return -errno;
		if (len == 0)
			return -EIO;
		ret = walk(buf, len, fn, ctx);
		if (ret < 0) {
			/* Leftovers would poison the next dump. */
			diag_close(d);
			return ret;
		}
	} while (!ret);
	return 0;
}

/* IPv4, then IPv6. */
static int dump(struct diag *d, int protocol, unsigned int states,
		unsigned char ext, diag_msg_fn fn, void *ctx)
{
	int ret;

	if (d->fd < 0)
		return -EBADF;
	ret = dump_family(d, AF_INET, protocol, states, ext, fn, ctx);
	if (!ret)
		ret = dump_family(d, AF_INET6, protocol, states, ext, fn, ctx);
	return ret;
}

int diag_tcp_count(struct diag *d, const unsigned short *ports, int nr,
		   unsigned long idle_ms, struct conn_count *c)
{
	struct count_ctx cc = { ports, nr, idle_ms, c };

	c->busy = 0;
	c->idle = 0;
	return dump(d, IPPROTO_TCP, busy_states(),
		    1 << (INET_DIAG_INFO - 1), count_msg, &cc);
}

struct socks_ctx {
	diag_sock_fn fn;
	void *ctx;
};

static int sock_msg(const struct nlmsghdr *h, const struct inet_diag_msg *m,
		    void *ctx)
{
	struct socks_ctx *sc = ctx;
	struct procnet_sock sk = {
		.lport = ntohs(m->id.idiag_sport),
		.state = m->idiag_state,
		.inode = m->idiag_inode,
	};

	(void)h;
	sc->fn(&sk, sc->ctx);
	return 0;
}

int diag_socks(struct diag *d, int protocol, unsigned int states,
	       diag_sock_fn fn, void *ctx)
{
	struct socks_ctx sc = { fn, ctx };

	return dump(d, protocol, states, 0, sock_msg, &sc);
}
