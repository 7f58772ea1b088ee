/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bounded read of /sys/power/wakeup_count.
 *
 * The read blocks while any wakeup source is active.  napd's own
 * EPOLLWAKEUP items are wakeup sources: readiness that arrives between
 * the drain of napd's epoll set and the read would make napd wait on
 * itself.  So the read is given up after a while, by a SIGALRM whose
 * handler is installed without SA_RESTART (the read returns EINTR).
 */
#ifndef NAPD_WCOUNT_H
#define NAPD_WCOUNT_H

#include <stddef.h>

/* How long napd waits for the wakeup sources to settle. */
#define WCOUNT_TIMEOUT_MS	50

/*
 * sysfs_read() of @path into @buf, given up after @ms.  0, -ETIMEDOUT
 * when the time ran out (a wakeup source stayed active), -EINTR on any
 * other signal, or -errno.
 */
int wcount_read(const char *path, char *buf, size_t size, unsigned long ms);

#endif /* NAPD_WCOUNT_H */
