#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# quiet-nap.sh SECONDS MODE: SECONDS of quiet with no tracing, either as a
# nap armed on the RTC only and ended by its alarm (MODE nap), or awake
# and idle in a sleep (MODE awake), for comparing the two side by side.
# Prints "QUIET ok mode=MODE secs=S irqs=N", where irqs counts every
# interrupt the CPUs served (/proc/stat "intr": device IRQs and the
# local timer, IPIs and the other architecture interrupts) over the
# SECONDS, and for a nap "nap_ns=N wakeups=N" from /sys/power/pseudosleep
# (the interrupts served during the nap that did not end it).
set -e
secs=$1
mode=$2
s=/sys/power/pseudosleep
case "$mode" in
nap|awake) ;;
*) echo "usage: quiet-nap.sh SECONDS nap|awake" >&2; exit 2 ;;
esac
/usr/share/pseudosleep/nap-setup.sh rtc > /dev/null
# No trace event left on by nap-trace.sh.
echo 0 > /sys/kernel/tracing/events/enable 2>/dev/null || true
irqs() {
	awk '$1 == "intr" { print $2 }' /proc/stat
}
up() {
	cut -d' ' -f1 /proc/uptime
}
r=ok
t0=$(up)
i0=$(irqs)
if [ "$mode" = nap ]; then
	echo 0 > /sys/class/rtc/rtc0/wakealarm
	echo "+$secs" > /sys/class/rtc/rtc0/wakealarm
	echo mem > /sys/power/state || r=aborted
else
	sleep "$secs"
fi
i1=$(irqs)
t1=$(up)
extra=""
[ "$mode" = nap ] &&
	extra=" nap_ns=$(cat $s/last_nap_ns) wakeups=$(cat $s/spurious_wakeups)"
echo "QUIET $r mode=$mode secs=$(echo "$t0 $t1" | awk '{ print $2 - $1 }')" \
	"irqs=$((i1 - i0))$extra"
