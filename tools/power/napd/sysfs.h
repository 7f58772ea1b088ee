/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small sysfs file helpers and the record of settings napd changed, so
 * that every exit path can put them back.
 */
#ifndef NAPD_SYSFS_H
#define NAPD_SYSFS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* snprintf() into @out; returns -ENAMETOOLONG instead of truncating. */
int path_fmt(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Read a small file into @buf, NUL terminated, one trailing newline
 * removed.  Returns the length or -errno.
 */
int sysfs_read(const char *path, char *buf, size_t size);

/* Read a decimal value; -errno on failure, -EINVAL if not a number. */
int sysfs_read_ull(const char *path, unsigned long long *val);

/* Write @val plus a newline in one write(); 0 or -errno. */
int sysfs_write(const char *path, const char *val);

/*
 * Read a whole file of any size (/proc/net/tcp, /proc/interrupts) into a
 * malloc()ed NUL terminated buffer.  NULL with errno set on failure.
 */
char *read_whole(const char *path);

/* Does @path exist (any type)? */
bool path_exists(const char *path);

/*
 * The current choice in a "[s2idle] deep pseudo" list, copied to @out.
 * Returns 0, or -1 if there is no bracketed entry.
 */
int mem_sleep_current(const char *list, char *out, size_t size);

/* Is @word one of the space separated entries of @list (brackets ok)? */
bool mem_sleep_offers(const char *list, const char *word);

#define SETTING_VAL_MAX		256
#define SETTINGS_MAX		24

struct setting {
	char path[PATH_MAX];
	char old[SETTING_VAL_MAX];
};

struct settings {
	struct setting s[SETTINGS_MAX];
	int nr;
	bool dry_run;
};

/*
 * Remember that @path held @old and write @val to it (or, in a dry run,
 * say what would be written).  The old value is recorded before the write
 * so that a write that fails half way is still undone.  0 or -errno.
 */
int settings_change(struct settings *st, const char *path, const char *old,
		    const char *val);

/*
 * Write every recorded old value back, newest first, and forget them.
 * Returns 0 or the first -errno; it keeps going after a failure.
 */
int settings_restore(struct settings *st);

#endif /* NAPD_SYSFS_H */
