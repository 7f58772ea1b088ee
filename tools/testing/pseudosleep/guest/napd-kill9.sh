#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# napd-kill9.sh [NAPD ARGS...]: napd killed with SIGKILL leaves its
# settings changed and saved in /run/napd; the next napd takes the saved
# values as the originals and puts them back on SIGTERM (issue 32).  Both
# write a metrics file; the second's counters are checked against
# /sys/power/pseudosleep by the host.  Serves HTTP on port 80.
#   /mnt/add/kill  SIGKILL the first napd, start the second
#   /mnt/add/stop  SIGTERM the second
# Prints NAPD-STARTED, KILLED changed=yes|no saved=yes|no,
# NAPD-RESTARTED naps=N aborted=N, NAPD-EXIT n, its output,
# PSEUDOSLEEP naps=N aborted=N, the metrics file between METRICS-BEGIN
# and METRICS-END, and RESTORED yes|no.
httpd -p 80 -h /www
nic=/sys/class/net/eth0/device/power/nosleep
ps=/sys/power/pseudosleep
snap() {
	echo "mem_sleep=$(cat /sys/power/mem_sleep) wake_irq=$(cat /sys/power/wake_irq) nosleep=$(cat $nic)"
}
before=$(snap)
echo "BEFORE $before"
mkdir -p /tmp/prom
start() {
	napd --port 80 --wake-dev eth0 --metrics-file /tmp/prom/napd.prom \
		"$@" > /tmp/napd.out 2>&1 &
	pid=$!
}
start "$@"
echo NAPD-STARTED
while [ ! -e /mnt/add/kill ]; do sleep 0.5; done
kill -KILL $pid
wait $pid
changed=yes
[ "$before" = "$(snap)" ] && changed=no
saved=no
[ -s /run/napd/settings ] && saved=yes
echo "KILLED changed=$changed saved=$saved"
echo "NAPD-RESTARTED naps=$(cat $ps/naps) aborted=$(cat $ps/aborted_naps)"
start "$@"
while [ ! -e /mnt/add/stop ]; do sleep 0.5; done
kill -TERM $pid
wait $pid
echo "NAPD-EXIT $?"
cat /tmp/napd.out
echo "PSEUDOSLEEP naps=$(cat $ps/naps) aborted=$(cat $ps/aborted_naps)"
echo METRICS-BEGIN
cat /tmp/prom/napd.prom
echo METRICS-END
after=$(snap)
echo "AFTER $after"
if [ "$before" = "$after" ]; then echo "RESTORED yes"; else echo "RESTORED no"; fi
