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

#endif /* NAPD_PROCNET_H */
