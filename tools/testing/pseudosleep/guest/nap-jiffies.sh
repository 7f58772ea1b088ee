#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nap-jiffies.sh NAPS SECS: NAPS naps of SECS s each, armed on the RTC only,
# with an event probe on irq_handler_entry that reads jiffies_64: each
# interrupt is one event in one buffer, stamped on the monotonic clock and
# carrying the jiffies its handler saw, so the host sees how far behind
# jiffies were.  (Two buffers on two clocks cannot be switched on and off at
# the same instant, so an interrupt at either end lands in only one of them.)
# The same buffer holds hrtimer_start and hrtimer_expire_entry, so the host
# also sees how late each hrtimer ran during the naps (a nap leaves every
# timer on time).  The trace goes to /mnt/add/irq-jiffies.txt.
set -e
T=/sys/kernel/tracing
/usr/share/pseudosleep/nap-setup.sh rtc > /dev/null
echo 0 > $T/events/enable
echo 'e:nap_test/irq_jiffies irq.irq_handler_entry irq=$irq jiffies=@jiffies_64:u64' \
	>> $T/dynamic_events
echo mono > $T/trace_clock
echo 2048 > $T/buffer_size_kb
echo > $T/trace
echo 1 > $T/events/nap_test/irq_jiffies/enable
echo 1 > $T/events/timer/hrtimer_start/enable
echo 1 > $T/events/timer/hrtimer_expire_entry/enable
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
echo 0 > $T/events/nap_test/irq_jiffies/enable
echo 0 > $T/events/timer/enable
cat $T/trace > /mnt/add/irq-jiffies.txt
echo '-:nap_test/irq_jiffies' >> $T/dynamic_events
echo "JIFFIES-DONE"
