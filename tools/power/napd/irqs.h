/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Find the IRQs of the wake network device and format them for
 * /sys/power/wake_irq.
 */
#ifndef NAPD_IRQS_H
#define NAPD_IRQS_H

#include <stddef.h>

#define NAPD_MAX_IRQS	64

struct irq_source {
	char devname[256];	/* basename of the device, e.g. "virtio0" */
	char from[4096];	/* where the IRQs were found, for messages */
	char armed[512];	/* which of them are armed and why */
	char all[512];		/* every vector found, "24-26", armed or not */
};

/*
 * Resolve the IRQs of network device @netdev.  Walks up from
 * <sysfs>/class/net/@netdev/device to the first directory with an
 * msi_irqs/ directory or a nonzero irq file; failing that, scans
 * <proc>/interrupts for lines named after the netdev or its device.
 * Of the IRQs found, only the receive vectors are kept when
 * /proc/interrupts names them apart (procnet_rx_vectors()); otherwise
 * all.  @src->armed says which.
 * Returns the number of IRQs stored in @irqs (0 if none was found).
 */
int irqs_resolve(const char *sysfs_root, const char *proc_root,
		 const char *netdev, unsigned int *irqs, int max,
		 struct irq_source *src);

/*
 * Sort @irqs in place and write them as a cpu-list style string with
 * ranges ("24-26,30").  Returns 0 or -1 if @size is too small.
 */
int irqlist_format(unsigned int *irqs, int nr, char *out, size_t size);

#endif /* NAPD_IRQS_H */
