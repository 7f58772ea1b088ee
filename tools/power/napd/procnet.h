/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsers for procfs text: /proc/net/tcp{,6} and /proc/interrupts.
 *
 * They take a NUL-terminated buffer and never touch the file system, so
 * the unit tests can feed them captured samples.
 */
#ifndef NAPD_PROCNET_H
#define NAPD_PROCNET_H

#include <stdbool.h>
#include <stddef.h>

/* TCP states as the kernel numbers them (include/net/tcp_states.h). */
enum {
	NAPD_TCP_ESTABLISHED = 1,
	NAPD_TCP_SYN_SENT,
	NAPD_TCP_SYN_RECV,
	NAPD_TCP_FIN_WAIT1,
	NAPD_TCP_FIN_WAIT2,
	NAPD_TCP_TIME_WAIT,
	NAPD_TCP_CLOSE,
	NAPD_TCP_CLOSE_WAIT,
	NAPD_TCP_LAST_ACK,
	NAPD_TCP_LISTEN,
	NAPD_TCP_CLOSING,
	NAPD_TCP_NEW_SYN_RECV,
	NAPD_TCP_BOUND_INACTIVE,
};

/* Does a socket in @state on a served port mean a request is in flight? */
bool tcp_state_busy(unsigned int state);

bool port_in_list(unsigned int port, const unsigned short *ports, int nr);

/*
 * Count the sockets in /proc/net/tcp or /proc/net/tcp6 text @buf whose
 * local port is in @ports and whose state is busy.  Returns the count, or
 * -1 if a line does not parse (a format we do not understand must not be
 * read as "idle").
 */
int procnet_tcp_busy(const char *buf, const unsigned short *ports, int nr);

/*
 * Collect into @irqs (at most @max) the numbered /proc/interrupts lines
 * whose action names (the last field, or the comma separated list of
 * names of a shared line) contain one of @names as a whole word.
 * Returns the number found.
 */
int procnet_irqs_by_name(const char *buf, const char *const names[],
			 int nr_names, unsigned int *irqs, int max);

/*
 * The next numbered line of /proc/interrupts text at *@pos (advanced past
 * it): its IRQ, the sum of its per-CPU counts (as many columns as the
 * header line names CPUs; pass *@ncpu 0 first, it is taken from the
 * header) and its action names ("virtio0-input.0", or "ttyS0, eth1" for
 * a shared line) into @names.  1 if a line was found, 0 at the end.
 */
int procnet_irq_next(const char **pos, int *ncpu, unsigned int *irq,
		     unsigned long long *count, char *names, size_t size);

/*
 * Count the sockets in /proc/net/udp or /proc/net/udp6 text @buf bound to
 * a port in @ports with data queued (tx_queue or rx_queue not zero).
 * Returns the count, or -1 if a line does not parse.
 */
int procnet_udp_busy(const char *buf, const unsigned short *ports, int nr);

/*
 * Of the @nr IRQs in @irqs, move the receive vectors to the front and
 * return how many there are: those whose /proc/interrupts action name
 * (in @buf) says so, "virtio0-input.0", "eth0-rx-0", "eth0-TxRx-3" (a
 * combined queue vector also receives).  0 when none can be told apart,
 * for example a single "eth0" line or a legacy IRQ.  The names found go
 * to @names (comma separated, cut to @size).
 */
int procnet_rx_vectors(const char *buf, unsigned int *irqs, int nr,
		       char *names, size_t size);

/*
 * The sum of rx_packets over every interface in /proc/net/dev text @buf.
 * 0, or -1 if a line does not parse.
 */
int procnet_dev_rx(const char *buf, unsigned long long *rx);

/*
 * TCP segments plus UDP datagrams received for sockets, from /proc/net/snmp
 * text @buf (Tcp InSegs less Tcp OutRsts, plus Udp InDatagrams, from the
 * header and value lines).  ARP, ICMP, SYNs to closed ports and datagrams
 * for no socket do not change it.  0, or -1 if a counter is missing.
 */
int procnet_snmp_in(const char *buf, unsigned long long *in);

/*
 * UDP datagrams received for IPv6 sockets, from /proc/net/snmp6 text @buf
 * (Udp6InDatagrams; IPv6 TCP is already in /proc/net/snmp).  0, or -1 if
 * the counter is missing.
 */
int procnet_snmp6_in(const char *buf, unsigned long long *in);

/* One socket line of /proc/net/{tcp,udp}{,6}, for watch.c. */
struct procnet_sock {
	unsigned int lport;
	unsigned int state;	/* NAPD_TCP_*; 7 (CLOSE) for a bound UDP socket */
	unsigned long inode;	/* 0: no file (a connection not yet accepted) */
};

/*
 * The next socket line of /proc/net/{tcp,udp}{,6} text at *@pos (advanced
 * past it) into @sk.  1 if one was found, 0 at the end, -1 if a line does
 * not parse.
 */
int procnet_sock_next(const char **pos, struct procnet_sock *sk);

#endif /* NAPD_PROCNET_H */
