#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nap-costs.sh [N]: N pairs (default 5) of untraced naps armed on the RTC,
# each ended by its alarm: one with pseudosleep.skip_no_pm_work=1 (devices
# with no PM work sit out the device phases, the default), one with 0
# (every device takes part).  Prints the phase costs of each nap from the
# nap's own counters (/sys/power/pseudosleep/*_ns) as
# "COST i skip=S name=ns ...", then COSTS-END.  Untraced, so the phases are
# what a nap costs, not what tracing it costs.
set -e
n=${1:-5}
/usr/share/pseudosleep/nap-setup.sh rtc > /dev/null
s=/sys/power/pseudosleep
p=/sys/module/pseudosleep/parameters/skip_no_pm_work
saved=$(cat $p)
i=0
while [ "$i" -lt "$n" ]; do
	for skip in 1 0; do
		echo $skip > $p
		echo 0 > /sys/class/rtc/rtc0/wakealarm
		echo +2 > /sys/class/rtc/rtc0/wakealarm
		naps=$(cat $s/naps)
		echo mem > /sys/power/state || true
		if [ "$(cat $s/naps)" -gt "$naps" ]; then
			line="COST $i skip=$skip"
			for f in entry_sync entry_freeze entry_suspend_devices \
				 entry_cpu_halt exit_cpu_wake exit_resume_devices \
				 exit_thaw; do
				line="$line $f=$(cat $s/${f}_ns)"
			done
			echo "$line"
		else
			echo "COST $i skip=$skip aborted"
		fi
	done
	i=$((i + 1))
done
echo "$saved" > $p
echo COSTS-END
