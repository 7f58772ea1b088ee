#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of the napd test (busybox sh): napd must switch the
# pseudo-sleep settings while it runs and put every one back on SIGTERM.
#
#   guest-napd-setup.sh start  record the settings, start napd in the
#                              background, check they were changed
#   guest-napd-setup.sh stop   SIGTERM napd, check exit 0, the restore
#                              and the --stats line
#   guest-napd-setup.sh        start, sleep $NAPD_RUN_SECS (2), stop
#
# While napd naps only eth0's IRQs wake the guest, and this script is
# frozen with the rest of user space: the host must send traffic (a TCP
# connect to port 80 is enough) to let "sleep" end and "stop" run, and
# keep sending until "stop" reports, in case SIGTERM lands mid-nap.
# napd's pid is in $NAPD_DIR/pid for a host that wants to signal it.
#
# Prints "ok - ..." / "not ok - ..." lines; exits 1 if any failed.
# NAPD_SYSFS and NAPD_ARGS (e.g. "--sysfs-root X --proc-root Y") let it
# run against a fake tree on the host.

NAPD=${NAPD:-napd}
NAPD_DIR=${NAPD_DIR:-/tmp/napd-test}
DEV=${NAPD_DEV:-eth0}
SYS=${NAPD_SYSFS:-/sys}
PW=$SYS/power
NOSLEEP=$SYS/class/net/$DEV/device/power/nosleep
failed=0

check() {	# description, command...
	d=$1
	shift
	if "$@"; then
		echo "ok - $d"
	else
		echo "not ok - $d"
		failed=1
	fi
}

# One line each: current mem_sleep mode, wake_irq, nosleep of the NIC.
# (A fake tree's mem_sleep holds just the last word written.)
snapshot() {
	sed -n 's/.*\[\([a-z0-9]*\)\].*/\1/p; t; p' "$PW/mem_sleep"
	echo "wake_irq=$(cat "$PW/wake_irq")"
	echo "nosleep=$(cat "$NOSLEEP")"
}

nap() {
	sleep 0.1 2>/dev/null || sleep 1
}

start() {
	rm -rf "$NAPD_DIR"
	mkdir -p "$NAPD_DIR"
	snapshot >"$NAPD_DIR/before"
	# The subshell outlives napd to record its exit status.
	(
		# shellcheck disable=SC2086 # NAPD_ARGS is a word list
		"$NAPD" --port 80 --idle-ms 50 --wake-dev "$DEV" --log \
			--stats $NAPD_ARGS >"$NAPD_DIR/out" 2>&1 &
		echo $! >"$NAPD_DIR/pid"
		wait $!
		echo $? >"$NAPD_DIR/rc"
	) &
	i=0
	while [ ! -s "$NAPD_DIR/pid" ] && [ $i -lt 50 ]; do
		nap
		i=$((i + 1))
	done
	sleep 1
	check "napd running" kill -0 "$(cat "$NAPD_DIR/pid")"
	check "mem_sleep set to pseudo" \
		grep -Eq '\[pseudo\]|^pseudo$' "$PW/mem_sleep"
	check "wake_irq armed" test -n "$(cat "$PW/wake_irq")"
	check "$DEV nosleep set" test "$(cat "$NOSLEEP")" = 1
}

stop() {
	kill -TERM "$(cat "$NAPD_DIR/pid")"
	i=0
	while [ ! -e "$NAPD_DIR/rc" ] && [ $i -lt 300 ]; do
		nap
		i=$((i + 1))
	done
	check "napd exited 0 on SIGTERM" test "$(cat "$NAPD_DIR/rc" 2>/dev/null)" = 0
	snapshot >"$NAPD_DIR/after"
	for l in 1 2 3; do
		b=$(sed -n "${l}p" "$NAPD_DIR/before")
		a=$(sed -n "${l}p" "$NAPD_DIR/after")
		check "restored '$b' (now '$a')" test "$a" = "$b"
	done
	check "stats printed" grep -q '^{"naps":' "$NAPD_DIR/out"
	sed 's/^/# /' "$NAPD_DIR/out"
}

case "${1:-run}" in
start)	start ;;
stop)	stop ;;
run)	start; sleep "${NAPD_RUN_SECS:-2}"; stop ;;
*)	echo "usage: $0 [start|stop|run]" >&2; exit 2 ;;
esac
exit $failed
