/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PSEUDOSLEEP_UTIL_H
#define PSEUDOSLEEP_UTIL_H

#include <stdbool.h>

#define PS_STATS "/sys/power/pseudosleep/"
/* pseudosleep.* parameters, also shown under /sys/module */
#define PS_PARAM "/sys/module/pseudosleep/parameters/"
#define SKIP_NO_PM_WORK PS_PARAM "skip_no_pm_work"

/* Read a sysfs file into buf (trailing newline removed); -errno on error. */
int ps_read(const char *path, char *buf, int len);
/* Write exactly str to path with one write(); 0 or -errno. */
int ps_write(const char *path, const char *str);
/* Read a decimal value; -1 on error. */
long long ps_read_num(const char *path);
/* The IRQ whose /proc/interrupts name contains name; -1 if none. */
int ps_find_irq(const char *name);
/* An IRQ that has a descriptor but no handler; -1 if none. */
int ps_irq_without_handler(void);
/* The sysfs device directory owning the RTC, for power/nosleep. */
bool ps_have_pseudosleep(void);

#endif
