#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# timerlat-nap.sh SECONDS MODE: the timerlat tracer's kernel threads (one
# per CPU, not freezable) sleep on a 1 ms hrtimer while the guest either
# naps for SECONDS (quiet-nap.sh: armed on the RTC only, ended by its
# alarm; MODE nap) or sleeps awake (MODE awake).  A timer a nap deferred would show
# as missing wakeups and seconds of latency.  Prints "TIMERLAT ok|aborted
# mode=MODE secs=S cpus=N samples=N max_us=N median_us=N": the threads'
# wakeups (timerlat's thread-context samples) between two trace markers
# around the nap or the sleep, and their latency after the timer's time.
set -e
[ "$2" = nap ] || [ "$2" = awake ] || {
	echo "usage: timerlat-nap.sh SECONDS nap|awake" >&2
	exit 2
}
secs=$1
mode=$2
t=/sys/kernel/tracing
echo 0 > $t/tracing_on
echo nop > $t/current_tracer
echo > $t/trace
echo 1000 > $t/osnoise/timerlat_period_us
echo 4096 > $t/buffer_size_kb
echo timerlat > $t/current_tracer
echo 1 > $t/tracing_on
sleep 1
echo TIMERLAT-BEGIN > $t/trace_marker
# The nap or the sleep, and how long it took: "QUIET ok|aborted ... secs=S"
quiet=$(/usr/share/pseudosleep/quiet-nap.sh "$secs" "$mode")
echo TIMERLAT-END > $t/trace_marker
echo 0 > $t/tracing_on
r=$(echo "$quiet" | awk '{ print $2 }')
took=$(echo "$quiet" | sed -n 's/.* secs=\([^ ]*\).*/\1/p')
awk '
	/TIMERLAT-BEGIN/ { on = 1; next }
	/TIMERLAT-END/ { on = 0; next }
	on && / context +thread timer_latency / {
		for (i = 1; i < NF; i++)
			if ($i == "timer_latency")
				print int($(i + 1) / 1000)
	}' $t/trace | sort -n | awk -v r="$r" -v mode="$mode" -v cpus="$(nproc)" \
	-v secs="$took" '
	{ lat[n++] = $1 }
	END {
		printf "TIMERLAT %s mode=%s secs=%s cpus=%d samples=%d", r, mode,
			secs, cpus, n
		printf " max_us=%d median_us=%d\n", n ? lat[n - 1] : -1,
			n ? lat[int(n / 2)] : -1
	}'
echo nop > $t/current_tracer
