#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# quiet-nap.sh SECONDS DEFER_MS: one nap armed on the RTC only and ended by
# its alarm after SECONDS, with pseudosleep.timer_defer_ms=DEFER_MS, and no
# tracing.  Prints "QUIET defer_ms=N nap_ns=N wakeups=N irqs=N", where
# wakeups are the halted CPUs' wakeups during the nap (spurious_wakeups)
# and irqs every interrupt counted in /proc/interrupts over the whole
# "echo mem", entry and exit included.
set -e
secs=$1
defer=$2
s=/sys/power/pseudosleep
p=/sys/module/pseudosleep/parameters/timer_defer_ms
/usr/share/pseudosleep/nap-setup.sh rtc > /dev/null
# No trace event left on by nap-trace.sh.
echo 0 > /sys/kernel/tracing/events/enable 2>/dev/null || true
# Sum of every row of /proc/interrupts (all CPUs' columns).
irqs() {
	awk 'NR > 1 { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i }
	     END { print n }' /proc/interrupts
}
saved=$(cat $p)
echo "$defer" > $p
echo 0 > /sys/class/rtc/rtc0/wakealarm
echo "+$secs" > /sys/class/rtc/rtc0/wakealarm
i0=$(irqs)
r=ok
echo mem > /sys/power/state || r=aborted
i1=$(irqs)
echo "$saved" > $p
echo "QUIET $r defer_ms=$defer nap_ns=$(cat $s/last_nap_ns)" \
	"wakeups=$(cat $s/spurious_wakeups) irqs=$((i1 - i0))"
