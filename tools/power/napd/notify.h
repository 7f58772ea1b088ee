/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The systemd notification protocol (sd_notify(3)) without libsystemd:
 * one datagram of "KEY=VALUE\n" lines to the AF_UNIX socket named in
 * $NOTIFY_SOCKET ('@' at the start means the abstract namespace).
 */
#ifndef NAPD_NOTIFY_H
#define NAPD_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Format a message: READY=1 and STOPPING=1 lines if asked, then
 * STATUS=@status (newlines made spaces) unless NULL.  Returns the length,
 * or -1 if it does not fit in @size.
 */
int notify_format(char *buf, size_t size, bool ready, bool stopping,
		  const char *status);

/* Send @msg to socket @path.  0, or -errno. */
int notify_send(const char *path, const char *msg);

/* notify_format() + notify_send() to $NOTIFY_SOCKET; no-op without it. */
int notify(bool ready, bool stopping, const char *status);

#endif /* NAPD_NOTIFY_H */
