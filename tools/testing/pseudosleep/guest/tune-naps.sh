#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tune-naps.sh: the PM core's settings for frequent naps
# (Documentation/pseudosleep.rst, "Tuning for frequent naps"), as an
# administrator or a udev rule would set them: pm_async=0,
# sync_on_suspend=0 and runtime PM allowed on the PCI functions without
# a driver.  napd leaves them alone.
echo 0 > /sys/power/pm_async
echo 0 > /sys/power/sync_on_suspend
for d in /sys/bus/pci/devices/*; do
	[ -e "$d/driver" ] || echo auto > "$d/power/control"
done
