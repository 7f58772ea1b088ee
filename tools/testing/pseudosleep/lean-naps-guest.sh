#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lean-naps-guest.sh: the guest side of lean_naps.py (tests/test_lean_naps.py
# and lean-naps-bench), run as root in the Debian guest from the share
# (/mnt/add) with the napd built on the host beside it.
#
# Records the PM core's per-device callbacks in a trace instance of its own
# ("lean"), then runs napd once per phase: the host writes phase-N (napd's
# extra arguments, e.g. "--device-policy all"), waits for PHASE-N-STARTED,
# sends its requests and creates stop-N.  Each phase leaves list-N.txt
# (napd --list-devices while napd runs), napd-N.out, trace-N.txt and a
# "RESTORED-N yes|no" line; "done" ends the run with dmesg.txt.
A=/mnt/add
NAPD=$A/napd
T=/sys/kernel/tracing
I=$T/instances/lean

# The image's own napd (napd.service) would nap alongside ours: stop it
# (it puts its settings back on SIGTERM).
if systemctl is-active --quiet napd.service 2>/dev/null; then
	systemctl stop napd.service
	echo "STOPPED napd.service"
fi
# The harness's channels (the 9p shares, the output console) stay up
# through naps, as the test initramfs's init keeps them.
sh "$(dirname "$0")/keep-harness.sh"
[ -d $T/instances ] || mount -t tracefs tracefs $T
mkdir -p $I
echo 8192 > $I/buffer_size_kb
for e in device_pm_callback_start device_pm_callback_end suspend_resume; do
	echo 1 > $I/events/power/$e/enable
done

# The NIC: the one network device with a device behind it (e1000e).
nic=
for n in /sys/class/net/*; do
	[ -e "$n/device" ] && nic=${n##*/}
done
echo "NIC $nic"
for d in /sys/bus/pci/devices/*; do
	drv=
	[ -e "$d/driver" ] && drv=$(basename "$(readlink "$d/driver")")
	echo "PCI ${d##*/} $(cat "$d/class") ${drv:--}"
done
for d in /sys/bus/usb/devices/usb*; do
	[ -e "$d" ] && echo "USB ${d##*/} $(basename "$(readlink -f "$d/..")")"
done
: > $A/empty.conf

# Every setting napd may change, to compare after each phase.
snap() {
	cat /sys/power/mem_sleep /sys/power/wake_irq \
		/sys/bus/pci/devices/*/power/nosleep 2>/dev/null | md5sum
}

echo "lean-naps: start" > /dev/kmsg
echo READY
n=0
while :; do
	while [ ! -e $A/phase-$n ] && [ ! -e $A/done ]; do sleep 0.5; done
	[ -e $A/phase-$n ] || break
	args=$(cat $A/phase-$n)
	before=$(snap)
	echo > $I/trace
	echo "lean-naps: phase $n: $args" > /dev/kmsg
	# shellcheck disable=SC2086 # napd's arguments, word-split on purpose
	$NAPD --config $A/empty.conf --port 80 --wake-dev "$nic" \
		--idle-ms 50 --log --stats --state-dir /run/napd-lean \
		--status-socket /run/napd-lean.sock $args \
		> /tmp/napd-$n.out 2>&1 &
	pid=$!
	echo "PHASE-$n-STARTED"
	# Polled slowly: napd counts this loop's forks as CPU use.
	while [ ! -e $A/stop-$n ]; do sleep 0.5; done
	echo "lean-naps: phase $n: stop" > /dev/kmsg
	# shellcheck disable=SC2086
	$NAPD --config $A/empty.conf --wake-dev "$nic" $args \
		--list-devices > $A/list-$n.txt 2>&1
	echo "lean-naps: phase $n: listed" > /dev/kmsg
	kill -TERM $pid
	wait $pid
	rc=$?
	echo "lean-naps: phase $n: napd exit $rc" > /dev/kmsg
	echo "PHASE-$n-EXIT $rc"
	cp /tmp/napd-$n.out $A/napd-$n.out
	cat $I/trace > $A/trace-$n.txt
	if [ "$before" = "$(snap)" ]; then r=yes; else r=no; fi
	echo "RESTORED-$n $r"
	echo "PHASE-$n-DONE"
	n=$((n + 1))
done
echo "lean-naps: end" > /dev/kmsg
dmesg > $A/dmesg.txt
rmdir $I
echo FINISHED
