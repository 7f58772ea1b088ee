// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs helpers and the restore list.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "notify.h"
#include "sysfs.h"

int path_fmt(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

int sysfs_read(const char *path, char *buf, size_t size)
{
	ssize_t n;
	size_t len = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* sysfs answers in one read, but a plain file need not. */
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	if (err)
		return err;
	buf[len] = '\0';
	if (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	return len;
}

int sysfs_read_ull(const char *path, unsigned long long *val)
{
	char buf[64], *end;
	int n;

	n = sysfs_read(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	if (buf[0] < '0' || buf[0] > '9')
		return -EINVAL;
	errno = 0;
	*val = strtoull(buf, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return 0;
}

int sysfs_write(const char *path, const char *val)
{
	char buf[SETTING_VAL_MAX + 2];
	ssize_t n;
	int fd, len, err = 0;

	len = snprintf(buf, sizeof(buf), "%s\n", val);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return -E2BIG;
	/* O_TRUNC as a shell would: harmless on sysfs, needed on test files */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* sysfs takes a store in a single write(); no partial-write loop. */
	n = write(fd, buf, len);
	if (n < 0)
		err = -errno;
	else if (n != len)
		err = -EIO;
	close(fd);
	return err;
}

char *read_whole(const char *path)
{
	size_t len = 0, size = 16384;
	char *buf = malloc(size), *nbuf;
	int fd, saved;
	ssize_t n;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto fail;
	for (;;) {
		if (size - len < 4096) {
			nbuf = realloc(buf, size * 2);
			if (!nbuf)
				goto fail_fd;
			buf = nbuf;
			size *= 2;
		}
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			goto fail_fd;
		}
		if (n == 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;

fail_fd:
	saved = errno;
	close(fd);
	errno = saved;
fail:
	saved = errno;
	free(buf);
	errno = saved;
	return NULL;
}

bool path_exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

int mem_sleep_current(const char *list, char *out, size_t size)
{
	const char *open = strchr(list, '['), *close;
	size_t len;

	if (!open)
		return -1;
	close = strchr(open, ']');
	if (!close)
		return -1;
	len = close - open - 1;
	if (!len || len >= size)
		return -1;
	memcpy(out, open + 1, len);
	out[len] = '\0';
	return 0;
}

bool mem_sleep_offers(const char *list, const char *word)
{
	size_t wlen = strlen(word);
	const char *p = list;

	while (*p) {
		size_t len;

		while (*p == ' ' || *p == '[' || *p == ']' || *p == '\n')
			p++;
		len = strcspn(p, " []\n");
		if (len == wlen && !strncmp(p, word, len))
			return true;
		p += len;
	}
	return false;
}

/* The saved settings file: a header, then "PATH<tab>VALUE" lines. */
#define SETTINGS_MAGIC	"napd-settings 1"

/* Backslash, control characters and DEL as \xHH: one line per entry. */
static void escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '\\' || c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static int unescape(const char *s, size_t len, char *out, size_t size)
{
	size_t o = 0, i;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == '\\') {
			char hex[3];
			unsigned long v;
			char *end;

			if (i + 3 >= len || s[i + 1] != 'x')
				return -1;
			hex[0] = s[i + 2];
			hex[1] = s[i + 3];
			hex[2] = '\0';
			v = strtoul(hex, &end, 16);
			if (*end || end != hex + 2 || !v)
				return -1;
			c = v;
			i += 3;
		}
		if (o + 1 >= size)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

static void write_entries(FILE *f, const struct setting *set, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		escape(f, set[i].path);
		fputc('\t', f);
		escape(f, set[i].old);
		fputc('\n', f);
	}
}

static int fsync_dir_of(const char *path)
{
	char dir[PATH_MAX], *slash;
	int fd, err = 0;

	if (path_fmt(dir, sizeof(dir), "%s", path))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

int settings_save(const struct settings *st)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd, err = 0;

	if (path_fmt(tmp, sizeof(tmp), "%s.tmp", st->file))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto out;
	}
	fprintf(f, "# Original values of the settings napd (pid %ld) changed.\n"
		"# A napd that did not stop cleanly left this: the next start\n"
		"# puts them back, or run napd --restore.\n"
		SETTINGS_MAGIC "\n", (long)getpid());
	/* pending first: restored last, as the oldest changes */
	write_entries(f, st->pending, st->nr_pending);
	write_entries(f, st->s, st->nr);
	errno = EIO;
	if (fflush(f) || ferror(f) || fsync(fd))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, st->file))
		err = -errno;
	if (!err)
		err = fsync_dir_of(st->file);
out:
	if (err)
		unlink(tmp);
	return err;
}

int settings_load(struct settings *st, char *err, size_t errlen)
{
	char *text = read_whole(st->file), *p;
	bool magic = false;
	int lineno = 0;

	st->nr_pending = 0;
	if (!text) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot read %s: %s", st->file,
			 strerror(errno));
		return -1;
	}
	for (p = text; *p; ) {
		size_t len = strcspn(p, "\n");
		const char *line = p, *tab;
		struct setting *s;

		p += len + (p[len] == '\n');
		lineno++;
		if (!len || *line == '#')
			continue;
		if (!magic) {
			if (len != strlen(SETTINGS_MAGIC) ||
			    strncmp(line, SETTINGS_MAGIC, len))
				goto bad;
			magic = true;
			continue;
		}
		tab = memchr(line, '\t', len);
		if (!tab || st->nr_pending == SETTINGS_MAX)
			goto bad;
		s = &st->pending[st->nr_pending];
		if (unescape(line, tab - line, s->path, sizeof(s->path)) ||
		    !s->path[0] ||
		    unescape(tab + 1, line + len - tab - 1, s->old,
			     sizeof(s->old)))
			goto bad;
		st->nr_pending++;
	}
	free(text);
	if (!magic) {
		lineno = 0;
		goto bad_nofree;
	}
	return st->nr_pending;

bad:
	free(text);
bad_nofree:
	st->nr_pending = 0;
	if (lineno)
		snprintf(err, errlen,
			 "%s:%d: not a napd settings file line; check the settings by hand and remove the file",
			 st->file, lineno);
	else
		snprintf(err, errlen,
			 "%s: no '%s' line; check the settings by hand and remove the file",
			 st->file, SETTINGS_MAGIC);
	return -1;
}

int settings_change(struct settings *st, const char *path, const char *old,
		    const char *val)
{
	struct setting *s;
	bool adopted = false;
	int i, err;

	if (st->nr == SETTINGS_MAX)
		return -ENOSPC;
	s = &st->s[st->nr];
	if (path_fmt(s->path, sizeof(s->path), "%s", path) ||
	    path_fmt(s->old, sizeof(s->old), "%s", old))
		return -ENAMETOOLONG;
	/* A killed napd's original beats its setting, read now. */
	for (i = 0; i < st->nr_pending; i++) {
		if (strcmp(st->pending[i].path, path))
			continue;
		memcpy(s->old, st->pending[i].old, sizeof(s->old));
		st->pending[i] = st->pending[--st->nr_pending];
		adopted = true;
		break;
	}

	st->nr++;
	if (st->dry_run) {
		printf("napd: would write '%s' to %s\n", val, path);
		return 0;
	}
	if (st->file[0]) {
		err = settings_save(st);
		if (err) {
			/* Not saved, not changed: as it was before. */
			st->nr--;
			if (adopted)
				st->pending[st->nr_pending++] = *s;
			return err;
		}
	}
	return sysfs_write(path, val);
}

/* Write one original back; a file that is gone is a warning only. */
static int restore_one(const struct settings *st, const struct setting *s)
{
	int err;

	if (st->dry_run) {
		printf("napd: would write '%s' to %s\n", s->old, s->path);
		return 0;
	}
	err = sysfs_write(s->path, s->old);
	if (err == -ENOENT) {
		napd_log(LOG_WARNING, "%s is gone, '%s' not restored",
			 s->path, s->old);
		return 0;
	}
	if (err)
		napd_log(LOG_ERR, "cannot restore '%s' to %s: %s",
			 s->old, s->path, strerror(-err));
	return err;
}

bool settings_pending(const struct settings *st, const char *path)
{
	int i;

	for (i = 0; i < st->nr_pending; i++)
		if (!strcmp(st->pending[i].path, path))
			return true;
	return false;
}

int settings_restore_pending(struct settings *st)
{
	int first = 0, err;

	if (!st->nr_pending)
		return 0;
	while (st->nr_pending) {
		err = restore_one(st, &st->pending[--st->nr_pending]);
		if (err && !first)
			first = err;
	}
	/* On a failure the file keeps it; else the file needs it no more. */
	if (!first && st->file[0] && !st->dry_run)
		first = settings_save(st);
	return first;
}

int settings_restore(struct settings *st)
{
	int first = 0, err;

	while (st->nr) {
		err = restore_one(st, &st->s[--st->nr]);
		if (err && !first)
			first = err;
	}
	while (st->nr_pending) {
		err = restore_one(st, &st->pending[--st->nr_pending]);
		if (err && !first)
			first = err;
	}
	if (!first && st->file[0] && !st->dry_run &&
	    unlink(st->file) && errno != ENOENT)
		first = -errno;
	return first;
}

static int mkdir_parents(const char *dir)
{
	char path[PATH_MAX], *p;

	if (path_fmt(path, sizeof(path), "%s", dir))
		return -ENAMETOOLONG;
	for (p = path + 1; ; p++) {
		if (*p && *p != '/')
			continue;
		if (p[-1] != '/') {
			char c = *p;

			*p = '\0';
			/* the state itself only for root; parents as usual */
			if (mkdir(path, c ? 0755 : 0700) && errno != EEXIST)
				return -errno;
			*p = c;
		}
		if (!*p)
			break;
	}
	return 0;
}

int state_lock(const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX], pid[32] = "";
	int fd, ret;

	ret = mkdir_parents(dir);
	if (ret) {
		snprintf(err, errlen, "cannot create state directory %s: %s",
			 dir, strerror(-ret));
		return -1;
	}
	if (path_fmt(path, sizeof(path), "%s/napd.lock", dir)) {
		snprintf(err, errlen, "state directory path too long");
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path,
			 strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ret = errno;
		if (pread(fd, pid, sizeof(pid) - 1, 0) > 0)
			pid[strcspn(pid, "\n")] = '\0';
		close(fd);
		if (ret == EWOULDBLOCK)
			snprintf(err, errlen,
				 "another napd (pid %s) uses state directory %s",
				 pid[0] ? pid : "?", dir);
		else
			snprintf(err, errlen, "cannot lock %s: %s", path,
				 strerror(ret));
		return -1;
	}
	ret = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, ret, 0) != ret) {
		snprintf(err, errlen, "cannot write %s: %s", path,
			 strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}
