#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# napd-ops.sh: napd's operator features on the real kernel (busybox sh).
#
#   1. A CPU-bound job runs: napd (config file, --process blockjob) must
#      not nap; --status says what held it back.  SIGHUP with a changed
#      idle-ms in the file: --status shows the new value.
#   2. The job ends, a process named blockjob (a sleeping script) runs:
#      still no nap, held back by "process".
#   3. blockjob ends: naps start.  --status answers between naps.
#   4. SIGTERM: exit 0 and every setting back as before.
#
# The host must send traffic (HTTP to port 80) from "OPS-POKE" on, so
# that naps end and this script, frozen with the rest of user space
# during a nap, moves on.  Prints "ok - ..." / "not ok - ..." lines,
# "STATUS n {json}" lines and "OPS-DONE failed=N".
httpd -p 80 -h /www
nic=/sys/class/net/eth0/device/power/nosleep
snap() {
	echo "mem_sleep=$(cat /sys/power/mem_sleep) wake_irq=$(cat /sys/power/wake_irq) nosleep=$(cat $nic)"
}
failed=0
check() {	# description, command...
	d=$1
	shift
	if "$@"; then echo "ok - $d"; else echo "not ok - $d"; failed=$((failed + 1)); fi
}
status() {	# tag: ask napd, keep the answer in $st and print it
	st=$(napd --status --status-socket /run/napd.sock)
	echo "STATUS $1 $st"
}
# "key":N of the status answer; "blocked" keys are nested but unique.
num() { echo "$st" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }

before=$(snap)
cat > /tmp/napd.conf <<EOF
# napd-ops.sh test config
port = 80
wake-dev = eth0
idle-ms = 50
process = blockjob
cpu-max = 25
log = yes
EOF
printf '#!/bin/sh\nsleep 100000\n' > /tmp/blockjob
chmod +x /tmp/blockjob

# 1: busy CPU from before napd starts
sh -c 'while :; do :; done' &
hog=$!
napd --config /tmp/napd.conf --stats > /tmp/napd.out 2> /tmp/napd.err &
pid=$!
echo NAPD-STARTED
sleep 3
status cpu
check "napd running" kill -0 $pid
check "no nap while a CPU-bound job runs" test "$(num naps)" = 0
check "held back by cpu or runnable" test "$(( $(num cpu) + $(num runnable) ))" -gt 0
# utime + stime of napd, in USER_HZ ticks
cpu_ticks() { awk '{ print $14 + $15 }' /proc/$pid/stat; }
t0=$(cpu_ticks)
sed -i 's/^idle-ms = 50/idle-ms = 80/' /tmp/napd.conf
kill -HUP $pid
sleep 3
t1=$(cpu_ticks)
echo "NAPD-CPU $((t1 - t0)) ticks of 10 ms in about 3 s, held back by cpu"
status reload
check "SIGHUP applied idle-ms 80" test "$(num idle_ms)" = 80
check "still running after SIGHUP" kill -0 $pid

# 2: a listed process
/tmp/blockjob &
job=$!
kill $hog
wait $hog 2>/dev/null
sleep 3
status process
check "no nap while blockjob runs" test "$(num naps)" = 0
check "held back by process" test "$(num process)" -gt 0
check "last held back by blockjob" \
	sh -c "echo '$st' | grep -q '\"check\":\"process\",\"why\":\"blockjob (pid'"

# 3: nothing running: naps start; the host keeps waking us
echo OPS-POKE
pkill -P $job sleep 2>/dev/null
kill $job
wait $job 2>/dev/null
i=0
st=
while [ $i -lt 100 ]; do
	status naps
	[ "$(num naps)" -gt 0 ] 2>/dev/null && break
	sleep 0.5
	i=$((i + 1))
done
check "naps once the job is gone" test "$(num naps)" -gt 0 2>/dev/null
check "status answered between naps" sh -c "echo '$st' | grep -q '\"asleep_ns\":[1-9]'"

# 4: stop
kill -TERM $pid
wait $pid
rc=$?
check "napd exited 0 on SIGTERM" test $rc = 0
after=$(snap)
echo "BEFORE $before"
echo "AFTER $after"
check "settings restored" test "$before" = "$after"
check "status socket removed" test ! -e /run/napd.sock
check "stats printed" grep -q '^{"naps":' /tmp/napd.out
sed 's/^/# /' /tmp/napd.out /tmp/napd.err | grep -v 'nap [0-9]* slept' | head -60
echo "# $(grep -c 'nap [0-9]* slept' /tmp/napd.err) 'nap ... slept' lines"
echo "OPS-DONE failed=$failed"
