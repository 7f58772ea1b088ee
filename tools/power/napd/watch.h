/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wake on work (--wake-on task): the server processes behind the served
 * ports, and for one nap attempt their sockets and epoll instances in an
 * epoll set of napd's own, watched with EPOLLWAKEUP.  Work for a server
 * (a connection, a request on a kept-alive connection, a datagram) then
 * activates a wakeup source: it refuses the wakeup_count handshake
 * before a nap and, on a kernel with wake on work, ends the nap.
 *
 * The copies of the servers' fds (pidfd_getfd()) live for one attempt
 * only: a copy of a connected socket would delay its FIN when the server
 * closes it, a copy of a listening socket would keep the port bound
 * across a server restart.
 */
#ifndef NAPD_WATCH_H
#define NAPD_WATCH_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "diag.h"

#define WATCH_MAX_PIDS	256
#define WATCH_MAX_SOCKS	1024
#define WATCH_MAX_FDS	1024

enum watch_kind {
	WATCH_LISTEN,		/* a listening TCP socket: new connections */
	WATCH_UDP,		/* a bound UDP socket: datagrams */
	WATCH_CONN,		/* an established connection: kept alive */
	WATCH_EPOLL,		/* a server's epoll: its whole event loop */
};

/* A served socket, from /proc/net/{tcp,udp}{,6}. */
struct watch_sock {
	unsigned long inode;
	unsigned int port;
	enum watch_kind kind;
	bool taken;		/* copied in this attempt */
};

/* One copied fd of this attempt. */
struct watch_fd {
	int fd;			/* napd's copy */
	pid_t pid;		/* taken from this server ... */
	int target;		/* ... and its fd number there */
	enum watch_kind kind;
	unsigned int port;	/* sockets only */
};

struct watch {
	char proc_root[PATH_MAX];
	struct diag diag;	/* the socket tables; fd -1: /proc/net */
	int ep;			/* the copies' epoll set; -1 before watch_init() */
	int outer;		/* holds ep with EPOLLWAKEUP */
	pid_t pids[WATCH_MAX_PIDS];	/* the servers and their descendants */
	int pidfds[WATCH_MAX_PIDS];	/* held: a reused pid is not them */
	int nr_pids;
	bool stale;		/* a cached server went: rescan next time */
	unsigned long known[WATCH_MAX_SOCKS];	/* listening/UDP inodes ... */
	int nr_known;		/* ... that the pid list was found for */
	unsigned long missed[WATCH_MAX_SOCKS];	/* connections no server ... */
	int nr_missed;		/* ... held at the last scan */
	struct watch_sock socks[WATCH_MAX_SOCKS];	/* this attempt's */
	int nr_socks;
	struct watch_fd fds[WATCH_MAX_FDS];	/* this attempt's copies */
	int nr_fds;
	unsigned long scans;	/* pid list scans, for tests and logs */
	int err;		/* first -errno of the last watch_add() ... */
	pid_t err_pid;		/* ... taking fds from this server */
};

/* The ports whose servers are watched: TCP (port=) and UDP. */
struct watch_ports {
	const unsigned short *tcp;
	int nr_tcp;
	const unsigned short *udp;
	int nr_udp;
};

/* 0, or -errno if napd's epoll set cannot be made. */
int watch_init(struct watch *w, const char *proc_root);
void watch_close(struct watch *w);

/*
 * Copy the served sockets and the servers' epoll fds into napd's epoll
 * set, with EPOLLIN | EPOLLET; that set is in an outer one with
 * EPOLLIN | EPOLLWAKEUP | EPOLLET, so that an event of a copy activates
 * one wakeup source, napd's for its whole run.  The pid list is scanned
 * again only when a listening or UDP socket is new, a connection is held
 * by no known server, or a known server went.  Returns the number of fds
 * watched, or -errno if the socket tables cannot be read.  A server
 * whose fds cannot be taken (EPERM: no CAP_SYS_PTRACE; ENOSPC: more than
 * WATCH_MAX_FDS) is skipped and noted in @w->err and @w->err_pid.  Every
 * copy must be dropped with watch_drop() when the attempt ends.
 */
int watch_add(struct watch *w, const struct watch_ports *p);

/*
 * Take every pending event of the outer set (which relaxes napd's
 * wakeup source), then of the copies' set.  Returns the number of the
 * copies' events, the first described in @why, or -errno.
 */
int watch_drain(struct watch *w, char *why, size_t size);

/* Remove every copy from the epoll set and close it. */
void watch_drop(struct watch *w);

/*
 * The effective capabilities of napd (CapEff of @proc_root/self/status).
 * 0, or -errno.
 */
int watch_cap_eff(const char *proc_root, unsigned long long *caps);

/*
 * Does the kernel keep EPOLLWAKEUP on napd's items?  It drops the flag
 * silently without CAP_BLOCK_SUSPEND or CONFIG_PM_SLEEP; napd's own
 * /proc/self/fdinfo shows what was kept.  1 yes, 0 no, -errno.
 */
int watch_wakeup_kept(void);

/*
 * Can napd take fds from the servers without CAP_SYS_PTRACE?  1 if at
 * least one server is found and all of them run as napd's uid while
 * Yama lets a process ptrace its own uid's processes (ptrace_scope 0), 0
 * if not, -errno.
 */
int watch_same_uid(struct watch *w, const struct watch_ports *p);

#endif /* NAPD_WATCH_H */
