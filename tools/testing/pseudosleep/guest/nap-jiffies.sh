#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nap-jiffies.sh NAPS SECS: NAPS naps of SECS s each, armed on the RTC only,
# with irq_handler_entry traced twice: in the top-level buffer on the
# monotonic clock and in instance "jiffies" on the jiffies clock
# ("uptime", in USER_HZ units).  Each interrupt is one event in each
# buffer, so the host pairs them and sees how far behind jiffies were
# when each handler ran.  The traces go to /mnt/add/{mono,jiffies}.txt.
set -e
T=/sys/kernel/tracing
/usr/share/pseudosleep/nap-setup.sh rtc > /dev/null
echo 0 > $T/events/enable
mkdir -p $T/instances/jiffies
J=$T/instances/jiffies
echo mono > $T/trace_clock
echo uptime > $J/trace_clock
echo 2048 > $T/buffer_size_kb
echo 2048 > $J/buffer_size_kb
echo > $T/trace
echo 1 > $J/events/irq/irq_handler_entry/enable
echo 1 > $T/events/irq/irq_handler_entry/enable
echo "JIFFIES-READY"
i=0
while [ $i -lt "$1" ]; do
	i=$((i + 1))
	echo 0 > /sys/class/rtc/rtc0/wakealarm
	echo "+$2" > /sys/class/rtc/rtc0/wakealarm
	r=ok
	echo mem > /sys/power/state || r=aborted
	echo "NAP $i $r wake_irq=$(cat /sys/power/pm_wakeup_irq 2>/dev/null || echo none)" \
		"spurious=$(cat /sys/power/pseudosleep/spurious_wakeups)"
done
echo 0 > $J/events/irq/irq_handler_entry/enable
echo 0 > $T/events/irq/irq_handler_entry/enable
cat $T/trace > /mnt/add/mono.txt
cat $J/trace > /mnt/add/jiffies.txt
rmdir $J
echo "JIFFIES-DONE"
