#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nap-wireguard.sh NAPS: a WireGuard tunnel between two network namespaces
# of the guest, its UDP sockets in the initial namespace on 127.0.0.1 (as
# WireGuard's own selftests set it up), one handshake, then NAPS naps of
# 2 s armed on the RTC only, each followed by a ping through the tunnel.
# Prints "WG-HANDSHAKE t" (the initiator's latest handshake, in s) before
# the naps and "NAP i ok|aborted wake_irq=n freeze_ns=n ping_ms=x
# handshake=t" after each: a nap that kept the session keys needs no new
# handshake, so t stays the same.
set -e
IP=/usr/libexec/iproute2/ip
[ "$1" -gt 0 ] 2>/dev/null || { echo "usage: nap-wireguard.sh NAPS" >&2; exit 2; }
/usr/share/pseudosleep/nap-setup.sh rtc > /dev/null
mkdir -p /var/run
$IP link set lo up
$IP netns add wga
$IP netns add wgb
umask 077
wg genkey > /tmp/wga.key
wg genkey > /tmp/wgb.key
# Created in the initial namespace, so that their sockets stay there when
# the links move to their own namespaces.
$IP link add wga type wireguard
$IP link add wgb type wireguard
wg set wga listen-port 51820 private-key /tmp/wga.key \
	peer "$(wg pubkey < /tmp/wgb.key)" endpoint 127.0.0.1:51821 \
	allowed-ips 10.77.0.2/32
wg set wgb listen-port 51821 private-key /tmp/wgb.key \
	peer "$(wg pubkey < /tmp/wga.key)" endpoint 127.0.0.1:51820 \
	allowed-ips 10.77.0.1/32
for n in wga wgb; do
	$IP link set $n netns $n
	$IP -n $n link set lo up
done
$IP -n wga addr add 10.77.0.1/24 dev wga
$IP -n wgb addr add 10.77.0.2/24 dev wgb
$IP -n wga link set wga up
$IP -n wgb link set wgb up

handshake() {
	$IP netns exec wga wg show wga latest-handshakes | cut -f2
}
# One ping through the tunnel; prints its round trip in ms.  A ping that
# needs a new handshake first waits for it (up to REKEY_TIMEOUT, 5 s,
# after the last one was sent).
through_tunnel() {
	$IP netns exec wga ping -c 1 -W 15 10.77.0.2 |
		sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' | grep .
}

through_tunnel > /dev/null
echo "WG-HANDSHAKE $(handshake)"
# A new handshake would be stamped at least a second later.
sleep 1
i=0
while [ $i -lt "$1" ]; do
	i=$((i + 1))
	echo 0 > /sys/class/rtc/rtc0/wakealarm
	echo +2 > /sys/class/rtc/rtc0/wakealarm
	r=ok
	echo mem > /sys/power/state || r=aborted
	w=$(cat /sys/power/pm_wakeup_irq 2>/dev/null || echo none)
	f=$(cat /sys/power/pseudosleep/entry_freeze_ns)
	p=$(through_tunnel)
	echo "NAP $i $r wake_irq=$w freeze_ns=$f ping_ms=$p handshake=$(handshake)"
done
echo "WG-DONE"
