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
#include <sys/stat.h>

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

int settings_change(struct settings *st, const char *path, const char *old,
		    const char *val)
{
	struct setting *s;

	if (st->nr == SETTINGS_MAX)
		return -ENOSPC;
	s = &st->s[st->nr];
	if (path_fmt(s->path, sizeof(s->path), "%s", path) ||
	    path_fmt(s->old, sizeof(s->old), "%s", old))
		return -ENAMETOOLONG;

	st->nr++;
	if (st->dry_run) {
		printf("napd: would write '%s' to %s\n", val, path);
		return 0;
	}
	return sysfs_write(path, val);
}

int settings_restore(struct settings *st)
{
	int first = 0;

	while (st->nr) {
		struct setting *s = &st->s[--st->nr];
		int err;

		if (st->dry_run) {
			printf("napd: would write '%s' to %s\n", s->old,
			       s->path);
			continue;
		}
		err = sysfs_write(s->path, s->old);
		if (err) {
			fprintf(stderr, "napd: cannot restore '%s' to %s: %s\n",
				s->old, s->path, strerror(-err));
			if (!first)
				first = err;
		}
	}
	return first;
}
