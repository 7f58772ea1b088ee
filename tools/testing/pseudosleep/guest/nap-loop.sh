#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nap-loop.sh N MODE KNOBS: N naps armed on the RTC, each ended by its
# alarm one second later (MODE nap), or N one-second sleeps doing the same
# RTC writes without the nap (MODE sleep, the baseline nap-profile
# subtracts).  KNOBS "default" leaves the PM settings as booted; "tuned"
# applies tune-naps.sh, the settings of nap-costs.sh's tunedrt column.
# Prints "NAP-LOOP naps=K" at the end.
set -e
n=$1
mode=$2
knobs=$3
case $mode:$knobs in
nap:default | nap:tuned | sleep:default | sleep:tuned) ;;
*) echo "usage: nap-loop.sh N nap|sleep default|tuned" >&2; exit 2 ;;
esac
/usr/share/pseudosleep/nap-setup.sh rtc > /dev/null
if [ "$knobs" = tuned ]; then
	/usr/share/pseudosleep/tune-naps.sh
	sleep 2
fi
i=0
while [ "$i" -lt "$n" ]; do
	echo 0 > /sys/class/rtc/rtc0/wakealarm
	echo +1 > /sys/class/rtc/rtc0/wakealarm
	if [ "$mode" = nap ]; then
		echo mem > /sys/power/state || true
	else
		sleep 1
	fi
	i=$((i + 1))
done
echo "NAP-LOOP naps=$(cat /sys/power/pseudosleep/naps)"
