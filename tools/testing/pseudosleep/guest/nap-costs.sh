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
set_knobs() {
	echo "$1" > $p
	echo "$2" > /sys/power/pm_async
	echo "$3" > /sys/power/sync_on_suspend
}
i=0
while [ "$i" -lt "$n" ]; do
	for mode in default every tuned; do
		case $mode in
		default) set_knobs 1 1 1 ;;
		every) set_knobs 0 1 1 ;;
		tuned) set_knobs 1 0 0 ;;
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
set_knobs $saved
echo COSTS-END
