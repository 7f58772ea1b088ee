// SPDX-License-Identifier: GPL-2.0
/*
 * sock_diag TCP dump.
 *
 * This runs every few milliseconds while the machine is awake, so it asks
 * the kernel only for the states that mean work and keeps one netlink
 * socket open.  The port filter is applied here rather than with inet_diag
 * bytecode: it is simpler and the dump is small on an idle machine, which
 * is the only time the cost matters.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

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

int diag_parse(const void *buf, size_t len, const unsigned short *ports,
	       int nr, int *busy)
{
	const struct nlmsghdr *h;
	int left = len;

	for (h = buf; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
		const struct inet_diag_msg *m;

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
		if (tcp_state_busy(m->idiag_state) &&
		    port_in_list(ntohs(m->id.idiag_sport), ports, nr))
			(*busy)++;
	}
	return 0;
}

static int dump_family(struct diag *d, int family,
		       const unsigned short *ports, int nr)
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
		},
	};
	struct sockaddr_nl nladdr = { .nl_family = AF_NETLINK };
	long buf[8192 / sizeof(long)];	/* aligned for nlmsghdr */
	int busy = 0, ret = 0;

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
		ret = diag_parse(buf, len, ports, nr, &busy);
		if (ret < 0) {
			/* Leftovers would poison the next dump. */
			diag_close(d);
			return ret;
		}
	} while (!ret);
	return busy;
}

int diag_tcp_busy(struct diag *d, const unsigned short *ports, int nr)
{
	int v4, v6;

	if (d->fd < 0)
		return -EBADF;
	v4 = dump_family(d, AF_INET, ports, nr);
	if (v4 < 0)
		return v4;
	v6 = dump_family(d, AF_INET6, ports, nr);
	if (v6 < 0)
		return v6;
	return v4 + v6;
}
