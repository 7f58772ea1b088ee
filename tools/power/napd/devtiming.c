// SPDX-License-Identifier: GPL-2.0
/*
 * Per-device nap costs from the PM core's trace events.  See devtiming.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler.h"
#include "fail.h"
#include "devtiming.h"
#include "sysfs.h"

static const char *const events[] = {
	"power/device_pm_callback_start",
	"power/device_pm_callback_end",
	"power/suspend_resume",
};

/* tracefs: <sysfs>/kernel/tracing, or the old debugfs place. */
static int tracefs_dir(const char *root, char *out, size_t size)
{
	char path[PATH_MAX];

	if (!path_fmt(path, sizeof(path), "%s/kernel/tracing/instances", root) &&
	    path_exists(path))
		return path_fmt(out, size, "%s/kernel/tracing", root);
	if (!path_fmt(path, sizeof(path),
		      "%s/kernel/debug/tracing/instances", root) &&
	    path_exists(path))
		return path_fmt(out, size, "%s/kernel/debug/tracing", root);
	return -ENOENT;
}

static int instance_dir(const char *root, char *out, size_t size)
{
	char tr[PATH_MAX];
	int ret = tracefs_dir(root, tr, sizeof(tr));

	if (ret)
		return ret;
	return path_fmt(out, size, "%s/instances/" DEVTIMING_INSTANCE, tr);
}

int devtiming_start(const char *root, char *err, size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX];
	unsigned int i;
	int ret;

	if (instance_dir(root, dir, sizeof(dir)))
		return fail(err, errlen,
			    "no tracefs under %s/kernel (tracing or debug/tracing)",
			    root);
	if (mkdir(dir, 0700) && errno != EEXIST)
		return fail(err, errlen, "cannot create trace instance %s: %s",
			    dir, strerror(errno));
	/* Room for a few naps' events on a server; old ones overwritten. */
	if (!path_fmt(path, sizeof(path), "%s/buffer_size_kb", dir))
		sysfs_write(path, "512");
	for (i = 0; i < ARRAY_SIZE(events); i++) {
		if (path_fmt(path, sizeof(path), "%s/events/%s/enable", dir,
			     events[i]))
			return fail(err, errlen, "path too long: %s", dir);
		ret = sysfs_write(path, "1");
		if (ret) {
			devtiming_stop(root);
			return fail(err, errlen, "cannot enable %s: %s", path,
				    strerror(-ret));
		}
	}
	return 0;
}

int devtiming_stop(const char *root)
{
	char dir[PATH_MAX];

	if (instance_dir(root, dir, sizeof(dir)) || !path_exists(dir))
		return 0;
	return rmdir(dir) ? -errno : 0;
}

void devcosts_free(struct devcosts *c)
{
	free(c->c);
	memset(c, 0, sizeof(*c));
}

const struct devcost *devcost_find(const struct devcosts *c,
				   const char *name)
{
	int i;

	for (i = 0; i < c->nr; i++)
		if (!strcmp(c->c[i].name, name))
			return &c->c[i];
	return NULL;
}

/* Per device while parsing: the open callback and its phase. */
struct pending {
	char name[64];
	double start;
	bool open, resume, walk;
};

static struct devcost *cost_get(struct devcosts *c, const char *name)
{
	struct devcost *n;

	n = (struct devcost *)devcost_find(c, name);
	if (n)
		return n;
	if (c->nr == c->cap) {
		int cap = c->cap ? 2 * c->cap : 64;

		n = realloc(c->c, cap * sizeof(*n));
		if (!n)
			return NULL;
		c->c = n;
		c->cap = cap;
	}
	n = &c->c[c->nr++];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	return n;
}

/*
 * The timestamp of an event line: the number before ": <event>:" as in
 * "  kworker/u8:1-57  [000] .....  123.456789: device_pm_callback_end:".
 */
static bool line_ts(const char *line, const char *ev, double *ts)
{
	const char *end = ev - 2, *p;
	char *stop;

	if (end <= line || strncmp(end, ": ", 2))
		return false;
	for (p = end; p > line && p[-1] != ' '; p--)
		;
	*ts = strtod(p, &stop);
	return stop == end;
}

/* "DRIVER DEVICE, <rest>": DEVICE (the last word before ", "). */
static bool dev_word(const char *s, const char *end_mark, char *out,
		     size_t size)
{
	const char *end = strstr(s, end_mark), *b;

	if (!end)
		return false;
	for (b = end; b > s && b[-1] != ' '; b--)
		;
	if ((size_t)(end - b) >= size || end == b)
		return false;
	memcpy(out, b, end - b);
	out[end - b] = '\0';
	return true;
}

int devtiming_parse(const char *text, struct devcosts *out)
{
	static const char start_ev[] = "device_pm_callback_start: ";
	static const char end_ev[] = "device_pm_callback_end: ";
	struct pending *pend = NULL;
	int nr_pend = 0, cap_pend = 0, i;
	const char *line = text, *nap = NULL, *p;

	memset(out, 0, sizeof(*out));
	/* Only the last nap: from its dpm_prepare on. */
	for (p = text; (p = strstr(p, "suspend_resume: dpm_prepare[")); p++) {
		const char *eol = strchr(p, '\n');

		if (strstr(p, " begin") && (!eol || strstr(p, " begin") < eol)) {
			out->naps++;
			nap = p;
		}
	}
	if (!nap)
		return 0;
	for (line = nap; line > text && line[-1] != '\n'; line--)
		;

	for (; *line; line = p) {
		const char *eol = strchr(line, '\n'), *ev;
		char l[512], name[64];
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		struct pending *pe = NULL;
		bool is_start;
		double ts;

		p = line + len + (eol ? 1 : 0);
		if (len >= sizeof(l))
			continue;
		memcpy(l, line, len);
		l[len] = '\0';
		ev = strstr(l, start_ev);
		is_start = ev;
		if (is_start) {
			if (!dev_word(ev + sizeof(start_ev) - 1, ", parent: ",
				      name, sizeof(name)) ||
			    !line_ts(l, ev, &ts))
				continue;
		} else {
			ev = strstr(l, end_ev);
			if (!ev ||
			    !dev_word(ev + sizeof(end_ev) - 1, ", err=", name,
				      sizeof(name)) ||
			    !line_ts(l, ev, &ts))
				continue;
		}
		for (i = 0; i < nr_pend; i++)
			if (!strcmp(pend[i].name, name))
				pe = &pend[i];
		if (!pe) {
			if (nr_pend == cap_pend) {
				int cap = cap_pend ? 2 * cap_pend : 64;
				struct pending *n = realloc(pend,
							    cap * sizeof(*n));

				if (!n)
					goto oom;
				pend = n;
				cap_pend = cap;
			}
			pe = &pend[nr_pend++];
			memset(pe, 0, sizeof(*pe));
			snprintf(pe->name, sizeof(pe->name), "%s", name);
		}
		if (is_start) {
			pe->open = true;
			pe->start = ts;
			pe->resume = strstr(ev, "[resume]");
			/*
			 * prepare and complete have no ops name (", [");
			 * the PM core traces them for kept devices too,
			 * whose callbacks it then skips.
			 */
			pe->walk = strstr(ev, ", [");
		} else if (pe->open) {
			struct devcost *c = cost_get(out, name);
			double ms = (ts - pe->start) * 1000.0;

			if (!c)
				goto oom;
			pe->open = false;
			if (ms < 0)
				ms = 0;
			if (pe->resume)
				c->resume_ms += ms;
			else
				c->suspend_ms += ms;
			if (!pe->walk)
				c->callbacks++;
		}
	}
	free(pend);
	return 0;
oom:
	free(pend);
	devcosts_free(out);
	return -1;
}

int devtiming_read(const char *root, struct devcosts *out)
{
	char dir[PATH_MAX], path[PATH_MAX];
	char *text;
	int ret;

	memset(out, 0, sizeof(*out));
	if (instance_dir(root, dir, sizeof(dir)) || !path_exists(dir))
		return -ENOENT;
	if (path_fmt(path, sizeof(path), "%s/trace", dir))
		return -ENAMETOOLONG;
	text = read_whole(path);
	if (!text)
		return -errno;
	ret = devtiming_parse(text, out);
	free(text);
	return ret ? -ENOMEM : 0;
}
