#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# wg-peer.sh: a WireGuard interface wg0 (10.78.0.2/24, UDP port 51820)
# whose one peer is the host (10.78.0.1, no endpoint: the host starts every
# session).  The host writes /mnt/add/wg-keys: the guest's private key,
# then the host's public key, one per line.  Prints "WG-READY".
set -e
IP=/usr/libexec/iproute2/ip
i=0
while [ ! -s /mnt/add/wg-keys ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
umask 077
sed -n 1p /mnt/add/wg-keys > /tmp/wg0.key
$IP link add wg0 type wireguard
wg set wg0 listen-port 51820 private-key /tmp/wg0.key \
	peer "$(sed -n 2p /mnt/add/wg-keys)" allowed-ips 10.78.0.1/32
$IP addr add 10.78.0.2/24 dev wg0
$IP link set wg0 up
echo WG-READY
