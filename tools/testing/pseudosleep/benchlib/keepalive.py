# SPDX-License-Identifier: GPL-2.0
"""9. A backend behind a load balancer's keep-alive pool (issue 32).

The host holds KA_CONNS connections open to an echo server in the guest,
as HAProxy or an nginx upstream pool would, and sends one request on one
of them (chosen at random) every GAP_S seconds; the connections are quiet
in between.  Each mode boots its own guest:

  awake  no napd: the guest idles in HLT
  napd   napd with its defaults (idle 5 ms, wake on work, max-nap 5 s),
         watching the echo server's port

Per mode: requests answered and lost, the response time of each request
(for napd most of them meet a nap), the share of the time asleep
(total_nap_ns) and naps per minute.  Medians of all requests of all runs,
with p10..p90; the ratio of the medians, napd against awake.  Writes
keepalive.csv (one row per run) and keepalive_summary.csv.
"""

import random
import socket
import time

from . import common as C

MODES = ("awake", "napd")
KA_CONNS = 20
KA_PORT = 8080
GAP_S = 2.0


def guest_script(mode):
    s = "httpd -p 80 -h /www\nnc -ll -p %d -e /bin/cat &\n" % KA_PORT
    if mode == "napd":
        # Port 80 too: the statistics requests must end a nap as well.
        s += "%s --port %d --port 80 --wake-dev eth0 --log &\n" % (
            C.NAPD, KA_PORT)
    # Ready once the echo server listens (/proc/net/tcp: hex port, LISTEN).
    return s + ("while ! awk '$2 ~ /:%04X$/ && $4 == \"0A\"' /proc/net/tcp "
                "/proc/net/tcp6 | grep -q .; do sleep 0.1; done\n"
                "echo KA-READY\nwhile :; do sleep 3600; done\n" % KA_PORT)


def echo(conn, msg):
    """The round trip of msg (one line) on conn in s, or None if it did
    not come back."""
    t0 = time.monotonic()
    got = C.pslib.echo_roundtrip(conn, msg)
    return time.monotonic() - t0 if got == msg else None


def run_one(ctx, mode, run, requests):
    row = {"mode": mode, "run": run, "status": "ok"}
    bg = C.BenchGuest("keepalive-%s-%d" % (mode, run), guest_script(mode),
                      ports=(80, KA_PORT), logdir=ctx.logdir)
    conns, times = [], []
    try:
        if not ctx.started(bg, r"^KA-READY",
                           "keepalive %s run %d" % (mode, run)):
            row["status"] = "failed: the guest did not start"
            return row, times
        time.sleep(1.0)
        for i in range(KA_CONNS):
            c = socket.create_connection(("127.0.0.1", bg.port[KA_PORT]),
                                         timeout=15)
            conns.append(c)
            if echo(c, b"hello %d\n" % i) is None:
                row["status"] = "failed: connection %d: no echo" % i
                return row, times
        time.sleep(GAP_S)
        s0 = C.parse_stats(bg.get(80, "/cgi-bin/st", timeout=10)[0])
        rnd = random.Random(ctx.seed + run)
        t0 = time.monotonic()
        lost = 0
        for i in range(requests):
            time.sleep(GAP_S)
            took = echo(conns[rnd.randrange(KA_CONNS)], b"request %d\n" % i)
            if took is None:
                lost += 1
            else:
                times.append(took * 1e3)
        took = time.monotonic() - t0
        s1 = C.parse_stats(bg.get(80, "/cgi-bin/st", timeout=10)[0])
        if not s0 or not s1:
            row["status"] = "failed: no statistics from the guest"
            return row, times
        naps = s1.get("naps", 0) - s0.get("naps", 0)
        if mode == "napd" and not naps:     # napd did not run, or broke
            row["status"] = "failed: napd took no nap"
        row.update({
            "requests": requests, "lost": lost,
            "rt_ms_median": C.median(times) if times else None,
            "rt_ms_max": max(times) if times else None,
            "naps": naps, "naps_per_min": naps * 60.0 / took,
            "asleep_pct": 100.0 * (s1.get("total_nap_ns", 0) -
                                   s0.get("total_nap_ns", 0)) / (took * 1e9)})
    finally:
        for c in conns:
            c.close()
        bg.stop()
    return row, times


def run(ctx):
    requests = 10 if ctx.quick else 30
    modes = ctx.modes(MODES)
    C.say("== 9. keep-alive pool: %d quiet connections, a request on one "
          "every %g s, %d per boot; modes %s, %d run(s)" % (
              KA_CONNS, GAP_S, requests, ", ".join(modes), ctx.runs))
    rows, times = [], {m: [] for m in modes}
    for run in range(ctx.runs):
        for mode in ctx.order(modes, run):
            r, t = run_one(ctx, mode, run, requests)
            rows.append(r)
            if r["status"] == "ok":
                times[mode] += t
            C.say("  run %d %-5s %s  response %s ms (max %s), lost %s/%s, "
                  "asleep %s%%, %s naps/min" % (
                      run, mode, r["status"], C.fmt(r.get("rt_ms_median")),
                      C.fmt(r.get("rt_ms_max")), r.get("lost", "-"),
                      r.get("requests", "-"), C.fmt(r.get("asleep_pct")),
                      C.fmt(r.get("naps_per_min"))))
    C.write_csv(ctx.path("keepalive.csv"), rows, [
        "mode", "run", "status", "requests", "lost", "rt_ms_median",
        "rt_ms_max", "naps", "naps_per_min", "asleep_pct"])
    summary = []
    for mode in modes:
        ok = [x for x in rows if x["mode"] == mode and x["status"] == "ok"]
        s = C.summary(times[mode])
        summary.append({
            "mode": mode, "runs": len(ok),
            "requests": sum(x["requests"] for x in ok),
            "lost": sum(x["lost"] for x in ok),
            "rt_ms_median": s["median"], "rt_ms_p10": s["p10"],
            "rt_ms_p90": s["p90"], "rt_ms_max": s["max"],
            "asleep_pct": C.median([x["asleep_pct"] for x in ok]),
            "naps_per_min": C.median([x["naps_per_min"] for x in ok])})
    C.write_csv(ctx.path("keepalive_summary.csv"), summary)
    return {"name": "keepalive", "rows": rows, "summary": summary,
            "requests": requests}


def ratio(summary):
    """napd's median response time over awake's, or None."""
    by = {s["mode"]: s["rt_ms_median"] for s in summary}
    if by.get("awake") and by.get("napd") is not None:
        return by["napd"] / by["awake"]
    return None


def report_md(res):
    head = ["mode", "runs", "lost / sent", "response ms, median [p10..p90]",
            "max ms", "asleep", "naps/min"]
    rows = [[s["mode"], str(s["runs"]), "%d/%d" % (s["lost"], s["requests"]),
             C.fmt_spread({"median": s["rt_ms_median"], "p10": s["rt_ms_p10"],
                           "p90": s["rt_ms_p90"]}),
             C.fmt(s["rt_ms_max"]), "%s %%" % C.fmt(s["asleep_pct"]),
             C.fmt(s["naps_per_min"])] for s in res["summary"]]
    r = ratio(res["summary"])
    return "\n".join([
        "## 9. A backend behind a keep-alive pool\n",
        "%d connections held open to an echo server in the guest, a "
        "request on one of them every %g s (%d per boot); napd with its "
        "defaults against no napd. Response times of all requests of all "
        "runs; asleep and naps/min are medians of runs.%s\n" % (
            KA_CONNS, GAP_S, res["requests"],
            " napd's median is %s times awake's." % C.fmt(r, 2) if r
            else ""),
        C.md_table(head, rows)]) + "\n"
