#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# stress.sh SECTION... : the guest side of tools/testing/pseudosleep/stress.
# Runs the sections in order; each prints "SECTION name" when it starts and
# "SECTION-END name rc" when done, and lines the host parses in between.
#   naps:N        N naps ended by host HTTP requests (wakeup_count
#                 handshake), traced for phase attribution into
#                 /mnt/add/trace.txt
#   noise:S       an S s nap armed on the RTC alarm only, while the host
#                 floods the unarmed NIC
#   longnap:S     an S s nap on the RTC alarm with sensitive stall, lockup
#                 and hung task detectors; a timer due during it
#   hotplug:N     N naps with a CPU offline, then N with a CPU going
#                 offline and online in a loop
#   fuzz:N:J      stress-fuzz (from /mnt/add) N writes, J writers, then
#                 N/4 writes in race mode while naps run
#   worknaps:N    N naps of napd --wake-on task (no IRQ armed; napd
#                 watches httpd with EPOLLWAKEUP) ended by host requests
#                 that land anywhere in napd's handshake and the kernel's
#                 entry; the watch's wakeup source activations are traced
#   pollist:N[:W] ethtool -G and CPU hotplug in a loop under host traffic
#                 with the polling driver, N rounds, then 10 s idle; W
#                 "ring" or "cpu" does only that one (to tell which drops)
S=/sys/power/pseudosleep
T=/sys/kernel/tracing
eval "$(/usr/share/pseudosleep/nap-setup.sh nic | sed -n \
	's/^NIC-IRQS /NIC=/p; s/^RTC-IRQ /RTC=/p')"
[ -n "$NIC" ] || { echo "STRESS-ERROR no NIC IRQs"; exit 1; }
echo "NIC-IRQS $NIC"
echo "RTC-IRQ $RTC"
echo "CPUS $(cat /sys/devices/system/cpu/online)"
echo "IDLE-DRIVER $(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"

# busy: a connection to port 80 is open (any TCP state but LISTEN,
# TIME_WAIT and CLOSE, as napd counts them): a request is being served or
# waits to be accepted.  busybox httpd listens on a dual-stack IPv6
# socket, so its connections are in tcp6.
busy() {
	grep -qE '^ *[0-9]+: [0-9A-F]+:0050 [0-9A-F]+:[0-9A-F]+ (0[1-5]|0[89]|0[BC]) ' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# nap_loop N [TAG]: nap until N naps returned 0, with the wakeup_count
# handshake napd uses: arm, read the count, nap only if no request is
# being served, write the count back, write mem.  Markers go to the trace.
# Prints one "N i ok|ab|rf last_wake_irq wake_latency_ns spurious" line
# per attempt and NAPS-TOTAL.  ok: nap ended; ab: mem failed (aborted);
# rf: the handshake refused the count.
nap_loop() {
	n=$1 tag=${2:-naps} ok=0 ab=0 rf=0 i=0 bz=0
	read k0 < $S/naps
	read a0 < $S/aborted_naps
	echo "$NIC" > /sys/power/wake_irq
	mk=/dev/null
	[ -n "$tracer" ] && mk=$T/trace_marker
	clock "$tag" start
	while [ $ok -lt "$n" ]; do
		i=$((i + 1))
		echo "PS $i read" > $mk
		echo 1 > $S/arm
		read wc < /sys/power/wakeup_count
		if busy; then
			bz=$((bz + 1))
			echo "PS $i ret busy" > $mk
			i=$((i - 1))
			sleep 0.02
			continue
		fi
		echo "PS $i write" > $mk
		if ! echo "$wc" > /sys/power/wakeup_count 2>/dev/null; then
			rf=$((rf + 1))
			echo "PS $i ret rf" > $mk
			echo "N $i rf"
			continue
		fi
		echo "PS $i mem" > $mk
		if echo mem > /sys/power/state 2>/dev/null; then
			r=ok ok=$((ok + 1))
		else
			r=ab ab=$((ab + 1))
		fi
		echo "PS $i ret $r" > $mk
		read w < $S/last_wake_irq
		read l < $S/wake_latency_ns
		read sp < $S/spurious_wakeups
		echo "N $i $r $w $l $sp"
	done
	clock "$tag" end
	read k1 < $S/naps
	read a1 < $S/aborted_naps
	echo "NAPS-TOTAL $tag attempts=$i ok=$ok aborted=$ab refused=$rf busy=$bz" \
		"knaps=$((k1 - k0)) kaborted=$((a1 - a0))"
}

# clock TAG start|end: CLOCK_MONOTONIC (/proc/uptime is the boot clock,
# which a suspend would move; a nap must move neither more than the host's
# clock), for the host to compare across a section's naps.
clock() {
	echo "CLOCK $1 $2 $(awk '{ print $1 }' /proc/uptime) $(cat /proc/timer_list 2>/dev/null |
		awk '/^now at/ { print $3 / 1e9; exit }')"
}

trace_start() {	# trace_start [work]
	[ -d $T/events/power/suspend_resume ] || { echo "TRACE none"; return; }
	echo 0 > $T/tracing_on
	echo > $T/trace
	echo mono > $T/trace_clock
	echo 4096 > $T/buffer_size_kb
	if [ "$1" = work ]; then
		# The activations of napd's watch: the EPOLLWAKEUP item of its
		# outer epoll set, named after the inner set's file.
		e=power/wakeup_source_activate f='name == "[eventpoll]"'
	else
		e=irq/irq_handler_entry f=""
		for q in $(echo "$NIC" | tr ',' ' '); do
			case $q in
			*-*) f="$f${f:+||}(irq>=${q%-*}&&irq<=${q#*-})" ;;
			*) f="$f${f:+||}irq==$q" ;;
			esac
		done
	fi
	echo "$f" > $T/events/$e/filter
	echo 1 > $T/events/$e/enable
	echo 1 > $T/events/power/suspend_resume/enable
	echo 1 > $T/tracing_on
	cat $T/trace_pipe > /mnt/add/trace.txt &
	tracer=$!
	echo "TRACE on $e $f"
}

trace_stop() {
	[ -n "$tracer" ] || return
	echo "PS end" > $T/trace_marker
	k=0
	while ! grep -q "PS end" /mnt/add/trace.txt && [ $k -lt 600 ]; do
		sleep 0.1; k=$((k + 1))
	done
	kill $tracer; wait $tracer 2>/dev/null
	echo 0 > $T/tracing_on
	echo 0 > $T/events/irq/irq_handler_entry/enable
	echo 0 > $T/events/power/wakeup_source_activate/enable 2>/dev/null
	echo 0 > $T/events/power/suspend_resume/enable
	echo "TRACE-LOST $(grep -h overrun $T/per_cpu/cpu*/stats | awk '{s+=$2} END {print s+0}')"
	tracer=""
}

irqsum() {	# irqsum [LIST]: interrupts so far, of the IRQs in LIST or all
	awk -v l="$1" 'BEGIN { n = split(l, a, ","); for (i = 1; i <= n; i++) {
		if (split(a[i], r, "-") == 2) for (j = r[1]; j <= r[2]; j++) w[j] = 1
		else w[a[i]] = 1 } }
	NR > 1 { k = $1; sub(":", "", k); if (n && !(k in w)) next
		for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i }
	END { print s + 0 }' /proc/interrupts
}

rtc_nap() {	# rtc_nap SECS: one nap armed on the RTC alarm only
	echo "$RTC" > /sys/power/wake_irq
	echo 0 > /sys/class/rtc/rtc0/wakealarm
	echo "+$1" > /sys/class/rtc/rtc0/wakealarm
	if echo mem > /sys/power/state 2>/dev/null; then r=ok; else r=ab; fi
	read w < $S/last_wake_irq
	read sp < $S/spurious_wakeups
	read nn < $S/last_nap_ns
	echo "$NIC" > /sys/power/wake_irq
}

s_naps() {
	trace_start
	nap_loop "$1" naps
	trace_stop
}

s_noise() {
	read k0 < $S/naps
	n0=$(irqsum "$NIC")
	a0=$(irqsum)
	l0=$(awk '/^ *LOC:/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i } END { print s + 0 }' /proc/interrupts)
	echo NOISE-NAPPING
	rtc_nap "$1"
	n1=$(irqsum "$NIC")
	a1=$(irqsum)
	l1=$(awk '/^ *LOC:/ { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i } END { print s + 0 }' /proc/interrupts)
	read k1 < $S/naps
	echo "NOISE r=$r wake_irq=$w rtc=$RTC nap_ns=$nn spurious=$sp" \
		"nic_irqs=$((n1 - n0)) all_irqs=$((a1 - a0)) timer_irqs=$((l1 - l0))" \
		"naps=$((k1 - k0))"
}

s_longnap() {
	p=/proc/sys/kernel
	st=/sys/module/rcupdate/parameters/rcu_cpu_stall_timeout
	o1=$(cat $p/watchdog_thresh 2>/dev/null)
	o2=$(cat $p/hung_task_timeout_secs 2>/dev/null)
	o3=$(cat $st 2>/dev/null)
	[ -n "$o1" ] && echo 2 > $p/watchdog_thresh
	[ -n "$o2" ] && echo 5 > $p/hung_task_timeout_secs
	[ -n "$o3" ] && echo 5 > $st
	# A task sleeping on a timer due in the middle of the nap.
	(sleep $(($1 / 2)); echo "TIMER-FIRED $(cut -d' ' -f1 /proc/uptime)") &
	timer=$!
	sleep 0.2
	echo "LONG-NAPPING $(date +%s) $(cut -d' ' -f1 /proc/uptime)"
	rtc_nap "$1"
	echo "LONG-WOKE r=$r wake_irq=$w rtc=$RTC real=$(date +%s)" \
		"mono=$(cut -d' ' -f1 /proc/uptime) nap_ns=$nn spurious=$sp"
	wait $timer
	[ -n "$o1" ] && echo "$o1" > $p/watchdog_thresh
	[ -n "$o2" ] && echo "$o2" > $p/hung_task_timeout_secs
	[ -n "$o3" ] && echo "$o3" > $st
	echo "LONG-DONE"
}

s_hotplug() {
	c=$(ls -d /sys/devices/system/cpu/cpu[1-9]* 2>/dev/null | tail -1)
	if [ -z "$c" ] || [ ! -e "$c/online" ]; then
		echo "HOTPLUG skipped: one CPU"; return 0
	fi
	echo 0 > "$c/online" || { echo "HOTPLUG-ERROR offline failed"; return 1; }
	echo "HOTPLUG offline $(cat /sys/devices/system/cpu/online)"
	nap_loop "$1" hotplug-offline
	echo 1 > "$c/online" || { echo "HOTPLUG-ERROR online failed"; return 1; }
	rm -f /tmp/hp-stop /tmp/hp-count
	(ok=0 bad=0
	 while [ ! -e /tmp/hp-stop ]; do
		for v in 0 1; do
			if echo $v > "$c/online" 2>/dev/null; then ok=$((ok + 1))
			else bad=$((bad + 1)); fi
		done
	 done
	 echo 1 > "$c/online" 2>/dev/null
	 echo "$ok $bad" > /tmp/hp-count) &
	hp=$!
	nap_loop "$1" hotplug-race
	touch /tmp/hp-stop
	wait $hp
	read hok hbad < /tmp/hp-count
	echo "HOTPLUG race writes_ok=$hok writes_refused=$hbad online=$(cat /sys/devices/system/cpu/online)"
	[ "$(cat "$c/online")" = 1 ] || { echo "HOTPLUG-ERROR $c stayed offline"; return 1; }
}

# worknaps N: napd naps N times with wake on task and no bound (an alarm
# would hide a request the watch missed: that request waits for good and
# the host counts it lost).  --idle-ms 1: each attempt follows the last
# answer at once, so the host's random offsets land in napd's handshake
# (wakeup_count read, activity check, count write) as well as in the
# kernel's entry and the nap.  napd's per-nap lines name what ended each
# nap (WORKNAP); its --stats JSON says where attempts were held back.
s_worknaps() {
	read k0 < $S/naps
	read a0 < $S/aborted_naps
	trace_start work
	clock worknaps start
	napd --port 80 --wake-dev eth0 --wake-on task --idle-ms 1 \
		--max-nap 0 --max-naps "$1" --systemd-timers no --log --stats \
		> /tmp/worknaps.out 2>&1
	nrc=$?
	clock worknaps end
	trace_stop
	read k1 < $S/naps
	read a1 < $S/aborted_naps
	sed -n '/napd: nap [0-9]* slept/{s/^.*wake_source=\([^ ]*\).*$/WORKNAP \1/p
		t
		s/^.*$/WORKNAP -/p
		}' /tmp/worknaps.out
	# napd's setup lines and its first naps, for the log.
	grep -m12 -v 'held back' /tmp/worknaps.out | sed 's/^/WORKNAPS-LOG /'
	grep -m3 -iE 'error|cannot|warn' /tmp/worknaps.out | sed 's/^/WORKNAPS-NAPD /'
	js=$(grep '^{"naps"' /tmp/worknaps.out | tail -1)
	echo "WORKNAPS-STATS $js"
	ok=$(echo "$js" | sed -n 's/^{"naps":\([0-9]*\),"aborted":\([0-9]*\),"handshake_refused":\([0-9]*\).*/\1 \2 \3/p')
	set -- $ok
	echo "NAPS-TOTAL worknaps attempts=0 ok=${1:-0} aborted=${2:-0}" \
		"refused=${3:-0} busy=0 knaps=$((k1 - k0)) kaborted=$((a1 - a0))"
	return $nrc
}

fuzz_targets() {
	echo "irqlist:/sys/power/wake_irq memsleep:/sys/power/mem_sleep"
	nic=$(readlink -f /sys/class/net/eth0/device)
	echo "bool:$nic/power/nosleep"
	for d in /sys/class/rtc/rtc0/device /sys/class/tty/ttyS0/device; do
		[ -e $d/power/nosleep ] && echo "bool:$(readlink -f $d)/power/nosleep"
	done
	m=/sys/module/cpuidle_pollist/parameters
	if [ -d $m ]; then
		echo "uint:0:10000000:$m/poll_limit_ns"
		echo "uint:1000:10000000:$m/poll_grow_start_ns"
		echo "uint:1:16:$m/poll_grow uint:0:16:$m/poll_shrink ro:$m/enable"
	fi
}

s_fuzz() {
	n=$1 j=${2:-4}
	f=/mnt/add/stress-fuzz
	[ -x $f ] || { echo "FUZZ-ERROR no $f"; return 1; }
	tg=$(fuzz_targets | tr '\n' ' ')
	echo "FUZZ-TARGETS $tg"
	$f -n "$n" -j "$j" -s 1 $tg || rc=$?
	echo "$NIC" > /sys/power/wake_irq
	echo pseudo > /sys/power/mem_sleep
	# Racing naps: the host keeps sending requests.
	rm -f /tmp/fz-stop
	(k=0; while [ ! -e /tmp/fz-stop ]; do
		k=$((k + 1)); /mnt/add/stress-fuzz -r -k "$NIC" -n 200 -j 2 -s $k $tg |
			grep -v '^FUZZ writes'
		echo "$k" > /tmp/fz-rounds
	 done) &
	fz=$!
	nap_loop "$(($n / 40 + 10))" fuzz-race
	touch /tmp/fz-stop
	wait $fz
	echo "FUZZ-RACE rounds=$(cat /tmp/fz-rounds 2>/dev/null || echo 0) writes=$(($(cat /tmp/fz-rounds 2>/dev/null || echo 0) * 200))"
	echo "$NIC" > /sys/power/wake_irq
	echo pseudo > /sys/power/mem_sleep
	echo 1 > "$(readlink -f /sys/class/net/eth0/device)/power/nosleep"
	return ${rc:-0}
}

# Signs of received packets the guest lost: TCP's own retransmissions and
# listen-queue drops, and the NIC's drop counters.  The buffers a ring
# reset frees are counted nowhere; they show as retransmissions here and
# as the host's (Boot._drive()).
net_drops() {
	awk '$2 !~ /^[0-9-]/ { for (i = 2; i <= NF; i++) name[$1, i] = $i; next }
	     { for (i = 2; i <= NF; i++) v[name[$1, i]] = $i }
	     END { printf "tcp_retrans=%s listen_drops=%s ", v["RetransSegs"],
			  v["ListenDrops"] }' /proc/net/snmp /proc/net/netstat
	echo "rx_dropped=$(cat /sys/class/net/eth0/statistics/rx_dropped)" \
		"queue_drops=$(ethtool -S eth0 2>/dev/null |
			awk '/rx_queue_[0-9]+_drops:/ { d += $2 } END { print d + 0 }')"
}

s_pollist() {
	drv=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null)
	echo "POLLIST driver=$drv"
	# eth0's NAPI on the polling list: the ring resizes below go through
	# napi_disable(), which keeps the pollers off the ring being reset.
	if ! echo 1 > /sys/class/net/eth0/napi_idle_poll; then
		echo "STRESS-ERROR napi_idle_poll refused"
		return 1
	fi
	c=$(ls -d /sys/devices/system/cpu/cpu[1-9]* 2>/dev/null | tail -1)
	ring=$(ethtool -g eth0 2>/dev/null | awk '/^RX:/ { print $2; exit }')
	echo "POLLIST-TRAFFIC"
	i=0 eok=0 ebad=0
	while [ $i -lt "$1" ]; do
		i=$((i + 1))
		[ -n "$c" ] && [ "$2" != ring ] && echo 0 > "$c/online"
		sleep 0.2
		for r in 128 256; do
			[ "$2" = cpu ] && { sleep 0.2; continue; }
			if ethtool -G eth0 rx $r 2>/dev/null; then eok=$((eok + 1)); else ebad=$((ebad + 1)); fi
			sleep 0.2
		done
		[ -n "$c" ] && [ "$2" != ring ] && echo 1 > "$c/online"
		sleep 0.2
	done
	[ -n "$ring" ] && ethtool -G eth0 rx "$ring" 2>/dev/null
	echo "POLLIST rounds=$i ethtool_ok=$eok ethtool_refused=$ebad online=$(cat /sys/devices/system/cpu/online)"
	echo "POLLIST drops: $(net_drops)"
	echo "POLLIST entries: $(grep ' eth0-napi-' /sys/kernel/debug/pollist/entries | tr '\n' ' ')"
	echo "POLLIST-IDLE"
	sleep 10
	echo "POLLIST-IDLE-DONE"
}

rc=0
for sec in "$@"; do
	name=${sec%%:*}
	args=$(echo "${sec#"$name"}" | tr ':' ' ')
	echo "SECTION $name$args"
	# The host answers once its requests from the last section are done.
	while [ ! -e "/mnt/add/go-$name" ]; do sleep 0.05; done
	src=0
	# shellcheck disable=SC2086
	s_$name $args || src=$?
	echo "SECTION-END $name $src"
	[ $src -eq 0 ] || rc=1
done
echo "STRESS-DONE $rc"
exit $rc
