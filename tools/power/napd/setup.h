/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Check what the kernel offers, then switch it to napping: mem_sleep,
 * wake_irq and the nosleep flags, each recorded for restore.
 */
#ifndef NAPD_SETUP_H
#define NAPD_SETUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "irqs.h"
#include "opts.h"
#include "sysfs.h"

#define NAPD_MAX_NICS	16

struct napd_setup {
	struct settings settings;
	unsigned int irqs[NAPD_MAX_IRQS];	/* of every NIC, armed */
	int nr_irqs;
	int nr_irqs_armed;	/* written to wake_irq; 0: not armed */
	char wake_irq[PATH_MAX];	/* /sys/power/wake_irq */
	char nics[NAPD_MAX_NICS][16];	/* the NICs under the wake devices */
	char nic_of[NAPD_MAX_NICS][16];	/* the wake device of each */
	struct irq_source irq_src[NAPD_MAX_NICS];	/* and their IRQs */
	int nr_nics;
	bool have_pseudo;		/* kernel has /sys/power/pseudosleep */
	char state[PATH_MAX];		/* /sys/power/state */
	char wakeup_count[PATH_MAX];
	/* pseudosleep/arm, the handshake's arm step; empty without one */
	char arm[PATH_MAX];
	char pm_wakeup_irq[PATH_MAX];
	char pseudo_dir[PATH_MAX];	/* /sys/power/pseudosleep */
	/* rx_packets of each wake device, or: */
	char rx_packets[NAPD_MAX_WAKE_DEVS][PATH_MAX];
	int nr_rx;
	/*
	 * --wake-on task: work for the servers ends a nap (watch.h), no IRQ
	 * is armed, and the activity signal is /proc/net/snmp's segments
	 * and datagrams for sockets (noise that the napping kernel answers
	 * itself does not hold naps back).
	 */
	bool wake_task;
	bool rx_snmp;			/* wake_task: /proc/net/snmp */
	char wake_why[PATH_MAX + 128];	/* why --wake-on auto chose irq */
	int recovered;			/* settings a killed napd saved */
	int nr_policy;			/* nosleep files the device policy set */
};

/*
 * Validate everything first, then change the settings.  With
 * @o->state_dir, every original is saved in its settings file before the
 * first change; a file left there by a napd that was killed is loaded
 * first, and its originals are taken as the originals (the files hold
 * the killed napd's settings); those this run does not change again are
 * written back.  On failure returns -1 with a message in @err; whatever
 * was already changed (or is still pending) is in @s->settings and must
 * be undone with napd_restore().
 */
int napd_rearm(const struct napd_opts *o, struct napd_setup *s);
int napd_setup(const struct napd_opts *o, struct napd_setup *s,
	       char *err, size_t errlen);

/*
 * The NICs under @o's wake devices into @s->nics and @s->nic_of, as
 * napd_setup() finds them (the ports of a bond, the parent of a VLAN),
 * without reading or changing anything else.  0, or -1 with @err.
 */
int napd_wake_nics(const struct napd_opts *o, struct napd_setup *s,
		   char *err, size_t errlen);

/* Put back every setting napd_setup() changed.  0 or -errno. */
int napd_restore(struct napd_setup *s);

#endif /* NAPD_SETUP_H */
