// SPDX-License-Identifier: GPL-2.0
/*
 * Parsers for /proc/net/tcp{,6} and /proc/interrupts text.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "procnet.h"

/*
 * LISTEN is the server waiting, TIME_WAIT is a finished connection the
 * kernel remembers: neither is work.  BOUND_INACTIVE is inet_diag's name
 * for a bound socket that never did anything.  Every other state, even the
 * closing ones, still has a peer talking to us.
 */
bool tcp_state_busy(unsigned int state)
{
	return state >= NAPD_TCP_ESTABLISHED &&
	       state <= NAPD_TCP_NEW_SYN_RECV &&
	       state != NAPD_TCP_LISTEN && state != NAPD_TCP_TIME_WAIT;
}

bool port_in_list(unsigned int port, const unsigned short *ports, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (ports[i] == port)
			return true;
	return false;
}

/* Point @line at the next line of @*pos (not NUL terminated). */
static bool next_line(const char **pos, const char **line, size_t *len)
{
	const char *s = *pos, *nl;

	if (!*s)
		return false;
	nl = strchr(s, '\n');
	*len = nl ? (size_t)(nl - s) : strlen(s);
	*line = s;
	*pos = nl ? nl + 1 : s + *len;
	return true;
}

/* The same, copied and terminated; long lines are cut to @size - 1. */
static bool copy_line(const char **pos, char *buf, size_t size)
{
	const char *line;
	size_t len;

	if (!next_line(pos, &line, &len))
		return false;
	if (len >= size)
		len = size - 1;	/* the fields we want are at the front */
	memcpy(buf, line, len);
	buf[len] = '\0';
	return true;
}

static bool blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s;
}

int procnet_tcp_busy(const char *buf, const unsigned short *ports, int nr)
{
	char line[512], laddr[40], raddr[40];
	unsigned int lport, rport, state;
	int busy = 0;

	while (copy_line(&buf, line, sizeof(line))) {
		if (blank(line) || strstr(line, "local_address"))
			continue;
		/*
		 * "   0: 0100007F:0050 00000000:0000 0A ..." and the same with
		 * 32 hex digit addresses in tcp6.
		 */
		if (sscanf(line, " %*u: %39[0-9A-Fa-f]:%x %39[0-9A-Fa-f]:%x %x",
			   laddr, &lport, raddr, &rport, &state) != 5)
			return -1;
		if ((strlen(laddr) != 8 && strlen(laddr) != 32) ||
		    lport > 0xffff || state > 0xff)
			return -1;
		if (tcp_state_busy(state) && port_in_list(lport, ports, nr))
			busy++;
	}
	return busy;
}

static bool word_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* Is @name a whole word somewhere in @s[0..len)? */
static bool has_word(const char *s, size_t len, const char *name)
{
	size_t nlen = strlen(name), i;

	if (!nlen || nlen > len)
		return false;
	for (i = 0; i + nlen <= len; i++) {
		if (memcmp(s + i, name, nlen))
			continue;
		if (i > 0 && word_char(s[i - 1]))
			continue;
		if (i + nlen < len && word_char(s[i + nlen]))
			continue;
		return true;
	}
	return false;
}

/*
 * Find the action names at the end of a /proc/interrupts line.  The kernel
 * prints "  name" and then ", name" for each further action of a shared
 * line, so walk back over tokens as long as the one before ends in ','.
 */
static const char *action_names(const char *line, size_t end, size_t *len)
{
	size_t start;

	while (end && isspace((unsigned char)line[end - 1]))
		end--;
	start = end;
	for (;;) {
		size_t q;

		while (start && !isspace((unsigned char)line[start - 1]))
			start--;
		q = start;
		while (q && isspace((unsigned char)line[q - 1]))
			q--;
		if (!q || line[q - 1] != ',')
			break;
		start = q;
	}
	*len = end - start;
	return line + start;
}

static void add_irq(unsigned int irq, unsigned int *irqs, int *n, int max)
{
	int i;

	for (i = 0; i < *n; i++)
		if (irqs[i] == irq)
			return;
	if (*n < max)
		irqs[(*n)++] = irq;
}

int procnet_irqs_by_name(const char *buf, const char *const names[],
			 int nr_names, unsigned int *irqs, int max)
{
	const char *line;
	size_t llen;
	int n = 0;

	/* Not copied: lines grow with the number of CPUs. */
	while (next_line(&buf, &line, &llen)) {
		const char *p = line, *end = line + llen, *act;
		unsigned int irq = 0;
		size_t len;
		int i;

		while (p < end && isspace((unsigned char)*p))
			p++;
		/* Only numbered lines: skip the CPU header, NMI:, LOC: ... */
		if (p == end || !isdigit((unsigned char)*p))
			continue;
		while (p < end && isdigit((unsigned char)*p) && irq < 100000000)
			irq = irq * 10 + (*p++ - '0');
		if (p == end || *p != ':')
			continue;
		p++;
		act = action_names(p, end - p, &len);
		for (i = 0; i < nr_names; i++) {
			if (has_word(act, len, names[i])) {
				add_irq(irq, irqs, &n, max);
				break;
			}
		}
	}
	return n;
}

/* The CPU columns of the header line: "  CPU0  CPU1 ..." */
static int header_cpus(const char *line, size_t len)
{
	int n = 0;
	size_t i;

	for (i = 0; i + 3 < len; i++)
		if (!strncmp(line + i, "CPU", 3) &&
		    (!i || isspace((unsigned char)line[i - 1])) &&
		    isdigit((unsigned char)line[i + 3]))
			n++;
	return n;
}

int procnet_irq_next(const char **pos, int *ncpu, unsigned int *irq,
		     unsigned long long *count, char *names, size_t size)
{
	const char *line;
	size_t llen;

	while (next_line(pos, &line, &llen)) {
		const char *p = line, *end = line + llen, *act;
		unsigned long long sum = 0;
		unsigned int n = 0;
		size_t len;
		int col;

		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p == end || !isdigit((unsigned char)*p)) {
			if (!*ncpu)
				*ncpu = header_cpus(line, llen);
			continue;
		}
		while (p < end && isdigit((unsigned char)*p) && n < 100000000)
			n = n * 10 + (*p++ - '0');
		if (p == end || *p != ':')
			continue;
		act = action_names(p + 1, end - p - 1, &len);
		p++;
		/* One count per CPU; the chip's name and hwirq follow. */
		for (col = 0; col < *ncpu; col++) {
			unsigned long long v = 0;

			while (p < end && isspace((unsigned char)*p))
				p++;
			if (p == end || !isdigit((unsigned char)*p))
				break;
			while (p < end && isdigit((unsigned char)*p))
				v = v * 10 + (*p++ - '0');
			sum += v;
		}
		*irq = n;
		*count = sum;
		if (size)
			snprintf(names, size, "%.*s", (int)len, act);
		return 1;
	}
	return 0;
}

int procnet_udp_busy(const char *buf, const unsigned short *ports, int nr)
{
	char line[512], laddr[40], raddr[40];
	unsigned int lport, rport, state;
	unsigned long txq, rxq;
	int busy = 0;

	while (copy_line(&buf, line, sizeof(line))) {
		if (blank(line) || strstr(line, "local_address"))
			continue;
		/* "  123: 00000000:0035 00000000:0000 07 00000000:00000000 ..." */
		if (sscanf(line, " %*u: %39[0-9A-Fa-f]:%x %39[0-9A-Fa-f]:%x %x %lx:%lx",
			   laddr, &lport, raddr, &rport, &state, &txq,
			   &rxq) != 7)
			return -1;
		if ((strlen(laddr) != 8 && strlen(laddr) != 32) ||
		    lport > 0xffff)
			return -1;
		if ((txq || rxq) && port_in_list(lport, ports, nr))
			busy++;
	}
	return busy;
}

int procnet_sock_next(const char **pos, struct procnet_sock *sk)
{
	char line[512], laddr[40];

	while (copy_line(pos, line, sizeof(line))) {
		if (blank(line) || strstr(line, "local_address"))
			continue;
		/*
		 * "  0: 00000000:0050 00000000:0000 0A 00000000:00000000
		 * 00:00000000 00000000     0        0 1065 ...": the inode
		 * is the tenth field.
		 */
		if (sscanf(line,
			   " %*u: %39[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %lu",
			   laddr, &sk->lport, &sk->state, &sk->inode) != 4)
			return -1;
		if ((strlen(laddr) != 8 && strlen(laddr) != 32) ||
		    sk->lport > 0xffff || sk->state > 0xff)
			return -1;
		return 1;
	}
	return 0;
}

/* Case-insensitive: does @s[0..len) contain @pat? */
static bool has_pat(const char *s, size_t len, const char *pat)
{
	size_t plen = strlen(pat), i;

	for (i = 0; i + plen <= len; i++)
		if (!strncasecmp(s + i, pat, plen))
			return true;
	return false;
}

static bool rx_name(const char *s, size_t len)
{
	/* "-rx" at the very end: "eth0-rx" of a single-queue driver */
	return has_pat(s, len, "-input.") || has_pat(s, len, "-rx-") ||
	       has_pat(s, len, "-txrx-") || has_pat(s, len, "-rxtx-") ||
	       (len >= 3 && !strncasecmp(s + len - 3, "-rx", 3));
}

int procnet_rx_vectors(const char *buf, unsigned int *irqs, int nr,
		       char *names, size_t size)
{
	const char *line;
	size_t llen, used = 0;
	int n_rx = 0, i;

	if (size)
		names[0] = '\0';
	while (next_line(&buf, &line, &llen)) {
		const char *p = line, *end = line + llen, *act;
		unsigned int irq = 0;
		size_t len;

		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p == end || !isdigit((unsigned char)*p))
			continue;
		while (p < end && isdigit((unsigned char)*p) && irq < 100000000)
			irq = irq * 10 + (*p++ - '0');
		if (p == end || *p != ':')
			continue;
		act = action_names(p + 1, end - p - 1, &len);
		if (!rx_name(act, len))
			continue;
		for (i = n_rx; i < nr; i++) {
			unsigned int tmp;

			if (irqs[i] != irq)
				continue;
			tmp = irqs[n_rx];
			irqs[n_rx++] = irq;
			irqs[i] = tmp;
			if (size > used + 1) {
				int w = snprintf(names + used, size - used,
						 "%s%.*s", used ? "," : "",
						 (int)len, act);

				used += w > 0 ? (size_t)w : 0;
				if (used >= size)
					used = size - 1;
			}
			break;
		}
	}
	return n_rx;
}

int procnet_dev_rx(const char *buf, unsigned long long *rx)
{
	char line[512];
	unsigned long long bytes, packets;

	*rx = 0;
	while (copy_line(&buf, line, sizeof(line))) {
		const char *colon = strchr(line, ':');

		/* two header lines: "Inter-|   Receive ..." and " face |bytes ..." */
		if (blank(line) || strchr(line, '|'))
			continue;
		if (!colon || sscanf(colon + 1, "%llu %llu", &bytes,
				     &packets) != 2)
			return -1;
		*rx += packets;
	}
	return 0;
}

/* The value under column @col of the "@proto:" header and value lines. */
static int snmp_field(const char *buf, const char *proto, const char *col,
		      unsigned long long *val)
{
	char head[1024], vals[1024];
	size_t plen = strlen(proto);

	while (copy_line(&buf, head, sizeof(head))) {
		char *h, *v, *hs, *vs;

		if (strncmp(head, proto, plen) || head[plen] != ':')
			continue;
		if (!copy_line(&buf, vals, sizeof(vals)) ||
		    strncmp(vals, proto, plen) || vals[plen] != ':')
			return -1;
		h = strtok_r(head + plen + 1, " \t\n", &hs);
		v = strtok_r(vals + plen + 1, " \t\n", &vs);
		for (; h && v; h = strtok_r(NULL, " \t\n", &hs),
		     v = strtok_r(NULL, " \t\n", &vs)) {
			if (!strcmp(h, col)) {
				char *end;

				*val = strtoull(v, &end, 10);
				return end == v ? -1 : 0;
			}
		}
		return -1;
	}
	return -1;
}

int procnet_snmp_in(const char *buf, unsigned long long *in)
{
	unsigned long long segs, rsts, dgrams;

	if (snmp_field(buf, "Tcp", "InSegs", &segs) ||
	    snmp_field(buf, "Tcp", "OutRsts", &rsts) ||
	    snmp_field(buf, "Udp", "InDatagrams", &dgrams))
		return -1;
	/*
	 * InSegs counts every segment, the SYNs of a port scan too; the
	 * kernel answers each segment for no socket with a reset.  Taking
	 * the resets off leaves the segments that reached a socket.  The
	 * total can step back (a socket's own reset): only a change counts.
	 */
	*in = segs - rsts + dgrams;
	return 0;
}

int procnet_snmp6_in(const char *buf, unsigned long long *in)
{
	char line[256], name[64];
	unsigned long long v;

	while (copy_line(&buf, line, sizeof(line))) {
		if (sscanf(line, "%63s %llu", name, &v) == 2 &&
		    !strcmp(name, "Udp6InDatagrams")) {
			*in = v;
			return 0;
		}
	}
	return -1;
}
