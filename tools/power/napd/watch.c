// SPDX-License-Identifier: GPL-2.0
/*
 * Wake on work: napd's EPOLLWAKEUP watches on the servers' fds.
 *
 * A server that is frozen during a nap is not in epoll_wait(), but its
 * epoll items stay hooked on its sockets' wait queues.  A connection,
 * data or a datagram runs the server epoll's callback, which wakes the
 * epoll sets that watch the server's epoll, napd's among them, and
 * napd's item, added with EPOLLWAKEUP, activates its wakeup source.
 * Watched directly: listening sockets (always woken, even when the
 * workers wait with EPOLLEXCLUSIVE), bound UDP sockets, and established
 * connections on a served port (fork-per-connection servers have no
 * epoll).  The copies go into an epoll set without wakeup sources, and
 * that set into an outer one with EPOLLWAKEUP, the one wakeup source of
 * napd's run: an EPOLLWAKEUP item registers a wakeup source of its own
 * in sysfs (a device, a uevent), about 250 times the cost of a plain
 * item (7 ms against 28 us per copy in a TCG guest), at every attempt.
 * The copies' set wakes the outer item as a server's epoll wakes the
 * copies' set.  EPOLLET: delivering an event relaxes the item's wakeup
 * source; a level-triggered item would stay queued, its source active,
 * until the server accepts, and the wakeup_count read would block.
 *
 * The servers are the processes holding a served socket, and their
 * descendants (workers that fork later, connection handlers).  PID 1
 * (systemd's socket activation holds listening sockets too) and napd
 * itself are never servers: every process descends from PID 1.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <sys/stat.h>

#include "diag.h"
#include "procnet.h"
#include "sysfs.h"
#include "watch.h"

int watch_init(struct watch *w, const char *proc_root)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLWAKEUP | EPOLLET,
	};
	int err;

	memset(w, 0, sizeof(*w));
	w->ep = -1;
	w->outer = -1;
	w->diag.fd = -1;
	if (path_fmt(w->proc_root, sizeof(w->proc_root), "%s", proc_root))
		return -ENAMETOOLONG;
	/* sock_diag sees the real kernel; a fake proc_root means files. */
	if (!strcmp(proc_root, "/proc"))
		diag_open(&w->diag);
	w->ep = epoll_create1(EPOLL_CLOEXEC);
	w->outer = epoll_create1(EPOLL_CLOEXEC);
	if (w->ep < 0 || w->outer < 0 ||
	    epoll_ctl(w->outer, EPOLL_CTL_ADD, w->ep, &ev)) {
		err = -errno;
		watch_close(w);
		return err;
	}
	return 0;
}

static void close_pids(struct watch *w)
{
	int i;

	for (i = 0; i < w->nr_pids; i++)
		close(w->pidfds[i]);
	w->nr_pids = 0;
}

void watch_close(struct watch *w)
{
	diag_close(&w->diag);
	if (w->outer >= 0)
		close(w->outer);
	w->outer = -1;
	if (w->ep < 0)
		return;
	watch_drop(w);
	close_pids(w);
	close(w->ep);
	w->ep = -1;
}

/* What a socket table walk adds to: the watch, the ports, the protocol. */
struct sock_walk {
	struct watch *w;
	const struct watch_ports *p;
	bool udp;
};

/* One socket of a table: into @w->socks if it is a served one. */
static void add_sock(const struct procnet_sock *sk, void *ctx)
{
	const struct sock_walk *sw = ctx;
	const struct watch_ports *p = sw->p;
	struct watch *w = sw->w;
	struct watch_sock *ws;
	enum watch_kind kind;

	if (!sk->inode)
		return;		/* not accepted yet: the listener is ready */
	if (sw->udp) {
		if (!port_in_list(sk->lport, p->udp, p->nr_udp) &&
		    !port_in_list(sk->lport, p->tcp, p->nr_tcp))
			return;
		kind = WATCH_UDP;
	} else {
		if (!port_in_list(sk->lport, p->tcp, p->nr_tcp))
			return;
		if (sk->state == NAPD_TCP_LISTEN)
			kind = WATCH_LISTEN;
		else if (sk->state == NAPD_TCP_ESTABLISHED)
			kind = WATCH_CONN;
		else
			return;
	}
	/*
	 * Room for the listening and UDP sockets whatever the number of
	 * connections; those left out are still seen by activity(), or
	 * through the server's epoll.
	 */
	if (w->nr_socks == WATCH_MAX_SOCKS ||
	    (kind == WATCH_CONN &&
	     w->nr_socks >= WATCH_MAX_SOCKS - WATCH_MAX_SOCKS / 8))
		return;
	ws = &w->socks[w->nr_socks++];
	ws->inode = sk->inode;
	ws->port = sk->lport;
	ws->kind = kind;
	ws->taken = false;
}

/* The served sockets of one /proc/net table into @w->socks. */
static int read_socks(struct sock_walk *sw, const char *table)
{
	char path[PATH_MAX], *text;
	struct procnet_sock sk;
	const char *pos;
	int ret;

	if (path_fmt(path, sizeof(path), "%s/net/%s", sw->w->proc_root,
		     table))
		return -ENAMETOOLONG;
	text = read_whole(path);
	if (!text)
		return errno == ENOENT ? 0 : -errno;	/* no IPv6 */
	pos = text;
	while ((ret = procnet_sock_next(&pos, &sk)) > 0)
		add_sock(&sk, sw);
	free(text);
	return ret < 0 ? -EINVAL : 0;
}

/*
 * The served sockets, from sock_diag: TCP in LISTEN or ESTABLISHED, UDP
 * in any state.  -errno if it fails (the caller reads /proc/net).
 */
static int diag_tables(struct watch *w, const struct watch_ports *p)
{
	struct sock_walk tcp = { w, p, false }, udp = { w, p, true };
	int ret;

	ret = diag_socks(&w->diag, IPPROTO_TCP,
			 1U << NAPD_TCP_LISTEN | 1U << NAPD_TCP_ESTABLISHED,
			 add_sock, &tcp);
	if (!ret)
		ret = diag_socks(&w->diag, IPPROTO_UDP, ~0U, add_sock, &udp);
	return ret;
}

static bool in_list(unsigned long v, const unsigned long *list, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (list[i] == v)
			return true;
	return false;
}

static struct watch_sock *find_sock(struct watch *w, unsigned long inode)
{
	int i;

	for (i = 0; i < w->nr_socks; i++)
		if (w->socks[i].inode == inode)
			return &w->socks[i];
	return NULL;
}

/*
 * What fd @name of @pid is: a served socket (into *@sk) or an epoll
 * instance.  -1 for anything else.
 */
static int fd_kind(struct watch *w, pid_t pid, const char *name,
		   struct watch_sock **sk)
{
	char path[PATH_MAX], link[64];
	unsigned long inode;
	ssize_t len;

	if (path_fmt(path, sizeof(path), "%s/%d/fd/%s", w->proc_root,
		     (int)pid, name))
		return -1;
	len = readlink(path, link, sizeof(link) - 1);
	if (len < 0)
		return -1;
	link[len] = '\0';
	if (!strcmp(link, "anon_inode:[eventpoll]"))
		return WATCH_EPOLL;
	if (sscanf(link, "socket:[%lu]", &inode) != 1)
		return -1;
	*sk = find_sock(w, inode);
	return *sk ? (int)(*sk)->kind : -1;
}

/* Copy fd @target of the server behind @pidfd into napd's epoll set. */
static int take(struct watch *w, int pidfd, pid_t pid, int target,
		enum watch_kind kind, unsigned int port)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLET,
		.data.u32 = w->nr_fds,
	};
	struct watch_fd *f;
	int fd;

	if (w->nr_fds == WATCH_MAX_FDS)
		return -ENOSPC;
	fd = pidfd_getfd(pidfd, target, 0);	/* O_CLOEXEC is implied */
	if (fd < 0)
		return -errno;
	if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev)) {
		int err = -errno;

		close(fd);
		return err;
	}
	f = &w->fds[w->nr_fds++];
	f->fd = fd;
	f->pid = pid;
	f->target = target;
	f->kind = kind;
	f->port = port;
	return 0;
}

static void note_err(struct watch *w, int err, pid_t pid)
{
	if (!w->err) {
		w->err = err;
		w->err_pid = pid;
	}
}

/* The served sockets and epoll fds of server @i; false if it went. */
static bool take_all(struct watch *w, int i)
{
	struct pollfd exited = { .fd = w->pidfds[i], .events = POLLIN };
	pid_t pid = w->pids[i];
	char path[PATH_MAX];
	struct dirent *de;
	int ret;
	DIR *d;

	/* A pidfd polls readable once its process exited. */
	if (poll(&exited, 1, 0) != 0)
		return false;
	if (path_fmt(path, sizeof(path), "%s/%d/fd", w->proc_root, (int)pid))
		return false;
	d = opendir(path);
	if (!d)
		return false;
	while ((de = readdir(d))) {
		struct watch_sock *sk = NULL;
		int kind;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		kind = fd_kind(w, pid, de->d_name, &sk);
		if (kind < 0 || (sk && sk->taken))
			continue;
		ret = take(w, w->pidfds[i], pid, atoi(de->d_name), kind,
			   sk ? sk->port : 0);
		/*
		 * EBADF: closed since the readdir; ESRCH: the server is
		 * exiting (the next attempt walks the list again).  EINVAL
		 * for an epoll: epoll's limit on wakeup paths to one file
		 * (100 at this depth: many workers' epolls holding one
		 * listener); that listener and the connections on the
		 * served ports are watched directly anyway.
		 */
		if (ret == -ESRCH)
			w->stale = true;
		else if (ret && ret != -EBADF &&
			 !(ret == -EINVAL && kind == WATCH_EPOLL))
			note_err(w, ret, pid);
		if (!ret && sk)
			sk->taken = true;
	}
	closedir(d);
	return true;
}

/* /proc/PID/stat's ppid (after the comm, which may hold ") "). */
static pid_t read_ppid(const char *proc_root, pid_t pid)
{
	char path[PATH_MAX], *text, *p;
	int ppid = -1;

	if (path_fmt(path, sizeof(path), "%s/%d/stat", proc_root, (int)pid))
		return -1;
	text = read_whole(path);
	if (!text)
		return -1;
	p = strrchr(text, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = -1;
	free(text);
	return ppid;
}

/* Does @pid hold one of the served sockets? */
static bool holds_served(struct watch *w, pid_t pid)
{
	char path[PATH_MAX];
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (path_fmt(path, sizeof(path), "%s/%d/fd", w->proc_root, (int)pid))
		return false;
	d = opendir(path);
	while (d && !found && (de = readdir(d))) {
		struct watch_sock *sk = NULL;

		if (isdigit((unsigned char)de->d_name[0]) &&
		    fd_kind(w, pid, de->d_name, &sk) >= 0 && sk)
			found = true;
	}
	if (d)
		closedir(d);
	return found;
}

struct proc {
	pid_t pid, ppid;
	bool server;
};

static void add_pid(struct watch *w, pid_t pid)
{
	int fd;

	if (w->nr_pids == WATCH_MAX_PIDS)
		return;
	fd = pidfd_open(pid, 0);	/* O_CLOEXEC is implied */
	if (fd < 0)
		return;			/* gone already */
	w->pids[w->nr_pids] = pid;
	w->pidfds[w->nr_pids++] = fd;
}

/*
 * Find the servers again: every process holding a served socket, then
 * their descendants.  The known inodes become the current ones.
 */
static int scan(struct watch *w)
{
	char path[PATH_MAX];
	struct proc *procs = NULL;
	int nr = 0, cap = 0, i, j, added;
	struct dirent *de;
	DIR *d;

	if (path_fmt(path, sizeof(path), "%s", w->proc_root))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (pid == 1 || pid == getpid())
			continue;
		if (nr == cap) {
			struct proc *p = realloc(procs, (cap + 256) *
						 sizeof(*procs));

			if (!p) {
				free(procs);
				closedir(d);
				return -ENOMEM;
			}
			procs = p;
			cap += 256;
		}
		procs[nr].pid = pid;
		procs[nr].ppid = read_ppid(w->proc_root, pid);
		procs[nr].server = holds_served(w, pid);
		nr++;
	}
	closedir(d);
	/* Descendants: mark children of servers until nothing changes. */
	do {
		added = 0;
		for (i = 0; i < nr; i++) {
			if (procs[i].server)
				continue;
			for (j = 0; j < nr; j++)
				if (procs[j].server &&
				    procs[j].pid == procs[i].ppid)
					break;
			if (j < nr) {
				procs[i].server = true;
				added++;
			}
		}
	} while (added);
	close_pids(w);
	for (i = 0; i < nr; i++)
		if (procs[i].server)
			add_pid(w, procs[i].pid);
	free(procs);
	w->nr_known = 0;
	w->nr_missed = 0;
	for (i = 0; i < w->nr_socks; i++)
		if (w->socks[i].kind != WATCH_CONN)
			w->known[w->nr_known++] = w->socks[i].inode;
	w->stale = false;
	w->scans++;
	return 0;
}

/* Read the socket tables; true if the pid list must be scanned again. */
static int socket_tables(struct watch *w, const struct watch_ports *p)
{
	static const char *const tables[] = { "tcp", "tcp6", "udp", "udp6" };
	bool rescan = w->stale || !w->scans;
	int i, ret;

	w->nr_socks = 0;
	if (w->diag.fd >= 0 && !diag_tables(w, p))
		goto found;
	/* No sock_diag (a fake --proc-root, no udp_diag): the text tables. */
	diag_close(&w->diag);
	w->nr_socks = 0;
	for (i = 0; i < 4; i++) {
		struct sock_walk sw = { w, p, i >= 2 };

		ret = read_socks(&sw, tables[i]);
		if (ret)
			return ret;
	}
found:
	for (i = 0; i < w->nr_socks; i++)
		if (w->socks[i].kind != WATCH_CONN &&
		    !in_list(w->socks[i].inode, w->known, w->nr_known))
			rescan = true;
	return rescan;
}

static void take_from_pids(struct watch *w)
{
	int i;

	for (i = 0; i < w->nr_pids; i++)
		if (!take_all(w, i))
			w->stale = true;
}

/* Connections held by no known server (a handler forked since). */
static bool missing_conns(struct watch *w, bool remember)
{
	bool missing = false;
	int i;

	for (i = 0; i < w->nr_socks; i++) {
		struct watch_sock *sk = &w->socks[i];

		if (sk->kind != WATCH_CONN || sk->taken ||
		    in_list(sk->inode, w->missed, w->nr_missed))
			continue;
		missing = true;
		if (remember && w->nr_missed < WATCH_MAX_SOCKS)
			w->missed[w->nr_missed++] = sk->inode;
	}
	return missing;
}

int watch_add(struct watch *w, const struct watch_ports *p)
{
	int ret, i;

	w->err = 0;
	w->err_pid = 0;
	ret = socket_tables(w, p);
	if (ret < 0)
		return ret;
	if (ret) {
		ret = scan(w);
		if (ret)
			return ret;
	}
	take_from_pids(w);
	if (missing_conns(w, false)) {
		watch_drop(w);
		for (i = 0; i < w->nr_socks; i++)
			w->socks[i].taken = false;
		ret = scan(w);
		if (ret)
			return ret;
		take_from_pids(w);
		missing_conns(w, true);	/* not again until they change */
	}
	return w->nr_fds;
}

static const char *const kind_names[] = {
	[WATCH_LISTEN] = "listening socket",
	[WATCH_UDP] = "UDP socket",
	[WATCH_CONN] = "connection",
	[WATCH_EPOLL] = "epoll",
};

/* The first event of the copies' set, for the log. */
static void describe(const struct watch *w, unsigned int idx, char *why,
		     size_t size)
{
	const struct watch_fd *f;

	if (idx >= (unsigned int)w->nr_fds)
		return;
	f = &w->fds[idx];
	if (f->kind == WATCH_EPOLL)
		snprintf(why, size, "work for pid %d (its epoll, fd %d)",
			 (int)f->pid, f->target);
	else
		snprintf(why, size, "work for pid %d (%s on port %u, fd %d)",
			 (int)f->pid, kind_names[f->kind], f->port, f->target);
}

/* Take every event of @ep; the number, or -errno. */
static int take_events(const struct watch *w, int ep, char *why,
		       size_t size)
{
	struct epoll_event ev[16];
	int n, total = 0;

	for (;;) {
		n = epoll_wait(ep, ev, 16, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return total;
		if (!total && why)
			describe(w, ev[0].data.u32, why, size);
		total += n;
	}
}

int watch_drain(struct watch *w, char *why, size_t size)
{
	int n;

	/*
	 * The outer set first: its event relaxes the wakeup source, and
	 * work that comes after is still caught by the copies' set below,
	 * or activates the source again.  The other way round, work that
	 * came between the two would leave no trace.
	 */
	n = take_events(w, w->outer, NULL, 0);
	if (n < 0)
		return n;
	return take_events(w, w->ep, why, size);
}

void watch_drop(struct watch *w)
{
	int i;

	/*
	 * DEL first: an epoll item goes with the file, not with the fd,
	 * and the file is the server's too.
	 */
	for (i = 0; i < w->nr_fds; i++) {
		epoll_ctl(w->ep, EPOLL_CTL_DEL, w->fds[i].fd, NULL);
		close(w->fds[i].fd);
	}
	w->nr_fds = 0;
}

int watch_cap_eff(const char *proc_root, unsigned long long *caps)
{
	char path[PATH_MAX], *text, *p;
	int ret = 0;

	if (path_fmt(path, sizeof(path), "%s/self/status", proc_root))
		return -ENAMETOOLONG;
	text = read_whole(path);
	if (!text)
		return -errno;
	p = strstr(text, "\nCapEff:");
	if (!p || sscanf(p + 8, " %llx", caps) != 1)
		ret = -EINVAL;
	free(text);
	return ret;
}

int watch_wakeup_kept(void)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLWAKEUP };
	char path[64], *text, *line;
	unsigned int events;
	int a, b, tfd, ret = -EINVAL;

	a = epoll_create1(EPOLL_CLOEXEC);
	b = epoll_create1(EPOLL_CLOEXEC);
	if (a < 0 || b < 0 || epoll_ctl(a, EPOLL_CTL_ADD, b, &ev)) {
		ret = -errno;
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", a);
	text = read_whole(path);
	if (!text) {
		ret = -errno;
		goto out;
	}
	/* "tfd:        4 events: 20000001 data: ..." */
	for (line = strstr(text, "tfd:"); line; line = strstr(line + 1, "tfd:"))
		if (sscanf(line, "tfd: %d events: %x", &tfd, &events) == 2 &&
		    tfd == b)
			ret = !!(events & EPOLLWAKEUP);
	free(text);
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return ret;
}

int watch_same_uid(struct watch *w, const struct watch_ports *p)
{
	char path[PATH_MAX], scope[16];
	struct stat st;
	int ret, i;

	if (!path_fmt(path, sizeof(path), "%s/sys/kernel/yama/ptrace_scope",
		      w->proc_root) &&
	    sysfs_read(path, scope, sizeof(scope)) >= 0 && strcmp(scope, "0"))
		return 0;
	ret = socket_tables(w, p);
	if (ret < 0)
		return ret;
	ret = scan(w);
	if (ret)
		return ret;
	for (i = 0; i < w->nr_pids; i++) {
		if (path_fmt(path, sizeof(path), "%s/%d", w->proc_root,
			     (int)w->pids[i]) || stat(path, &st))
			continue;
		if (st.st_uid != geteuid())
			return 0;
	}
	return w->nr_pids > 0;
}
