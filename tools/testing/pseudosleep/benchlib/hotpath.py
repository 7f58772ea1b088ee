# SPDX-License-Identifier: GPL-2.0
"""7. What pseudo-sleep costs a busy server: throughput with the NIC's
receive IRQs armed against not armed, and with RCU callbacks offloaded
(rcu_nocbs=all, the quiet-nap setting of experiment 5) against not.

Two guests run side by side, booted alike but for rcu_nocbs=all in the
second.  In each, a CGI script arms or disarms the NIC's receive vectors
between measurements, so both states are measured in the same boot.
Armed means what napd leaves while the server is busy: pseudo selected in
mem_sleep, the NIC kept awake (power/nosleep), its receive IRQs written
to /sys/power/wake_irq, so every interrupt on them takes the check where
IRQ statistics are updated.  Cells:

  default     not armed (the check's static key is off)
  armed       armed
  nocb        the rcu_nocbs=all guest, not armed
  nocb-armed  the rcu_nocbs=all guest, armed: napd's state while busy on
              a server set up for quiet naps
  napd-task   napd running with wake on work (--wake-on task) and its
              defaults on the served ports: no IRQ armed, and the
              servers' sockets are watched only while napd tries to nap,
              so a busy server pays napd's own checks and nothing per
              packet; the row adds napd's CPU time per second

Workloads: ab -c 4 for T s on a small page (busybox httpd forks a process
per request, so process creation and RCU are in the path too) and iperf3
host -> guest for T s.  Each round measures every cell once, in an order
that rotates from round to round.  The report gives medians over the
rounds, and each cell's ratio to "default" measured in the same round
(median and range of the per-round ratios), with the NIC receive
interrupts per second that took the check.
"""

import time

from . import common as C
from . import load as L

CELLS = ("default", "armed", "nocb", "nocb-armed", "napd-task")
GUESTS = {"default": "", "nocb": "rcu_nocbs=all"}

# arm?on / arm?off; prints the armed set and the receive IRQ count.
ARM_CGI = r"""
cat > /www/cgi-bin/arm <<'CGI'
#!/bin/sh
echo "Content-Type: text/plain"
echo
rx=$(grep -E 'input\.[0-9]+$' /proc/interrupts | cut -d: -f1 | tr -d ' ' | tr '\n' ',' | sed 's/,$//')
case "$QUERY_STRING" in
on)
	nic=$(readlink -f /sys/class/net/eth0/device)
	echo 1 > "$nic/power/nosleep" && echo pseudo > /sys/power/mem_sleep &&
		echo "$rx" > /sys/power/wake_irq || echo "error=arming"
	;;
off)
	echo > /sys/power/wake_irq || echo "error=disarming"
	;;
napd-on)
	setsid napd --port 80 --port 5201 --wake-dev eth0 --wake-on task \
		--systemd-timers no --stats </dev/null >/tmp/napd.log 2>&1 &
	echo $! > /tmp/napd.pid
	k=0
	while [ ! -S /run/napd.sock ] && [ $k -lt 100 ]; do
		sleep 0.1; k=$((k + 1))
	done
	[ -S /run/napd.sock ] || echo "error=napd did not start: $(head -c 300 /tmp/napd.log | tr '\n' ' ')"
	;;
napd-off)
	kill -TERM "$(cat /tmp/napd.pid)"
	k=0
	while kill -0 "$(cat /tmp/napd.pid)" 2>/dev/null && [ $k -lt 100 ]; do
		sleep 0.1; k=$((k + 1))
	done
	echo "napd_stats=$(grep '^{"naps"' /tmp/napd.log | tail -1)"
	;;
esac
echo "armed=$(cat /sys/power/wake_irq)"
# napd's CPU time so far, in clock ticks (utime + stime), if it runs.
p=$(cat /tmp/napd.pid 2>/dev/null)
if [ -n "$p" ] && [ "$(cat /proc/$p/comm 2>/dev/null)" = napd ]; then
	echo "napd_ticks=$(cut -d')' -f2 /proc/$p/stat | awk '{print $12 + $13}')"
elif [ -e /tmp/napd.log ]; then
	echo "napd_log=$(tail -c 300 /tmp/napd.log | tr '\n' ' ')"
fi
awk '/input\.[0-9]+$/ {for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i} END {printf "rx_irqs=%d\n", s}' /proc/interrupts
CGI
chmod +x /www/cgi-bin/arm
"""


def guest_script():
    return ARM_CGI + r"""
httpd -p 80 -h /www
iperf3 -s -D -p 5201 >/dev/null 2>&1
dmesg | grep -q 'Offload RCU callbacks from CPUs: [0-9]' && echo "INFO nocb=on" || echo "INFO nocb=off"
echo READY
exec sleep 1000000
"""


def cgi(bg, query):
    """The guest's arm script with QUERY: its key=value lines, or raises."""
    body, _ = bg.get(80, "/cgi-bin/arm?" + query, timeout=30)
    kv = {}
    for line in (body or b"").decode(errors="replace").splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            kv[k.strip()] = v.strip()
    if "error" in kv or "rx_irqs" not in kv:
        raise RuntimeError("arm?%s: %r" % (query, body))
    return kv


def arm(bg, on):
    """Arm or disarm the guest's NIC receive IRQs: (armed set, receive
    IRQ count) or raises."""
    kv = cgi(bg, "on" if on else "off")
    if bool(kv.get("armed")) != on:
        raise RuntimeError("arm?%s left wake_irq at %r" % (
            "on" if on else "off", kv.get("armed")))
    return kv["armed"], int(kv["rx_irqs"])


def napd_ticks(bg):
    """napd's CPU clock ticks so far, or raises if it does not run."""
    kv = cgi(bg, "")
    if "napd_ticks" not in kv:
        raise RuntimeError("napd is not running: %s" % kv.get("napd_log"))
    return int(kv["napd_ticks"])


def measure(bg, cell, p):
    """One cell once: a row with requests/s, Mbit/s and receive IRQs/s."""
    row = {"cell": cell, "status": "ok"}
    armed, i0 = arm(bg, cell.endswith("armed"))
    row["wake_irq"] = armed
    if cell == "napd-task":
        cgi(bg, "napd-on")
        try:
            return measure_napd(bg, row, p)
        finally:
            row["napd_stats"] = cgi(bg, "napd-off").get("napd_stats")
    return measure_load(bg, row, cell, p, i0)


def measure_napd(bg, row, p):
    """The napd-task cell: the load with napd running, and napd's CPU."""
    _, i0 = arm(bg, False)
    t0, c0 = time.monotonic(), napd_ticks(bg)
    measure_load(bg, row, "napd-task", p, i0)
    c1, t1 = napd_ticks(bg), time.monotonic()
    # USER_HZ is 100 in every Linux ABI: a tick is 10 ms.
    row["napd_cpu_ms_s"] = (c1 - c0) * 10.0 / (t1 - t0)
    return row


def measure_load(bg, row, cell, p, i0):
    """ab, then iperf3, into ROW; i0: the receive IRQs before."""
    r = L.ab(bg.port[80], "/", c=4, t=p["t"])
    if "error" in r:
        row["status"] = "failed: ab: %s" % r["error"]
        return row
    _, i1 = arm(bg, cell.endswith("armed"))
    row.update({"http_rps": r.get("rps"), "http_failed": r.get("failed"),
                "http_n": r.get("complete")})
    if r.get("elapsed_s"):
        row["http_rx_irqs_s"] = (i1 - i0) / r["elapsed_s"]
    r = L.iperf3(bg.port[5201], p["t"])
    _, i2 = arm(bg, cell.endswith("armed"))
    if "error" in r:
        row["status"] = "failed: iperf3: %s" % r["error"]
        return row
    row["iperf_mbps"] = r["recv_mbps"]
    row["iperf_rx_irqs_s"] = (i2 - i1) / p["t"]
    return row


def boot(ctx, name):
    bg = C.BenchGuest("hotpath-%s" % name, guest_script(),
                      ports=(80, 5201), append=GUESTS[name],
                      logdir=ctx.logdir)
    if not ctx.started(bg, r"^READY$", "hotpath " + name):
        bg.stop()
        return None
    want = "on" if GUESTS[name] else "off"
    if bg.info.get("nocb") != want:
        C.broken("hotpath: guest %s: RCU callback offloading is %s, want %s"
                 % (name, bg.info.get("nocb"), want), bg)
        bg.stop()
        return None
    for _ in range(5):
        bg.get(80, "/")
    return bg


FIELDS = ["round", "cell", "status", "wake_irq", "http_n", "http_failed",
          "http_rps", "http_rx_irqs_s", "iperf_mbps", "iperf_rx_irqs_s",
          "http_ratio", "iperf_ratio", "napd_cpu_ms_s", "napd_stats"]


def ratios(rows):
    """Each row's throughput over "default" of the same round."""
    base = {r["round"]: r for r in rows if r["cell"] == "default"
            and r["status"] == "ok"}
    for r in rows:
        b = base.get(r["round"])
        if not b or r["status"] != "ok":
            continue
        for k, rk in (("http_rps", "http_ratio"),
                      ("iperf_mbps", "iperf_ratio")):
            if r.get(k) and b.get(k):
                r[rk] = r[k] / b[k]


def summarise(rows):
    out = []
    for cell in CELLS:
        ok = [r for r in rows if r["cell"] == cell and r["status"] == "ok"]
        s = {"cell": cell, "rounds": len(ok)}
        for k in ("http_rps", "http_ratio", "http_rx_irqs_s", "iperf_mbps",
                  "iperf_ratio", "iperf_rx_irqs_s", "napd_cpu_ms_s"):
            v = C.summary([r.get(k) for r in ok])
            s[k], s[k + "_min"], s[k + "_max"] = v["median"], v["min"], \
                v["max"]
        out.append(s)
    return out


def run(ctx):
    p = {"t": 2, "rounds": 1} if ctx.quick else {"t": 10,
                                                 "rounds": 2 * ctx.runs}
    C.say("== 7. busy-server cost: ab -c 4 -t %d and iperf3 -t %d per cell, "
          "cells %s, %d round(s); guests default and rcu_nocbs=all side by "
          "side" % (p["t"], p["t"], ", ".join(CELLS), p["rounds"]))
    guests = {}
    rows = []
    try:
        for name in GUESTS:
            # The nocb guest serves the nocb cells, the default the rest.
            if any(c.startswith("nocb") == (name == "nocb")
                   for c in ctx.modes(CELLS)):
                guests[name] = boot(ctx, name)
        cells = ctx.modes(CELLS)
        for rnd in range(p["rounds"]):
            order = cells[rnd % len(cells):] + cells[:rnd % len(cells)]
            if rnd % 2:
                order = tuple(reversed(order))
            for cell in order:
                bg = guests.get("nocb" if cell.startswith("nocb") else
                                "default")
                if bg is None:
                    rows.append({"round": rnd, "cell": cell,
                                 "status": "failed: guest did not start"})
                    continue
                try:
                    row = measure(bg, cell, p)
                except Exception as e:  # noqa: BLE001 - reported per cell
                    row = {"cell": cell, "status": "failed: %s" % e}
                row["round"] = rnd
                rows.append(row)
                C.say("  round %d %-10s %s  %s req/s, %s Mbit/s, NIC rx "
                      "IRQs/s %s / %s" % (
                          rnd, cell, row["status"][:40],
                          C.fmt(row.get("http_rps")),
                          C.fmt(row.get("iperf_mbps")),
                          C.fmt(row.get("http_rx_irqs_s"), 0),
                          C.fmt(row.get("iperf_rx_irqs_s"), 0)))
    finally:
        for bg in guests.values():
            if bg:
                bg.stop()
    ratios(rows)
    C.write_csv(ctx.path("hotpath.csv"), rows, FIELDS)
    summary = summarise(rows)
    C.write_csv(ctx.path("hotpath_summary.csv"), summary)
    C.say("  %-10s %6s %10s %18s %10s %18s" % (
        "cell", "rounds", "req/s", "over default", "Mbit/s",
        "over default"))
    for s in summary:
        C.say("  %-10s %6d %10s %18s %10s %18s" % (
            s["cell"], s["rounds"], C.fmt(s["http_rps"]),
            ratio_text(s, "http_ratio"), C.fmt(s["iperf_mbps"]),
            ratio_text(s, "iperf_ratio")))
    return {"name": "hotpath", "rows": rows, "summary": summary,
            "params": p}


def ratio_text(s, k):
    if s.get(k) is None:
        return "-"
    return "%+.1f %% [%+.1f..%+.1f]" % tuple(
        100.0 * (s[x] - 1) for x in (k, k + "_min", k + "_max"))


def plot(P, res):
    s = [x for x in res["summary"] if x["cell"] != "default"
         and x.get("http_ratio") is not None]
    if not s:
        return None
    x = ["# cell, ab req/s and iperf3 Mbit/s over default in %"]
    for r in s:
        x.append(r["cell"] + " " + " ".join(
            "%.4f" % (100.0 * (r[k] - 1)) if r.get(k) is not None else "NaN"
            for k in ("http_ratio", "iperf_ratio")))
    P.dat("hotpath.dat", x)
    script = ("set title 'Throughput over the default cell of the same "
              "round (median, %%; %s)'\n" % P.cond +
              "set style data histograms\nset style histogram clustered\n"
              "set style fill solid 0.8 border -1\nset key top right\n"
              "set ylabel 'change, percent'\nset xzeroaxis\n"
              "plot 'hotpath.dat' using 2:xtic(1) title 'ab req/s', "
              "'' using 3 title 'iperf3 Mbit/s'\n")
    return P.render("hotpath", script, h=420)


def report_md(res, figs, fig_md):
    p = res["params"]
    rows = []
    for s in res["summary"]:
        rows.append("| %s | %d | %s [%s..%s] | %s | %s [%s..%s] | %s | "
                    "%s / %s | %s |" % (
                        s["cell"], s["rounds"], C.fmt(s["http_rps"]),
                        C.fmt(s["http_rps_min"]), C.fmt(s["http_rps_max"]),
                        ratio_text(s, "http_ratio")
                        if s["cell"] != "default" else "-",
                        C.fmt(s["iperf_mbps"]), C.fmt(s["iperf_mbps_min"]),
                        C.fmt(s["iperf_mbps_max"]),
                        ratio_text(s, "iperf_ratio")
                        if s["cell"] != "default" else "-",
                        C.fmt(s["http_rx_irqs_s"], 0),
                        C.fmt(s["iperf_rx_irqs_s"], 0),
                        C.fmt(s.get("napd_cpu_ms_s"), 1)))
    return "\n".join([
        "## 7. What the feature costs a busy server\n",
        "Two guests side by side, one booted with `rcu_nocbs=all` (the "
        "quiet-nap setting of experiment 5); in each, the NIC's receive "
        "IRQs are armed (pseudo selected, NIC kept awake, receive vectors "
        "in /sys/power/wake_irq: napd's state while it serves) or not, "
        "between measurements of the same boot. Per cell and round: "
        "`ab -c 4 -t %d` on a small page and `iperf3 -t %d` host to guest; "
        "%d round(s), the order of the cells rotating. Medians [min..max] "
        "over the rounds; \"over default\" is the median [range] of the "
        "per-round ratios to the default cell of the same round. The last "
        "column is the NIC receive interrupts per second that took the "
        "check (ab / iperf3). In the napd-task cell napd runs with wake on "
        "work (`--wake-on task`, no IRQ armed) on the served ports; its last "
        "column is napd's own CPU time, ms per second.\n" % (
            p["t"], p["t"], p["rounds"]),
        "| cell | rounds | ab req/s | over default | iperf3 Mbit/s | over "
        "default | NIC rx IRQs/s | napd CPU ms/s |\n"
        "|---|---|---|---|---|---|---|---|\n"
        + "\n".join(rows) + "\n",
        fig_md(figs, "hotpath.png")])
