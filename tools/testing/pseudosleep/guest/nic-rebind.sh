#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nic-rebind.sh: unbind and bind eth0's driver, as a vector reallocation
# does (ethtool -L, AER reset): the driver frees its IRQs and requests new
# ones.  Prints what /sys/power/wake_irq and wake_irq_dropped say after the
# unbind ("UNBOUND wake_irq=... dropped=N") and brings eth0 back with the
# address init gave it ("REBOUND").
set -e
dev=$(readlink -f /sys/class/net/eth0/device)
drv=$(readlink -f "$dev/driver")
name=$(basename "$dev")
echo "$name" > "$drv/unbind"
echo "UNBOUND wake_irq=$(cat /sys/power/wake_irq)" \
	"dropped=$(cat /sys/power/pseudosleep/wake_irq_dropped)"
echo "$name" > "$drv/bind"
i=0
while ! ip link show eth0 > /dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "eth0 did not come back" >&2; exit 1; }
	sleep 0.1
done
ip addr add 10.0.2.15/24 dev eth0
ip link set eth0 up
ip route add default via 10.0.2.2
echo "REBOUND"
