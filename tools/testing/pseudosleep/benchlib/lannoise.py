# SPDX-License-Identifier: GPL-2.0
"""6. Naps on a noisy LAN (bridged network, vm-run --net bridge).

napd naps the guest (pseudo, --idle-ms 50) while the host sends an HTTP GET every 2 s and the noise generator
(tools/testing/pseudosleep/noise) sends ARP, broadcasts, multicast, IPv6
NS, pings and SYNs/UDP to closed ports at 0, 10 and 100 frames per second.

  irq   napd --wake-on irq: the NIC's receive vectors are armed, and
        any interrupt on one ends the nap
  task  napd --wake-on task: no vector is armed; napd watches the servers'
        sockets with EPOLLWAKEUP, and only their work ends the nap (a
        wakeup source's activation)

Per mode and rate: naps per minute, the fraction of the window asleep
(total_nap_ns), naps beyond the requests sent (each request can end at most
one nap, so the rest were ended by noise: a lower bound), requests lost
and their response time, ARP requests for the guest answered, pings
answered and their round-trip time.  Writes lannoise.csv.
"""

import json
import os
import subprocess
import threading
import time

from . import common as C

RATES = (0, 10, 100)
MODES = ("irq", "task")
GAP_S = 2.0


def guest_script(mode):
    return "httpd -p 80 -h /www\n" + C.napper("pseudo", (80,),
                                              extra="--wake-on " + mode)


def noise_start(ns, rate, secs):
    tool = os.path.join(C.HERE, "noise")
    return subprocess.Popen([tool, "--netns", ns, "--rate", str(rate),
                             "--duration", str(secs)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def run_one(ctx, mode, rate, run, window):
    row = {"mode": mode, "rate": rate, "run": run, "window_s": window,
           "status": "ok"}
    bg = C.BenchGuest("lannoise-%s-%d-%d" % (mode, rate, run),
                      guest_script(mode), ports=(80,), net="bridge",
                      logdir=ctx.logdir)
    try:
        if not ctx.started(bg, r"^napd: mode",
                           "lannoise %s %d run %d" % (mode, rate, run)):
            row["status"] = "failed: napd did not start"
            return row
        time.sleep(1.0)
        s0 = C.parse_stats(bg.get(80, "/cgi-bin/st", timeout=10)[0])
        answers = []
        stop = threading.Event()

        def requests():
            while not stop.wait(GAP_S):
                answers.append(bg.get(80, "/", timeout=10))
        t0 = time.monotonic()
        noise = noise_start(bg.netns, rate, window) if rate else None
        th = threading.Thread(target=requests, daemon=True)
        th.start()
        time.sleep(max(0.0, t0 + window - time.monotonic()))
        stop.set()
        th.join(timeout=15)
        res = {}
        if noise:
            out, _ = noise.communicate(timeout=60)
            try:
                res = json.loads(out.decode())
            except ValueError:
                row["note"] = "noise generator failed"
        took = time.monotonic() - t0
        s1 = C.parse_stats(bg.get(80, "/cgi-bin/st", timeout=10)[0])
        if not s0 or not s1:
            row["status"] = "failed: no statistics from the guest"
            return row
        naps = s1.get("naps", 0) - s0.get("naps", 0)
        sent = len(answers) + 1		# the second statistics request
        ok = [t for b, t in answers if b]
        row.update({
            "requests": len(answers), "lost": len(answers) - len(ok),
            "rt_ms_median": C.median([t * 1e3 for t in ok]) if ok else None,
            "naps": naps, "naps_per_min": naps * 60.0 / took,
            "noise_naps_min": max(0, naps - sent),
            "asleep_pct": 100.0 * (s1.get("total_nap_ns", 0) -
                                   s0.get("total_nap_ns", 0)) / (took * 1e9),
            "frames": res.get("frames", 0),
            "arp_asked": res.get("arp_asked", 0),
            "arp_answered": res.get("arp_answered", 0),
            "ping_sent": res.get("ping_sent", 0),
            "ping_answered": res.get("ping_answered", 0),
            "ping_rtt_ms": res.get("ping_rtt_ms_median")})
    finally:
        bg.stop()
    return row


def run(ctx):
    ok, why = C.netns.bridge_usable()
    if not ok:
        C.say("== 6. LAN noise: skipped, the bridged network %s" % why)
        return {"name": "lannoise", "skipped": why, "rows": []}
    rates = (0, 10) if ctx.quick else RATES
    window = 10.0 if ctx.quick else 30.0
    modes = ctx.modes(MODES)
    C.say("== 6. LAN noise: napd naps under %s frames/s of noise, a GET "
          "every %g s, %g s windows; modes %s, %d run(s)" % (
              "/".join(map(str, rates)), GAP_S, window, ", ".join(modes),
              ctx.runs))
    rows = []
    for run in range(ctx.runs):
        for mode in ctx.order(modes, run):
            for rate in ctx.order(rates, run):
                r = run_one(ctx, mode, rate, run, window)
                rows.append(r)
                C.say("  run %d %-4s %3d fps %s  %s naps/min (%s beyond "
                      "requests), asleep %s%%, lost %s/%s, ARP %s/%s, ping "
                      "%s/%s" % (run, mode, rate, r["status"],
                                 C.fmt(r.get("naps_per_min")),
                                 r.get("noise_naps_min", "-"),
                                 C.fmt(r.get("asleep_pct")),
                                 r.get("lost", "-"), r.get("requests", "-"),
                                 r.get("arp_answered", "-"),
                                 r.get("arp_asked", "-"),
                                 r.get("ping_answered", "-"),
                                 r.get("ping_sent", "-")))
    C.write_csv(ctx.path("lannoise.csv"), rows, [
        "mode", "rate", "run", "status", "window_s", "requests", "lost",
        "rt_ms_median", "naps", "naps_per_min", "noise_naps_min",
        "asleep_pct", "frames", "arp_asked", "arp_answered", "ping_sent",
        "ping_answered", "ping_rtt_ms", "note"])
    summary = []
    for mode in modes:
        for rate in rates:
            ok = [x for x in rows if x["mode"] == mode and x["rate"] == rate
                  and x["status"] == "ok"]

            def med(k):
                return C.median([x[k] for x in ok if x.get(k) is not None])
            summary.append({
                "mode": mode, "rate": rate, "runs": len(ok),
                "naps_per_min": med("naps_per_min"),
                "noise_naps_min": med("noise_naps_min"),
                "asleep_pct": med("asleep_pct"),
                "lost": sum(x["lost"] for x in ok),
                "requests": sum(x["requests"] for x in ok),
                "rt_ms_median": med("rt_ms_median"),
                "arp": "%d/%d" % (sum(x["arp_answered"] for x in ok),
                                  sum(x["arp_asked"] for x in ok)),
                "ping": "%d/%d" % (sum(x["ping_answered"] for x in ok),
                                   sum(x["ping_sent"] for x in ok)),
                "ping_rtt_ms": med("ping_rtt_ms")})
    C.write_csv(ctx.path("lannoise_summary.csv"), summary)
    return {"name": "lannoise", "rows": rows, "summary": summary,
            "window": window, "rates": rates}


def report_md(res):
    if res.get("skipped"):
        return "## 6. Naps on a noisy LAN\n\nSkipped: the bridged " \
            "network %s.\n" % res["skipped"]
    head = ("| mode | noise fps | naps/min | naps beyond requests | asleep "
            "| lost / sent | response ms | ARP answered | pings answered | "
            "ping RTT ms |\n|---|---|---|---|---|---|---|---|---|---|")
    rows = ["| %s | %d | %s | %s | %s %% | %d/%d | %s | %s | %s | %s |" % (
        s["mode"], s["rate"], C.fmt(s["naps_per_min"]),
        C.fmt(s["noise_naps_min"], 0), C.fmt(s["asleep_pct"]), s["lost"],
        s["requests"], C.fmt(s["rt_ms_median"]), s["arp"], s["ping"],
        C.fmt(s["ping_rtt_ms"], 2)) for s in res["summary"]]
    return "\n".join([
        "## 6. Naps on a noisy LAN\n",
        "Bridged network (`vm-run --net bridge`), napd `--idle-ms 50`, a GET "
        "every %g s, %g s windows; the noise generator sends ARP, "
        "broadcasts, multicast, IPv6 NS, pings and SYN/UDP to closed ports "
        "round-robin. \"Naps beyond requests\" is a lower bound of the naps "
        "that noise ended. Medians of runs.\n" % (GAP_S, res["window"]),
        head] + rows) + "\n"
