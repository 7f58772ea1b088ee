#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# button-nap.sh: a nap armed on the NIC, with the RTC alarm 60 s away as a
# backstop, that the host ends by pressing the ACPI power button (QMP
# system_powerdown).  Then a second press while awake.  Prints
#   SCI-IRQ n, BUTTON eventN       the SCI and the button's evdev node
#   NAPPING                        the host may press now
#   NAP r wake_irq=n nap_ns=n      how the nap ended (r: ok or aborted)
#   KEYS n                         KEY_POWER presses read from evdev so far
#   AWAKE                          the host presses again
#   SCI-COUNT before after         SCI interrupts around the second press
set -e
sci=$(awk '$NF == "acpi" { sub(":", "", $1); print $1; exit }' /proc/interrupts)
ev=""
for d in /sys/class/input/input*; do
	if grep -q "Power Button" "$d/name" 2>/dev/null; then
		ev=$(basename "$(ls -d "$d"/event* | head -1)")
		break
	fi
done
[ -n "$sci" ] && [ -n "$ev" ] || { echo "BUTTON-ERROR sci=$sci ev=$ev"; exit 1; }
echo "SCI-IRQ $sci"
echo "BUTTON $ev"
eval "$(/usr/share/pseudosleep/nap-setup.sh nic | sed -n \
	's/^NIC-IRQS /NIC=/p; s/^RTC-IRQ /RTC=/p')"
echo "$NIC,$RTC" > /sys/power/wake_irq
echo 0 > /sys/class/rtc/rtc0/wakealarm
echo +60 > /sys/class/rtc/rtc0/wakealarm

# struct input_event is 24 bytes on x86_64: 16 of time, then type, code
# and value; a press is EV_KEY (1), KEY_POWER (116), value 1.
keys() {
	od -An -v -w24 -tu2 /tmp/ev 2>/dev/null |
		awk '$9 == 1 && $10 == 116 && $11 == 1 { n++ } END { print n + 0 }'
}
cat /dev/input/"$ev" > /tmp/ev &
reader=$!
sleep 0.5

echo NAPPING
if echo mem > /sys/power/state 2>/dev/null; then r=ok; else r=aborted; fi
echo "NAP $r wake_irq=$(cat /sys/power/pseudosleep/last_wake_irq)" \
	"nap_ns=$(cat /sys/power/pseudosleep/last_nap_ns)"
echo 0 > /sys/class/rtc/rtc0/wakealarm
k=0
while [ "$(keys)" -lt 1 ] && [ $k -lt 100 ]; do sleep 0.1; k=$((k + 1)); done
echo "KEYS $(keys)"

n0=$(awk -v i="$sci:" '$1 == i { s = 0; for (j = 2; j <= NF && $j ~ /^[0-9]+$/; j++) s += $j; print s }' /proc/interrupts)
echo AWAKE
k=0
while [ "$(keys)" -lt 2 ] && [ $k -lt 200 ]; do sleep 0.1; k=$((k + 1)); done
n1=$(awk -v i="$sci:" '$1 == i { s = 0; for (j = 2; j <= NF && $j ~ /^[0-9]+$/; j++) s += $j; print s }' /proc/interrupts)
echo "KEYS $(keys)"
echo "SCI-COUNT $n0 $n1"
kill $reader
