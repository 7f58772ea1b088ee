#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# napd-run.sh [NAPD ARGS...]: serve HTTP, run napd until the host creates
# /mnt/add/stop, then SIGTERM it and check that it put back every setting
# it changed.  Prints NAPD-STARTED, NAPD-EXIT n, napd's output and
# RESTORED yes|no.  NAPD_NAPI_DEFER and NAPD_GRO_FLUSH_NS set eth0's
# napi_defer_hard_irqs and gro_flush_timeout first.  NAPD_ECHO_PORT adds
# an echo server on that port (a cat for each connection, which stays
# open), for kept-alive connections.  NAPD_MEMCACHED adds memcached on
# that TCP and UDP port.  NAPD_STUCK leaves a task in D state (see below).
# NAPD_SLOW_PORT adds a server on that port that answers each line one
# second after reading it, as one waiting on a backend or a disk would,
# on a connection that stays open for more.
# NAPD_ETH1 gives a second NIC, eth1, that address; NAPD_BOND=MODE puts
# eth0 and eth1 in bond0 (that bonding mode, 10.0.2.15) and napd's
# --wake-dev is bond0.
httpd -p 80 -h /www
[ -n "$NAPD_ECHO_PORT" ] && nc -ll -p "$NAPD_ECHO_PORT" -e /bin/cat &
[ -n "$NAPD_SLOW_PORT" ] && nc -ll -p "$NAPD_SLOW_PORT" -e /bin/sh -c \
	'while read -r l; do sleep 1; echo "$l"; done' &
[ -n "$NAPD_MEMCACHED" ] && memcached -d -u root -l 0.0.0.0 \
	-p "$NAPD_MEMCACHED" -U "$NAPD_MEMCACHED"
if [ -n "$NAPD_ETH1" ]; then
	ip addr add "$NAPD_ETH1" dev eth1
	ip link set eth1 up
fi
wake_dev=eth0
if [ -n "$NAPD_BOND" ]; then
	b=/sys/class/net/bond0/bonding
	echo +bond0 > /sys/class/net/bonding_masters
	echo "$NAPD_BOND" > $b/mode
	echo 100 > $b/miimon
	ip addr flush dev eth0
	for n in eth0 eth1; do
		ip link set $n down
		echo "+$n" > $b/slaves
	done
	ip link set bond0 up
	ip addr add 10.0.2.15/24 dev bond0
	echo "BOND $(cat $b/mode) active $(cat $b/active_slave)"
	wake_dev=bond0
fi
# Each NIC's MSI-X IRQs, for the host to tell which one ended a nap.
if [ -n "$NAPD_ETH1$NAPD_BOND" ]; then
	for n in eth0 eth1; do
		echo "NIC-IRQS $n" $(ls /sys/class/net/$n/device/../msi_irqs)
	done
fi
# power/nosleep of each NIC (eth1 with NAPD_ETH1 or NAPD_BOND).
nosleep() {
	for n in eth0 eth1; do
		f=/sys/class/net/$n/device/power/nosleep
		[ -e "$f" ] && printf ' %s=%s' $n "$(cat $f)"
	done
}
snap() {
	echo "mem_sleep=$(cat /sys/power/mem_sleep) wake_irq=$(cat /sys/power/wake_irq) nosleep:$(nosleep)"
}
before=$(snap)
echo "BEFORE $before"
# With NAPD_WAIT_GO set, serve awake until the host creates /mnt/add/go.
if [ -n "$NAPD_WAIT_GO" ]; then
	echo AWAKE-READY
	while [ ! -e /mnt/add/go ]; do sleep 0.05; done
fi
# NAPI deferral as servers tune it (NAPD_NAPI_DEFER, NAPD_GRO_FLUSH_NS).
if [ -n "$NAPD_NAPI_DEFER" ]; then
	echo "$NAPD_NAPI_DEFER" > /sys/class/net/eth0/napi_defer_hard_irqs
	echo "$NAPD_GRO_FLUSH_NS" > /sys/class/net/eth0/gro_flush_timeout
	echo "NAPI $(cat /sys/class/net/eth0/napi_defer_hard_irqs)" \
		"$(cat /sys/class/net/eth0/gro_flush_timeout)"
fi
# NAPD_STUCK: a task that will not freeze, as one waiting on slow or
# stuck storage would.  It reads the host's NVMe disk, throttled to a
# crawl, until the host lifts the throttle; a task waiting for its I/O is
# not freezable, so every nap entry fails with EBUSY after
# pm_freeze_timeout (200 ms here, 20 s by default).
if [ -n "$NAPD_STUCK" ]; then
	echo 200 > /sys/power/pm_freeze_timeout
	while [ ! -b /dev/nvme0n1 ]; do sleep 0.1; done
	# One 1 MiB read: QEMU lets its first 512 KiB through at once, and
	# the second then waits 256 s for the throttle (dd stays in D).
	(dd if=/dev/nvme0n1 of=/dev/null bs=1M count=1 iflag=direct \
		2>/dev/null; echo "STUCK-RELEASED $?") &
	echo "STUCK $(cat /sys/power/pm_freeze_timeout)"
fi
# NAPD_LIVE: napd's lines go to the console as they come, not at the end.
if [ -n "$NAPD_LIVE" ]; then
	napd --port 80 --wake-dev $wake_dev "$@" 2>&1 &
else
	napd --port 80 --wake-dev $wake_dev "$@" > /tmp/napd.out 2>&1 &
fi
pid=$!
echo NAPD-STARTED
# Polled slowly: napd counts this loop's forks as CPU use that holds
# back naps, and under TCG 20 forks a second are a visible load.
# The host's /mnt/add/rebind: unbind and bind eth0's driver once, which
# frees its IRQs and requests them again (nic-rebind.sh).
rebound=
while [ ! -e /mnt/add/stop ]; do
	if [ -e /mnt/add/rebind ] && [ -z "$rebound" ]; then
		rebound=1
		/usr/share/pseudosleep/nic-rebind.sh
		echo "NAPS-AT-REBIND $(cat /sys/power/pseudosleep/naps)"
	fi
	sleep 0.5
done
kill -TERM $pid
wait $pid
echo "NAPD-EXIT $?"
[ -n "$NAPD_LIVE" ] || cat /tmp/napd.out
echo "NAPS-TOTAL $(cat /sys/power/pseudosleep/naps)"
after=$(snap)
echo "AFTER $after"
if [ "$before" = "$after" ]; then echo "RESTORED yes"; else echo "RESTORED no"; fi
