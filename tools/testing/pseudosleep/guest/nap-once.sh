#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nap-once.sh N: nap N times in a row, printing after each nap what woke
# it and the statistics; stops early when the host creates /mnt/add/stop.
n=${1:-1}
i=0
while [ $i -lt "$n" ] && [ ! -e /mnt/add/stop ]; do
	i=$((i + 1))
	echo "NAPPING $i"
	if echo mem > /sys/power/state 2>/dev/null; then r=ok; else r=aborted; fi
	s=/sys/power/pseudosleep
	echo "NAP $i $r wake_irq=$(cat /sys/power/pm_wakeup_irq 2>/dev/null || echo none)" \
		"naps=$(cat $s/naps) aborted=$(cat $s/aborted_naps)" \
		"latency_ns=$(cat $s/wake_latency_ns) nap_ns=$(cat $s/last_nap_ns)" \
		"spurious=$(cat $s/spurious_wakeups)" \
		"source=$(cat $s/last_wake_source)"
done
echo "NAPS-DONE"
