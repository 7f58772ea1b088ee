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

bool diag_conn_idle(const struct inet_diag_msg *m, const struct tcp_info *ti,
		    size_t len, unsigned long idle_ms)
{
	if (m->idiag_state != NAPD_TCP_ESTABLISHED || !ti ||
	    len < TCP_INFO_NEED)
		return false;
	/* A request not yet read, or an answer not yet delivered. */
	if (m->idiag_rqueue || m->idiag_wqueue || ti->tcpi_unacked)
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

int diag_parse(const void *buf, size_t len, const unsigned short *ports,
	       int nr, unsigned long idle_ms, struct conn_count *c)
{
	const struct nlmsghdr *h;
	int left = len;

	for (h = buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		const struct inet_diag_msg *m;
		const struct tcp_info *ti;
		size_t ti_len;

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
		    h->nlmsg_len < NLMSG_LENGTH(sizeof(*m)))
			return -EIO;
		m = NLMSG_DATA(h);
		if (!tcp_state_busy(m->idiag_state) ||
		    !port_in_list(ntohs(m->id.idiag_sport), ports, nr))
			continue;
		ti = tcp_info_of(h, m, &ti_len);
		if (diag_conn_idle(m, ti, ti_len, idle_ms))
			c->idle++;
		else
			c->busy++;
	}
	return 0;
}

static int dump_family(struct diag *d, int family,
		       const unsigned short *ports, int nr,
		       unsigned long idle_ms, struct conn_count *c)
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
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_states = busy_states(),
			.idiag_ext = 1 << (INET_DIAG_INFO - 1),
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
		ret = diag_parse(buf, len, ports, nr, idle_ms, c);
		if (ret < 0) {
			/* Leftovers would poison the next dump. */
			diag_close(d);
			return ret;
		}
	} while (!ret);
	return 0;
}

int diag_tcp_count(struct diag *d, const unsigned short *ports, int nr,
		   unsigned long idle_ms, struct conn_count *c)
{
	int ret;

	c->busy = c->idle = 0;
	if (d->fd < 0)
		return -EBADF;
	ret = dump_family(d, AF_INET, ports, nr, idle_ms, c);
	if (!ret)
		ret = dump_family(d, AF_INET6, ports, nr, idle_ms, c);
	return ret;
}
