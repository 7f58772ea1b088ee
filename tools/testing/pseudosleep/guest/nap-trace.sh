#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nap-trace.sh ARM [SECONDS]: trace one nap and print the trace.
# ARM is "rtc" (the RTC alarm ends the nap after SECONDS, default 5: a
# quiet nap) or "nic" (the NIC's receive IRQs are armed: the host's request
# ends it).  The trace has the PM core's phases (power:suspend_resume), each
# device's callbacks (power:device_pm_callback_*) and what fired on the
# CPUs meanwhile (IRQs, local timer and IPI vectors, timers, work items).
# Prints TRACE-BEGIN, the trace, TRACE-END, then the nap statistics.
set -e
arm=$1
secs=${2:-5}
/usr/share/pseudosleep/nap-setup.sh "$arm"
t=/sys/kernel/tracing
echo 0 > $t/tracing_on
echo 8192 > $t/buffer_size_kb
echo > $t/trace
for e in power/suspend_resume power/device_pm_callback_start \
	 power/device_pm_callback_end irq/irq_handler_entry \
	 irq_vectors/local_timer_entry irq_vectors/reschedule_entry \
	 irq_vectors/call_function_entry irq_vectors/call_function_single_entry \
	 timer/hrtimer_expire_entry timer/timer_expire_entry \
	 workqueue/workqueue_execute_start; do
	[ -e $t/events/$e/enable ] && echo 1 > $t/events/$e/enable
done
if [ "$arm" = rtc ]; then
	echo 0 > /sys/class/rtc/rtc0/wakealarm
	echo "+$secs" > /sys/class/rtc/rtc0/wakealarm
fi
echo 1 > $t/tracing_on
echo "NAPPING 1"
r=ok
echo mem > /sys/power/state || r=aborted
echo 0 > $t/tracing_on
echo "NAP 1 $r wake_irq=$(cat /sys/power/pm_wakeup_irq 2>/dev/null || echo none)"
echo TRACE-BEGIN
grep -v '^#' $t/trace
echo TRACE-END
for f in /sys/power/pseudosleep/*; do echo "STAT $(basename "$f") $(cat "$f")"; done
