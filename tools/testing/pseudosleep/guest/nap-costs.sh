#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nap-costs.sh [N]: N rounds (default 5) of untraced naps armed on the RTC,
# each ended by its alarm, one nap per mode:
#   default  as booted: devices with no PM work sit out the device phases
#            (pseudosleep.skip_no_pm_work=1)
#   every    skip_no_pm_work=0: every device takes part
#   tuned    the default, with the PM core's own knobs for a machine that
#            sleeps often: /sys/power/pm_async=0 (device callbacks run in
#            order, with no async work items) and sync_on_suspend=0
#   rtpm     the default, with runtime PM allowed (power/control=auto) on
#            the PCI functions without a driver, so that a suspend
#            completes them directly
#   tunedrt  tuned and rtpm together
# Prints the phase costs of each nap from the nap's own counters
# (/sys/power/pseudosleep/*_ns) as "COST i mode=M name=ns ...", then
# COSTS-END.  Untraced, so the phases are what a nap costs, not what
# tracing it costs.  Every setting is put back at the end.
set -e
n=${1:-5}
/usr/share/pseudosleep/nap-setup.sh rtc > /dev/null
s=/sys/power/pseudosleep
p=/sys/module/pseudosleep/parameters/skip_no_pm_work
saved="$(cat $p) $(cat /sys/power/pm_async) $(cat /sys/power/sync_on_suspend)"
# The PCI functions without a driver, and their power/control as booted.
unbound=""
for d in /sys/bus/pci/devices/*; do
	[ -e "$d/driver" ] || unbound="$unbound $d:$(cat "$d/power/control")"
done
nunbound=$(echo "$unbound" | wc -w)
# How many of them are runtime-suspended.
unbound_suspended() {
	k=0
	for dc in $unbound; do
		[ "$(cat "${dc%:*}/power/runtime_status")" != suspended ] ||
			k=$((k + 1))
	done
	echo "$k"
}
# set_knobs SKIP ASYNC SYNC RTPM: RTPM 1 is power/control=auto on the
# functions without a driver, 0 what they had.
set_knobs() {
	echo "$1" > $p
	echo "$2" > /sys/power/pm_async
	echo "$3" > /sys/power/sync_on_suspend
	for dc in $unbound; do
		if [ "$4" = 1 ]; then c=auto; else c=${dc##*:}; fi
		echo "$c" > "${dc%:*}/power/control"
	done
	# The runtime suspend is queued work: give it up to a second.
	t=0
	while [ "$4" = 1 ] && [ $t -lt 10 ] &&
	      [ "$(unbound_suspended)" -lt "$nunbound" ]; do
		sleep 0.1
		t=$((t + 1))
	done
	return 0
}
i=0
while [ "$i" -lt "$n" ]; do
	for mode in default every tuned rtpm tunedrt; do
		case $mode in
		default) set_knobs 1 1 1 0 ;;
		every) set_knobs 0 1 1 0 ;;
		tuned) set_knobs 1 0 0 0 ;;
		rtpm) set_knobs 1 1 1 1 ;;
		tunedrt) set_knobs 1 0 0 1 ;;
		esac
		case $mode in
		rtpm | tunedrt)
			echo "UNBOUND $i mode=$mode functions=$nunbound suspended=$(unbound_suspended)"
			;;
		esac
		echo 0 > /sys/class/rtc/rtc0/wakealarm
		echo +2 > /sys/class/rtc/rtc0/wakealarm
		naps=$(cat $s/naps)
		echo mem > /sys/power/state || true
		if [ "$(cat $s/naps)" -gt "$naps" ]; then
			line="COST $i mode=$mode"
			for f in entry_sync entry_freeze entry_suspend_devices \
				 entry_cpu_halt exit_cpu_wake exit_resume_devices \
				 exit_thaw; do
				line="$line $f=$(cat $s/${f}_ns)"
			done
			echo "$line"
		else
			echo "COST $i mode=$mode aborted"
		fi
	done
	i=$((i + 1))
done
# shellcheck disable=SC2086
set_knobs $saved 0
echo COSTS-END
