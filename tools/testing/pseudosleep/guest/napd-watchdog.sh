#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# napd-watchdog.sh W [NAPD ARGS...]: a unit with WatchdogSec=W keeps its
# pings while napd naps with no bound of its own (--max-nap 0) and no
# request comes.  busybox has no systemd, so a stand-in systemctl reports
# one running service with WatchdogUSec=W s and no timers, and
# /run/systemd/system says the machine was booted with systemd.  The
# service is a loop that pings (writes the uptime) every W/2 seconds, as
# sd_watchdog_enabled(3) advises; systemd would kill it if two pings were
# W apart.  Stops when the host creates /mnt/add/stop.  Prints
# NAPD-STARTED, NAPD-EXIT n, napd's output, PINGS n, PING-GAP-MAX s and
# RESTORED yes|no.  W: an even number of seconds.
w=$1
shift
mkdir -p /tmp/bin /run/systemd/system
cat > /tmp/bin/systemctl <<EOT
#!/bin/sh
case "\$*" in
*list-timers*) echo '[]' ;;
*show*) printf 'Id=pinger.service\nActiveState=active\nWatchdogUSec=%ss\n' $w ;;
*) exit 1 ;;
esac
EOT
chmod +x /tmp/bin/systemctl
nic=/sys/class/net/eth0/device/power/nosleep
snap() {
	echo "mem_sleep=$(cat /sys/power/mem_sleep) wake_irq=$(cat /sys/power/wake_irq) nosleep=$(cat $nic)"
}
before=$(snap)
PATH=/tmp/bin:$PATH napd --port 80 --wake-dev eth0 --max-nap 0 "$@" \
	> /tmp/napd.out 2>&1 &
pid=$!
echo NAPD-STARTED
(
	while :; do
		cut -d' ' -f1 /proc/uptime >> /tmp/pings
		sleep $((w / 2))
	done
) &
pinger=$!
while [ ! -e /mnt/add/stop ]; do sleep 0.5; done
kill $pinger
kill -TERM $pid
wait $pid
echo "NAPD-EXIT $?"
cat /tmp/napd.out
echo "PINGS $(wc -l < /tmp/pings)"
awk 'NR > 1 && $1 - p > m { m = $1 - p } { p = $1 }
     END { printf "PING-GAP-MAX %.2f\n", m }' /tmp/pings
rm -rf /run/systemd/system
if [ "$before" = "$(snap)" ]; then echo "RESTORED yes"; else echo "RESTORED no"; fi
