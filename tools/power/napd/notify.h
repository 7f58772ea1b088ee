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
#include <syslog.h>	/* LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG ... */

#include "compiler.h"

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

/*
 * Is @fd the stream systemd connected to the journal?  @env is
 * $JOURNAL_STREAM, "DEV:INODE" of that stream (sd-daemon(3),
 * systemd.exec(5)): true if it names @fd's file.
 */
bool journal_stream_is(int fd, const char *env);

/*
 * The line start for a message at syslog priority @prio on stderr: the
 * sd-daemon prefix ("<3>" for LOG_ERR) when stderr is the journal, which
 * files the line at that priority and strips the prefix; otherwise
 * "napd: ", as before.  Decided once, from $JOURNAL_STREAM.
 */
const char *log_prefix(int prio);

/* "<3>" under the journal, "" otherwise: for lines with no "napd: ". */
const char *log_prio(int prio);

/* One line on stderr at priority @prio, after log_prefix(). */
void napd_log(int prio, const char *fmt, ...)
	__printf(2, 3);

#endif /* NAPD_NOTIFY_H */
