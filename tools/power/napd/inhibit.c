// SPDX-License-Identifier: GPL-2.0
/*
 * logind's sleep inhibitors, read from its state files.
 *
 * The public interface is D-Bus (the BlockInhibited property of
 * org.freedesktop.login1.Manager); napd is a static binary without a
 * D-Bus library, and a bus call (or a busctl run) before every nap would
 * cost more than the nap check itself.  logind keeps each lock in
 * /run/systemd/inhibit/<id> (WHAT=, MODE=, UID=, PID=, WHO=, WHY=), next
 * to a FIFO <id>.ref whose closing releases it, and removes the file when
 * the lock goes.  The format is logind's own, stable since systemd 183;
 * reading it is one directory walk per nap attempt.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "inhibit.h"

/* The value of "KEY=" in @text into @val (cut to @size), or false. */
static bool field(const char *text, const char *key, char *val, size_t size)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			size_t len = strcspn(p + klen + 1, "\n");

			if (len >= size)
				len = size - 1;
			memcpy(val, p + klen + 1, len);
			val[len] = '\0';
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

static bool has_token(const char *list, const char *tok)
{
	size_t tlen = strlen(tok);
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ":");

		if (len == tlen && !strncmp(p, tok, tlen))
			return true;
		p += len + (p[len] == ':');
	}
	return false;
}

int inhibit_parse(const char *text, char *why, size_t size)
{
	char what[256], mode[32], who[128] = "?", reason[128] = "", pid[24] = "?";

	if (!field(text, "WHAT", what, sizeof(what)) ||
	    !field(text, "MODE", mode, sizeof(mode)) ||
	    strcmp(mode, "block") || !has_token(what, "sleep"))
		return 0;
	field(text, "WHO", who, sizeof(who));
	field(text, "WHY", reason, sizeof(reason));
	field(text, "PID", pid, sizeof(pid));
	snprintf(why, size, "sleep inhibitor held by %s (pid %s)%s%s", who,
		 pid, reason[0] ? ": " : "", reason);
	return 1;
}

/* One lock's state file; its FIFO and anything odd are skipped. */
static int read_lock(int dirfd, const char *name, char *buf, size_t size)
{
	struct stat st;
	ssize_t len;
	int fd;

	/* O_NONBLOCK: a FIFO must not block the open */
	fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;	/* released meanwhile: ENOENT */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	len = read(fd, buf, size - 1);
	close(fd);
	if (len < 0)
		return -errno;
	buf[len] = '\0';
	return 0;
}

int inhibit_sleep_held(const char *dir, char *why, size_t size)
{
	struct dirent *de;
	char buf[4096];
	int held = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!held && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' ||
		    (len > 4 && !strcmp(de->d_name + len - 4, ".ref")))
			continue;
		if (read_lock(dirfd(d), de->d_name, buf, sizeof(buf)))
			continue;
		held = inhibit_parse(buf, why, size);
	}
	closedir(d);
	return held;
}
