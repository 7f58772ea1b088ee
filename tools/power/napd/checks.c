// SPDX-License-Identifier: GPL-2.0
/*
 * The idle checks: /proc/stat, /proc/diskstats and the process list.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "sysfs.h"

static const char *const check_names[NR_CHECKS] = {
	[CHECK_CONN] = "connections",
	[CHECK_PACKETS] = "packets",
	[CHECK_UDP] = "udp",
	[CHECK_PROCESS] = "process",
	[CHECK_CPU] = "cpu",
	[CHECK_RUNNABLE] = "runnable",
	[CHECK_DISK] = "disk",
	[CHECK_HANDSHAKE] = "handshake",
	[CHECK_INHIBITOR] = "inhibitor",
	[CHECK_PAUSED] = "paused",
	[CHECK_BACKOFF] = "backoff",
	[CHECK_WAKE_SOURCE] = "wake_source",
	[CHECK_LINK] = "link",
};

const char *check_name(enum napd_check c)
{
	return c < NR_CHECKS ? check_names[c] : "?";
}

/* Start of the line beginning with @key in @text, or NULL. */
static const char *find_line(const char *text, const char *key)
{
	size_t len = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, key, len))
			return p + len;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

int parse_proc_stat(const char *text, struct cpu_sample *s)
{
	unsigned long long v[10] = { 0 };
	const char *p = find_line(text, "cpu ");
	unsigned long running;
	char *end;
	int n;

	if (!p)
		return -1;
	/* user nice system idle iowait irq softirq steal (guest is in user) */
	n = sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n < 4)
		return -1;
	s->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	s->total = s->busy + v[3] + v[4];
	s->self = 0;
	p = find_line(text, "procs_running ");
	if (!p)
		return -1;
	errno = 0;
	running = strtoul(p, &end, 10);
	if (end == p || errno)
		return -1;
	s->running = running;
	return 0;
}

unsigned int cpu_use_permille(const struct cpu_sample *from,
			      const struct cpu_sample *to)
{
	unsigned long long busy, total;

	/* No tick in between (or counters went back): nothing measured. */
	if (to->total <= from->total || to->busy < from->busy)
		return 0;
	busy = to->busy - from->busy;
	total = to->total - from->total;
	/* the two counters are sampled apart: never below nothing */
	if (to->self > from->self)
		busy -= to->self - from->self < busy ?
			to->self - from->self : busy;
	if (busy > total)
		busy = total;
	return busy * 1000 / total;
}

int parse_diskstats(const char *text, struct disk_sample *s)
{
	const char *p = text;

	memset(s, 0, sizeof(*s));
	while (*p) {
		unsigned long long f[20] = { 0 };
		unsigned int major, minor;
		char name[64], line[1024];
		size_t len = strcspn(p, "\n");
		int n;

		if (len >= sizeof(line))
			return -1;
		memcpy(line, p, len);
		line[len] = '\0';
		p += len + (p[len] == '\n');
		if (!*line)
			continue;
		/*
		 * major minor name, then reads (4), writes (4), in flight,
		 * io ticks, weighted ticks; since 4.18 discards (4), since
		 * 5.5 flushes (2).
		 */
		n = sscanf(line,
			   " %u %u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &major, &minor, name, &f[0], &f[1], &f[2], &f[3],
			   &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10],
			   &f[11], &f[12], &f[13], &f[14], &f[15], &f[16]);
		if (n < 3 + 11)
			return -1;
		s->ios += f[0] + f[4] + f[11] + f[15];
		s->in_flight += f[8];
	}
	return 0;
}

char parse_pid_stat(const char *text, char *comm, size_t size)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	size_t len;

	/* The name may itself hold ')' or spaces: take the last ')'. */
	if (!open || !close || close < open || close[1] != ' ' || !close[2])
		return 0;
	len = close - open - 1;
	if (len >= size)
		len = size - 1;
	memcpy(comm, open + 1, len);
	comm[len] = '\0';
	return close[2];
}

int find_process(const char *proc_root, const char *const names[], int nr,
		 pid_t self, char *found, size_t size)
{
	struct dirent *de;
	DIR *d;
	int ret = 0;

	if (!nr)
		return 0;
	d = opendir(proc_root);
	if (!d)
		return -errno;
	while (!ret && (de = readdir(d))) {
		char path[PATH_MAX], buf[512], comm[64], state;
		int i;

		if (!isdigit((unsigned char)de->d_name[0]) ||
		    atol(de->d_name) == self)
			continue;
		/* comm first: cheaper for procfs to make than stat */
		if (path_fmt(path, sizeof(path), "%s/%s/comm", proc_root,
			     de->d_name))
			continue;
		/* Gone since readdir: not running, then. */
		if (sysfs_read(path, comm, sizeof(comm)) < 0)
			continue;
		for (i = 0; i < nr; i++)
			if (!strcmp(comm, names[i]))
				break;
		if (i == nr)
			continue;
		/* A match: is it alive (not a zombie waiting for its parent)? */
		if (path_fmt(path, sizeof(path), "%s/%s/stat", proc_root,
			     de->d_name) ||
		    sysfs_read(path, buf, sizeof(buf)) < 0)
			continue;
		state = parse_pid_stat(buf, comm, sizeof(comm));
		if (!state || state == 'Z' || state == 'X')
			continue;
		snprintf(found, size, "%s (pid %s)", comm, de->d_name);
		ret = 1;
	}
	closedir(d);
	return ret;
}

int link_state(const char *sysfs_root, const char *dev, char *state,
	       size_t size)
{
	char path[PATH_MAX];
	int ret = path_fmt(path, sizeof(path), "%s/class/net/%s/operstate",
			   sysfs_root, dev);

	if (!ret)
		ret = sysfs_read(path, state, size);
	if (ret < 0) {
		snprintf(state, size, "%s", strerror(-ret));
		return ret;
	}
	return operstate_up(state);
}

bool operstate_up(const char *state)
{
	size_t len = strcspn(state, "\n");

	return (len == 2 && !strncmp(state, "up", 2)) ||
	       (len == 7 && !strncmp(state, "unknown", 7));
}
