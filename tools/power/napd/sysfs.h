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

#include "compiler.h"

/* snprintf() into @out; returns -ENAMETOOLONG instead of truncating. */
int path_fmt(char *out, size_t size, const char *fmt, ...)
	__printf(3, 4);

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
#define SETTINGS_MAX		48
#define SETTINGS_FILE		"settings"	/* in the state directory */

struct setting {
	char path[PATH_MAX];
	char old[SETTING_VAL_MAX];
};

/*
 * What napd changed, with the original values, and (with @file set) a
 * copy of them on disk that outlives a napd killed with SIGKILL.
 * @pending holds the originals a killed napd saved: a change of one of
 * their paths takes its original from there instead of from the value
 * read now, which is the killed napd's own setting.
 */
struct settings {
	struct setting s[SETTINGS_MAX];
	int nr;
	struct setting pending[SETTINGS_MAX];
	int nr_pending;
	bool dry_run;
	char file[PATH_MAX];		/* "": nothing saved on disk */
};

/*
 * Remember that @path held @old and write @val to it (or, in a dry run,
 * say what would be written).  The old value is recorded, and saved to
 * @st->file, before the write so that a write that fails half way, or a
 * napd killed right after it, is still undone.  If @path is pending,
 * its saved original is recorded instead of @old.  0 or -errno; if the
 * file cannot be written, -errno and nothing is written to @path.
 */
int settings_change(struct settings *st, const char *path, const char *old,
		    const char *val);

/*
 * Write every recorded old value back, newest first, then the pending
 * ones, and forget them; then remove @st->file.  A file that no longer
 * exists (a device removed meanwhile) has nothing to restore: a warning.
 * Returns 0 or the first -errno; it keeps going after a failure, and
 * keeps @st->file if one failed, for napd --restore or the next start.
 */
int settings_restore(struct settings *st);

/* Is @path's original pending (saved by a killed napd)? */
bool settings_pending(const struct settings *st, const char *path);

/* Write the pending originals no change took over back; 0 or -errno. */
int settings_restore_pending(struct settings *st);

/*
 * Write @st->file atomically: every recorded and pending original, to a
 * temporary file, fsync, rename over, fsync the directory.  0 or -errno.
 */
int settings_save(const struct settings *st);

/*
 * Load @st->file, if it exists, into @st->pending.  Returns the number of
 * settings loaded (0 if there is no file), or -1 with a message in @err
 * for a file that cannot be read or does not parse.
 */
int settings_load(struct settings *st, char *err, size_t errlen);

/*
 * Create state directory @dir (and its parents) if needed and take the
 * lock in it (napd.lock, holding the pid) that keeps a second napd from
 * taking the first one's settings for originals.  Returns the lock's fd,
 * to be kept open, or -1 with a message in @err.
 */
int state_lock(const char *dir, char *err, size_t errlen);

#endif /* NAPD_SYSFS_H */
