#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# nap-setup.sh ARM: start busybox httpd on :80, keep the NIC awake
# (power/nosleep), select pseudo in mem_sleep and arm the wake IRQs:
# ARM is "nic" (the NIC's receive IRQs: its MSI IRQs named *-input.*, or
# all of them when none is) or "rtc" (the CMOS RTC alarm IRQ).
# Prints "NIC-IRQS list" and "RTC-IRQ n".
set -e
pidof httpd > /dev/null || httpd -p 80 -h /www
nic=$(readlink -f /sys/class/net/eth0/device)
dev=$nic
while [ ! -d "$dev/msi_irqs" ] && [ "$dev" != / ]; do dev=$(dirname "$dev"); done
name=$(basename "$nic")
rx=$(grep -E " $name-input\.[0-9]+\$" /proc/interrupts | cut -d: -f1 | tr -d ' ')
[ -n "$rx" ] || rx=$(ls "$dev/msi_irqs")
nic_irqs=$(echo $rx | tr ' ' '\n' | sort -n | tr '\n' ',' | sed 's/,$//')
rtc_irq=$(grep -m1 rtc0 /proc/interrupts | cut -d: -f1 | tr -d ' ')
echo 1 > "$nic/power/nosleep"
case $1 in
nic)	echo "$nic_irqs" > /sys/power/wake_irq ;;
rtc)	echo "$rtc_irq" > /sys/power/wake_irq ;;
*)	echo "usage: nap-setup.sh nic|rtc" >&2; exit 2 ;;
esac
echo pseudo > /sys/power/mem_sleep
echo "NIC-IRQS $nic_irqs"
echo "RTC-IRQ $rtc_irq"
