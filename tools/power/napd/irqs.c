// SPDX-License-Identifier: GPL-2.0
/*
 * IRQ resolution for the wake device.
 *
 * A virtio NIC is /sys/class/net/eth0/device -> .../0000:00:02.0/virtio0:
 * the virtio device has no interrupt of its own, its PCI parent owns the
 * MSI-X vectors.  Hence the walk up the real path.  Of the vectors found
 * only the receive ones are armed when their names in /proc/interrupts
 * tell them apart: a transmit completion or a config change is no request.
 * Otherwise every vector of the NIC is armed.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "irqs.h"
#include "procnet.h"
#include "sysfs.h"

static void add_irq(unsigned int irq, unsigned int *irqs, int *n, int max)
{
	int i;

	for (i = 0; i < *n; i++)
		if (irqs[i] == irq)
			return;
	if (*n < max)
		irqs[(*n)++] = irq;
}

static int read_msi_irqs(const char *dir, unsigned int *irqs, int max)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (path_fmt(path, sizeof(path), "%s/msi_irqs", dir))
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *end;
		unsigned long v;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		v = strtoul(de->d_name, &end, 10);
		if (!*end && v && v < 1000000)
			add_irq(v, irqs, &n, max);
	}
	closedir(d);
	return n;
}

static int legacy_irq(const char *dir, unsigned int *irqs)
{
	char path[PATH_MAX];
	unsigned long long v;

	if (path_fmt(path, sizeof(path), "%s/irq", dir) ||
	    sysfs_read_ull(path, &v) || !v || v >= 1000000)
		return 0;
	irqs[0] = v;
	return 1;
}

static int walk_up(const char *sysfs_root, const char *netdev,
		   unsigned int *irqs, int max, struct irq_source *src)
{
	char link[PATH_MAX], cur[PATH_MAX], stop[PATH_MAX], *slash;
	size_t stop_len;
	int n;

	if (path_fmt(link, sizeof(link), "%s/class/net/%s/device",
		     sysfs_root, netdev) || !realpath(link, cur))
		return 0;
	slash = strrchr(cur, '/');
	snprintf(src->devname, sizeof(src->devname), "%s", slash + 1);

	/* Never look above <sysfs>/devices: nothing there is the NIC's. */
	if (path_fmt(link, sizeof(link), "%s/devices", sysfs_root) ||
	    !realpath(link, stop))
		return 0;
	stop_len = strlen(stop);

	while (strlen(cur) > stop_len && !strncmp(cur, stop, stop_len) &&
	       cur[stop_len] == '/') {
		n = read_msi_irqs(cur, irqs, max);
		if (!n)
			n = legacy_irq(cur, irqs);
		if (n) {
			snprintf(src->from, sizeof(src->from), "%s", cur);
			return n;
		}
		slash = strrchr(cur, '/');
		*slash = '\0';
	}
	return 0;
}

int irqs_resolve(const char *sysfs_root, const char *proc_root,
		 const char *netdev, unsigned int *irqs, int max,
		 struct irq_source *src)
{
	const char *names[2] = { netdev, NULL };
	char path[PATH_MAX];
	char *text;
	int n;

	char rx_names[400];
	unsigned int all[NAPD_MAX_IRQS];
	int n_rx;

	memset(src, 0, sizeof(*src));
	n = walk_up(sysfs_root, netdev, irqs, max, src);
	if (path_fmt(path, sizeof(path), "%s/interrupts", proc_root))
		text = NULL;
	else
		text = read_whole(path);
	if (!n && text) {
		if (src->devname[0])
			names[1] = src->devname;
		n = procnet_irqs_by_name(text, names, names[1] ? 2 : 1, irqs,
					 max);
		if (n)
			snprintf(src->from, sizeof(src->from), "%s", path);
	}
	if (!n) {
		free(text);
		return 0;
	}
	/* The copy is sorted for the message; @irqs keeps its order. */
	if (n > NAPD_MAX_IRQS ||
	    irqlist_format(memcpy(all, irqs, n * sizeof(*irqs)), n, src->all,
			   sizeof(src->all)))
		snprintf(src->all, sizeof(src->all), "%d vectors", n);
	n_rx = text ? procnet_rx_vectors(text, irqs, n, rx_names,
					 sizeof(rx_names)) : 0;
	free(text);
	if (n_rx && n_rx < n) {
		snprintf(src->armed, sizeof(src->armed),
			 "receive vectors only (%s), %d other vector%s not armed",
			 rx_names, n - n_rx, n - n_rx == 1 ? "" : "s");
		return n_rx;
	}
	snprintf(src->armed, sizeof(src->armed), "%s",
		 n_rx ? "all vectors (all are receive vectors)" :
		 "all vectors (receive vectors not named apart in interrupts)");
	return n;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

int irqlist_format(unsigned int *irqs, int nr, char *out, size_t size)
{
	size_t len = 0;
	int i, j, n;

	qsort(irqs, nr, sizeof(*irqs), cmp_uint);
	if (!size)
		return -1;
	out[0] = '\0';
	for (i = 0; i < nr; i = j) {
		/* Extend a run of consecutive numbers (duplicates fold in). */
		for (j = i + 1; j < nr && irqs[j] <= irqs[j - 1] + 1; j++)
			;
		if (irqs[j - 1] == irqs[i])
			n = snprintf(out + len, size - len, "%s%u",
				     len ? "," : "", irqs[i]);
		else
			n = snprintf(out + len, size - len, "%s%u-%u",
				     len ? "," : "", irqs[i], irqs[j - 1]);
		if (n < 0 || (size_t)n >= size - len)
			return -1;
		len += n;
	}
	return 0;
}
