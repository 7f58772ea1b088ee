# SPDX-License-Identifier: GPL-2.0
"""8. The Debian 12 server guest awake against napping, in one boot.

Boots make rootfs's image once, as tests/test_debian.py does
(debian_guest.DebianGuest: our kernel and napd from their packages,
napd under its unit's defaults, the e1000e its wake device, root on
NVMe), which keeps the harness's
own virtio channels running through naps (debian_guest.KEEP_HARNESS), and
alternates two modes in that boot, in reversed order on odd runs:

  awake    `napctl pause`: napd holds naps off, the CPUs idle in HLT
  napping  `napctl resume`: napd naps after its idle time

Per mode and run: N Apache GETs (urllib) and N memcached gets (a raw
`get`), from the namespace of the guest's bridge, each after GAP_S of
quiet, so that in the napping mode each meets a nap.  After each
request one connection to the agent reads /sys/power/pseudosleep/:
whether a nap ended since the previous request (the request met it), and
that nap's entry (sync + freeze + suspend devices + halt) and exit (CPU
wake + resume devices + thaw), on the guest's clock.  Lost: no answer
within 10 s.  Asleep: total_nap_ns over the wall time of the series.
During the napping series the PM core's per-device callbacks and its
suspend_resume steps are traced (lean_naps.parse_trace()): what each
device costs a nap under napd's default device policy.

Then the load balancer's view: HAProxy in front of Apache (keep-alive
pool, a TCP check every 2 s, debian_guest.HAPROXY_CFG) and no user
request for HC_S s per mode and run: the share of time asleep, the naps,
the checks the guest's TCP answered (/proc/net/snmp) and how long
HAProxy saw them take, then one request through HAProxy.

Writes DIR/debian/: debian.csv (a row per request), debian_summary.csv,
debian_asleep.csv (a row per series), debian_devices.csv (per device),
debian_health.csv (a row per health-check window), debian.png
(matplotlib), README.md,
whose section bench also puts in DIR/README.md between its markers, and
debian.json, from which `bench --only debian --report-only` writes them
again.  Nothing asserts on the timings.
"""

import json
import os
import shutil
import tempfile
import time

from . import common as C

import debian_guest  # noqa: E402
import hosttests  # noqa: E402
import lean_naps  # noqa: E402

MODES = ("awake", "napping")
CLIENTS = ("apache", "memcached")
GAP_S = 0.5
# Seconds of health checks alone per mode and run (quick: HC_QUICK_S).
HC_S, HC_QUICK_S = 30, 10
# The costliest devices listed in the section.
TOP_DEVICES = 8
KEY = "ps-bench-key"
VALUE = b"pseudosleep bench value"
ENTRY = ("entry_sync_ns", "entry_freeze_ns", "entry_suspend_devices_ns",
         "entry_cpu_halt_ns")
EXIT = ("exit_cpu_wake_ns", "exit_resume_devices_ns", "exit_thaw_ns")
# Each phase's column in debian.csv: "entry_sync_ns" -> "sync_ms".
PHASES = [(k, k.split("_", 1)[1][:-3] + "_ms") for k in ENTRY + EXIT]
# results/README.md: the generated section stands between these lines.
BEGIN = "<!-- bench --only debian: begin (generated; do not edit) -->"
END = "<!-- bench --only debian: end -->"
TITLE = "### The Debian 12 guest awake against napping (bench --only debian)"


def ask(guest, client):
    """One request: None when answered, else why not."""
    if client == "apache":
        body, _ = guest.http_get(timeout=10)
        return None if body and b"pseudosleep debian guest" in body \
            else "no answer"
    value, _ = guest.memcached_get(KEY, timeout=10)
    return None if value == VALUE else "no value"


def series(guest, mode, client, run, n, prev):
    """n spaced requests after the stats prev: their rows and the
    series' span (wall time, time asleep)."""
    last = {"stats": prev, "t": time.monotonic()}
    t0, ns0 = last["t"], prev.get("total_nap_ns", 0)

    def after(i):
        st = guest.stats()
        met = st.get("naps", 0) - last["stats"].get("naps", 0)
        last["stats"], last["t"] = st, time.monotonic()
        return st, met
    rows = []
    for r in debian_guest.spaced(n, GAP_S, lambda i: ask(guest, client),
                                 after):
        st, met = r["after"]
        row = {"mode": mode, "client": client, "run": run, "i": r["i"],
               "ms": None if r["why"] else 1e3 * r["s"],
               "lost": 1 if r["why"] else 0, "naps_since_last": met}
        if met:
            row["entry_ms"] = sum(st.get(k, 0) for k in ENTRY) / 1e6
            row["exit_ms"] = sum(st.get(k, 0) for k in EXIT) / 1e6
            row["wake_latency_ms"] = st.get("wake_latency_ns", 0) / 1e6
            row.update((col, st.get(k, 0) / 1e6) for k, col in PHASES)
        rows.append(row)
    span = last["t"] - t0
    nap_s = (last["stats"].get("total_nap_ns", 0) - ns0) / 1e9
    asleep = 100.0 * nap_s / span if span > 0 else None
    return rows, {
        "mode": mode, "client": client, "run": run, "seconds": span,
        "nap_seconds": nap_s, "naps": last["stats"].get("naps", 0) -
        prev.get("naps", 0), "asleep_pct": asleep}


def read_trace(g):
    """The naps in the trace, read with napd paused: the agent's long
    answer would wait for the host's acknowledgements in a nap (napd
    watches Apache's and memcached's ports, not the agent's) and that nap
    would count in the next series."""
    g.out("napctl pause")
    try:
        return lean_naps.parse_trace(g.out("cat %s/trace" %
                                           debian_guest.TRACE))
    finally:
        g.out(debian_guest.TRACE_OFF + " && napctl resume")


def guest_clock(g):
    """(host monotonic, guest CLOCK_MONOTONIC) s, read back to back."""
    t = time.monotonic()
    return t, float(g.out("python3 -c 'import time; "
                          "print(time.monotonic())'"))


def clock_rate(a, b):
    """Guest seconds per host second between two guest_clock() reads."""
    return (b[1] - a[1]) / (b[0] - a[0])


def tcp_accepts(g):
    """Connections the guest's TCP answered: passive opens (this one's
    included) and AttemptFails.  HAProxy's layer-4 check resets the
    connection right after the handshake: a passive open, or with
    TCP_DEFER_ACCEPT (Apache's AcceptFilter) a reset request socket, an
    AttemptFail; either way once.  AttemptFails also counts the guest's
    own failed connects, of which a quiet guest has none."""
    out = g.out("grep '^Tcp:' /proc/net/snmp")
    keys, vals = [l.split()[1:] for l in out.splitlines()[:2]]
    tcp = dict(zip(keys, vals))
    return int(tcp["PassiveOpens"]) + int(tcp["AttemptFails"])


def health_window(g, where, mode, run, quiet_s):
    """quiet_s s of HAProxy's checks alone, then one request through it."""
    st0 = g.stats()
    row0 = debian_guest.haproxy_server(where)
    opens0 = tcp_accepts(g)
    t0 = time.monotonic()
    durs = []
    while time.monotonic() - t0 < quiet_s:
        time.sleep(1)
        d = debian_guest.haproxy_server(where).get("check_duration")
        if d and d.isdigit():
            durs.append(int(d))
    checks = tcp_accepts(g) - opens0 - 1
    span = time.monotonic() - t0
    st1 = g.stats()
    row1 = debian_guest.haproxy_server(where)
    t1 = time.monotonic()
    rc, out = g.netns_cmd(["curl", "-sS", "-m", "10",
                           debian_guest.HAPROXY_URL], timeout=20)
    answered = not rc and "pseudosleep debian guest" in out
    naps = st1.get("naps", 0) - st0.get("naps", 0)
    return {
        "mode": mode, "run": run, "seconds": round(span, 2),
        "asleep_pct": 100.0 * (st1.get("total_nap_ns", 0) -
                               st0.get("total_nap_ns", 0)) / 1e9 / span,
        "naps": naps, "naps_per_min": 60.0 * naps / span,
        "checks": checks, "check_ms_median": C.median(durs),
        "check_ms_max": max(durs) if durs else None,
        "down": int(row1.get("chkdown") or 0) - int(row0.get("chkdown") or 0),
        "after_ms": 1e3 * (time.monotonic() - t1) if answered else None,
        "after_lost": 0 if answered else 1}


def health_checks(g, ctx, modes):
    """Each mode in each run: a health_window() of HC_S s."""
    quiet_s = HC_QUICK_S if ctx.quick else HC_S
    where = tempfile.mkdtemp(prefix="ps-bench-haproxy.")
    lb = debian_guest.haproxy_start(g, where)
    out = []
    try:
        if not debian_guest.haproxy_up(lb, where):
            C.broken("debian: HAProxy never saw the guest UP")
            return out
        for run in range(ctx.runs):
            for mode in ctx.order(modes, run):
                g.out("napctl %s" % ("pause" if mode == "awake"
                                     else "resume"))
                # the keep-alive pool: one request opens it
                g.netns_cmd(["curl", "-sS", "-m", "10",
                             debian_guest.HAPROXY_URL], timeout=20)
                time.sleep(1.0)
                w = health_window(g, where, mode, run, quiet_s)
                out.append(w)
                C.say("  run %d %-7s health checks %.0f s: asleep %s %%, "
                      "%d naps, %d checks answered, check %s ms, request "
                      "after it %s" % (
                          run, mode, w["seconds"], C.fmt(w["asleep_pct"]),
                          w["naps"], w["checks"],
                          C.fmt(w["check_ms_median"]),
                          "lost" if w["after_lost"] else
                          "%s ms" % C.fmt(w["after_ms"])))
    finally:
        lb.terminate()
        lb.wait(timeout=30)
        shutil.rmtree(where, ignore_errors=True)
    return out


def summarize(rows, spans, runs):
    """One summary row per (mode, client), and one for the napping
    requests that met a nap."""
    out = []
    groups = []
    for client in CLIENTS:
        groups.append(("awake", client, lambda r: r["mode"] == "awake"))
        groups.append(("napping", client, lambda r: r["mode"] == "napping"))
        groups.append(("napping, met a nap", client,
                       lambda r: r["mode"] == "napping" and
                       r["naps_since_last"] > 0))
    for label, client, sel in groups:
        rs = [r for r in rows if r["client"] == client and sel(r)]
        s = C.summary([r["ms"] for r in rs])
        run_meds = [C.median([r["ms"] for r in rs if r["run"] == k])
                    for k in range(runs)]
        run_meds = [m for m in run_meds if m is not None]
        mode = label.split(",")[0]
        sp = [x["asleep_pct"] for x in spans if x["mode"] == mode and
              x["client"] == client]
        out.append({
            "mode": label, "client": client, "requests": len(rs),
            "lost": sum(r["lost"] for r in rs),
            "met_nap": sum(1 for r in rs if r["naps_since_last"] > 0),
            "ms_median": s["median"], "ms_p10": s["p10"], "ms_p90": s["p90"],
            "run_median_min": min(run_meds) if run_meds else None,
            "run_median_max": max(run_meds) if run_meds else None,
            "asleep_pct": C.median(sp),
            "entry_ms": C.median([r.get("entry_ms") for r in rs]),
            "exit_ms": C.median([r.get("exit_ms") for r in rs]),
            "wake_latency_ms": C.median([r.get("wake_latency_ms")
                                         for r in rs])})
    return out


def phases_md(rows):
    """Each phase's median over the naps met, as "sync 0.12, ...; CPU
    wake ..., ...": where entry and exit go."""
    def part(keys):
        return ", ".join(
            "%s %s" % (col[:-3].replace("_", " ").replace("cpu", "CPU"),
                       C.fmt(C.median([r.get(col) for r in rows]), 2))
            for k, col in PHASES if k in keys)
    return "%s; %s" % (part(ENTRY), part(EXIT))


def plot(path, rows, health=()):
    """Latency of each client by mode, the naps' entry and exit, and the
    share of time asleep under health checks alone."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        C.say("  no matplotlib (make deps): no plot")
        return None
    fig, axes = plt.subplots(1, 4, figsize=(17, 4.2))
    labels = ("awake", "napping,\nmet a nap")
    for ax, client in zip(axes, CLIENTS):
        data = [[r["ms"] for r in rows if r["client"] == client and
                 r["ms"] is not None and r["mode"] == "awake"],
                [r["ms"] for r in rows if r["client"] == client and
                 r["ms"] is not None and r["mode"] == "napping" and
                 r["naps_since_last"] > 0]]
        if all(data):
            ax.boxplot(data, labels=labels, showfliers=True)
        ax.set_title("%s %s" % (client, "GET" if client == "apache"
                                else "get"))
        ax.set_ylabel("response time, ms (wall clock)")
        ax.set_yscale("log")
    met = [r for r in rows if r["mode"] == "napping" and
           r.get("entry_ms") is not None]
    if met:
        axes[2].boxplot([[r["entry_ms"] for r in met],
                         [r["exit_ms"] for r in met]],
                        labels=("entry", "exit"))
    axes[2].set_title("nap entry and exit")
    axes[2].set_ylabel("ms (/sys/power/pseudosleep)")
    modes = [m for m in MODES if any(h["mode"] == m for h in health)]
    if modes:
        axes[3].boxplot([[h["asleep_pct"] for h in health
                          if h["mode"] == m] for m in modes], labels=modes)
        axes[3].set_ylim(0, 100)
    axes[3].set_title("HAProxy health checks alone")
    axes[3].set_ylabel("share of time asleep, %")
    fig.suptitle("Debian 12 guest, one boot, QEMU TCG: awake against "
                 "napping (napd)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def _row(summary, label, client):
    for s in summary:
        if s["mode"] == label and s["client"] == client:
            return s
    return {}


def section_md(res):
    """The Markdown section of a run (README.md and REPORT.md)."""
    if res.get("skipped"):
        return "%s\n\nSkipped: %s.\n" % (TITLE, res["skipped"])
    sm, c = res["summary"], res["cond"]

    def lat(label, client):
        s = _row(sm, label, client)
        if not s.get("requests"):
            return "-"
        return "%s ms [%s..%s], runs %s..%s (%d)" % (
            C.fmt(s["ms_median"]), C.fmt(s["ms_p10"]), C.fmt(s["ms_p90"]),
            C.fmt(s["run_median_min"]), C.fmt(s["run_median_max"]),
            s["requests"])
    rows = []
    for client, what in (("apache", "Apache GET"),
                         ("memcached", "memcached get")):
        aw = _row(sm, "awake", client)
        met = _row(sm, "napping, met a nap", client)
        over = "-"
        if aw.get("ms_median") and met.get("ms_median"):
            over = "%+.0f %%" % (100.0 * (met["ms_median"] /
                                          aw["ms_median"] - 1))
        rows.append([what, lat("awake", client),
                     lat("napping, met a nap", client), over])
    nap = [s for s in sm if s["mode"] == "napping"]
    aw = [s for s in sm if s["mode"] == "awake"]
    rows.append(["requests lost (no answer in 10 s)", " / ".join(
        "%s %d/%d" % (s["client"], s["lost"], s["requests"]) for s in aw),
        " / ".join("%s %d/%d" % (s["client"], s["lost"], s["requests"])
                   for s in nap), ""])
    rows.append(["share of time asleep, median of runs", " / ".join(
        "%s %s %%" % (s["client"], C.fmt(s["asleep_pct"])) for s in aw),
        " / ".join("%s %s %%" % (s["client"], C.fmt(s["asleep_pct"]))
                   for s in nap), ""])
    rows.append(["requests that met a nap", " / ".join(
        "%s %d/%d" % (s["client"], s["met_nap"], s["requests"])
        for s in aw), " / ".join("%s %d/%d" % (
            s["client"], s["met_nap"], s["requests"]) for s in nap), ""])
    ent = C.median([r.get("entry_ms") for r in res["rows"]])
    ext = C.median([r.get("exit_ms") for r in res["rows"]])
    nmet = sum(1 for r in res["rows"] if r.get("entry_ms") is not None)
    rows.append(["nap entry / exit, medians of the %d naps met" % nmet,
                 "-", "%s / %s ms" % (C.fmt(ent, 2), C.fmt(ext, 2)), ""])
    rows.append(["their phases, medians, ms", "-", phases_md(res["rows"]),
                 ""])
    text = [
        TITLE + "\n",
        "Generated by `bench --only debian` (`make bench ONLY=debian`) "
        "on %s at commit %s%s: one boot of the Debian 12 guest (make "
        "rootfs: systemd, Apache, memcached, our kernel and napd from "
        "their packages, root on NVMe, e1000e) on kernel %s (%s), QEMU %s on %s host CPUs "
        "(load %s at the start); BUILD_DIR %s." % (
            c.get("date", "?"), c.get("commit", "?"),
            " (uncommitted changes)" if c.get("dirty") else "",
            res.get("uname", "?"), c.get("kernel_kind", "?").rstrip("."),
            res.get("accel", "?"), c.get("nproc", "?"),
            c.get("loadavg_start", "?"), c.get("build_dir", "?")),
        "",
        "Compared in the same boot: **awake** (`napctl pause`, HLT idle) "
        "against **napping** (`napctl resume`, napd's defaults), %d run(s) "
        "in alternating order, each %d Apache GETs (urllib) and %d "
        "memcached gets (one `get` on a new connection) per mode, %.1f s "
        "of quiet before each.  Response times on the host's wall clock: "
        "median [p10..p90] over all requests, then the range of the runs' "
        "medians (and the number of requests).  The share of time asleep "
        "is total_nap_ns over a series' wall time, which includes each "
        "request and the statistics read after it.  Entry and "
        "exit come from `/sys/power/pseudosleep/` (entry: sync + freeze "
        "+ suspend devices + halt; exit: CPU wake + resume devices + "
        "thaw).  Under TCG every instruction is emulated: compare the "
        "columns, not with hardware.  Booted in %.0f s.  Files: "
        "[debian.csv](debian/debian.csv) (every request), "
        "[debian_summary.csv](debian/debian_summary.csv), "
        "[debian.png](debian/debian.png)." % (
            res["runs"], res["requests"], res["requests"], GAP_S,
            res.get("boot_s") or 0),
        "",
        C.md_table(["", "awake", "napping: requests that met a nap",
                    "met a nap over awake"], rows).rstrip("\n")]
    text += devices_md(res) + health_md(res)
    if res.get("notes"):
        text += [""] + ["- " + n for n in res["notes"]]
    return "\n".join(text) + "\n"


def devices_md(res):
    """The costliest devices per nap, from the PM core's trace events."""
    devs = res.get("devices")
    if not devs:
        return []
    devs = sorted(devs, key=lambda d: -(d["suspend_ms"] + d["resume_ms"]))
    called = [d for d in devs if d["callbacks_per_nap"] > 0]
    rows = [[d["device"], d["driver"], C.fmt(d["suspend_ms"], 2),
             C.fmt(d["resume_ms"], 2), C.fmt(d["callbacks_per_nap"], 1)]
            for d in devs[:TOP_DEVICES]]
    total = sum(d["suspend_ms"] + d["resume_ms"] for d in devs)
    return [
        "", "Per device, over the %d naps traced in the napping series "
        "(the PM core's `device_pm_callback_start`/`_end` events; a "
        "device's time sums its callbacks in a nap, prepare and complete "
        "included, divided by the naps): %d devices were traced, %d of "
        "them had suspend or resume callbacks run, the others were left "
        "out by napd's default device policy or by the PM core (kept, or "
        "no PM work) and cost only the walk.  All devices together: %s ms "
        "per nap; the harness's own channels (the virtio console and the "
        "two 9p shares, which a real server has not) are kept running "
        "(`power/nosleep`).  The %d costliest, in [debian_devices.csv]"
        "(debian/debian_devices.csv):" % (
            res.get("traced_naps", 0), len(devs), len(called),
            C.fmt(total, 2), min(TOP_DEVICES, len(devs))),
        "",
        C.md_table(["device", "driver", "suspend, ms per nap",
                    "resume, ms per nap", "callbacks per nap"],
                   rows).rstrip("\n")]


def health_md(res):
    """The health-check windows: awake against napping."""
    hs = res.get("health")
    if not hs:
        return []
    modes = [m for m in MODES if any(h["mode"] == m for h in hs)]

    def col(mode, key, nd=1):
        v = [h[key] for h in hs if h["mode"] == mode]
        vv = [x for x in v if x is not None]
        if not vv:
            return "-"
        return "%s [%s..%s]" % (C.fmt(C.median(vv), nd), C.fmt(min(vv), nd),
                                C.fmt(max(vv), nd))

    def total(mode, key):
        return sum(h[key] for h in hs if h["mode"] == mode)
    rows = [
        ["share of time asleep, %"] + [col(m, "asleep_pct") for m in modes],
        ["naps per minute"] + [col(m, "naps_per_min") for m in modes],
        ["checks the guest's TCP answered, per window"] +
        [col(m, "checks", 0) for m in modes],
        ["check duration seen by HAProxy, ms (median of 1 s samples)"] +
        [col(m, "check_ms_median") for m in modes],
        ["backend marked down"] + ["%d" % total(m, "down") for m in modes],
        ["request through HAProxy after the window, ms"] +
        [col(m, "after_ms") for m in modes],
        ["requests lost"] + ["%d/%d" % (total(m, "after_lost"),
                                         sum(1 for h in hs
                                             if h["mode"] == m))
                             for m in modes]]
    return [
        "", "A load balancer's health checks alone: HAProxy in front of "
        "Apache (keep-alive pool, `check inter 2s`), one request to open "
        "the pool, then %.0f s with no user request, per mode and run "
        "(%d windows); median [min..max] of the windows, in "
        "[debian_health.csv](debian/debian_health.csv)." % (
            hs[0]["seconds"], len(hs)),
        "",
        C.md_table([""] + modes, rows).rstrip("\n")]


def update_readme(path, section):
    """Put section between BEGIN and END in path (before its
    "## Reliability" the first time)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError:
        return False
    block = "%s\n%s\n%s\n" % (BEGIN, section.rstrip("\n"), END)
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + block + "\n" + rest.split(END, 1)[1].lstrip("\n")
    elif "\n## Reliability" in text:
        head, rest = text.split("\n## Reliability", 1)
        text = head + "\n" + block + "\n## Reliability" + rest
    else:
        text = text.rstrip("\n") + "\n\n" + block
    with open(path, "w") as f:
        f.write(text)
    return True


def run(ctx):
    why = debian_guest.unusable() or \
        ("DEBIAN_KERNEL=1: Debian's kernel has no pseudo mode"
         if debian_guest.OWN_KERNEL else None)
    if not why and ctx.quick and "debian" not in getattr(ctx, "only", ()):
        # CI's smoke run (make bench QUICK=1) stays as long as it was.
        why = "not in the quick subset unless named (--only debian)"
    rootfs = None
    if not why:
        rootfs, why = hosttests.debian_rootfs()
    if why:
        C.say("== 8. Debian guest: skipped, %s" % why)
        return {"name": "debian", "skipped": why}
    n = ctx.requests or (8 if ctx.quick else 25)
    modes = ctx.modes(MODES)
    C.say("== 8. Debian guest: %s, one boot, %d run(s) of %d Apache GETs "
          "and %d memcached gets per mode, %.1f s apart" % (
              " against ".join(modes), ctx.runs, n, n, GAP_S))
    g = debian_guest.DebianGuest(rootfs)
    rows, spans, notes, naps, health = [], [], [], [], []
    res = {"name": "debian", "runs": ctx.runs, "requests": n,
           "cond": ctx.cond}
    try:
        why = g.start()
        if why:
            C.broken("debian: the guest did not come up: " + why)
            res["skipped"] = "the guest did not come up"
            return res
        res["boot_s"] = g.boot_s
        res["uname"] = g.out("uname -r").strip()
        res["accel"] = "kvm" if "kvm" in g.out(
            "systemd-detect-virt || true") else "tcg"
        C.say("  booted in %.0f s: %s" % (g.boot_s, res["uname"]))
        if not g.memcached_set(KEY, VALUE):
            raise RuntimeError("memcached did not store the bench's value")
        clock0 = guest_clock(g)
        for run in range(ctx.runs):
            for mode in ctx.order(modes, run):
                g.out("napctl %s" % ("pause" if mode == "awake"
                                     else "resume"))
                time.sleep(1.0)
                for client in ctx.order(CLIENTS, run):
                    if mode == "napping":
                        g.out(debian_guest.TRACE_ON)
                    rs, span = series(g, mode, client, run, n, g.stats())
                    if mode == "napping":
                        naps += read_trace(g)
                    rows += rs
                    spans.append(span)
                    ok = [r["ms"] for r in rs if r["ms"] is not None]
                    C.say("  run %d %-7s %-9s median %s ms, %d/%d lost, "
                          "%d met a nap, asleep %s %%" % (
                              run, mode, client, C.fmt(C.median(ok)),
                              sum(r["lost"] for r in rs), len(rs),
                              sum(1 for r in rs if r["naps_since_last"]),
                              C.fmt(span["asleep_pct"])))
        g.out("napctl resume")
        health = health_checks(g, ctx, modes)
        rate = clock_rate(clock0, guest_clock(g))
        notes.append("The guest's CLOCK_MONOTONIC advanced %.3f times as "
                     "fast as the host's over the measurements (naps "
                     "included)." % rate)
        over = [x for x in spans if (x["asleep_pct"] or 0) > 100]
        if over or abs(rate - 1) > 0.05:
            C.broken("debian: the guest's clock and the nap statistics "
                     "disagree with the host's (clock rate %.3f, %d "
                     "series asleep over 100 %%)" % (rate, len(over)))
        aborted = g.stat("aborted_naps")
        notes.append("%d naps in the boot, %d aborted; napd %s at the "
                     "end." % (g.stat("naps"), aborted, g.out(
                         "systemctl is-active napd || true").strip()))
    finally:
        g.stop()
        g.cleanup()
    res.update({"rows": rows, "spans": spans, "notes": notes,
                "devices": lean_naps.device_rows(naps, "default"),
                "traced_naps": len(naps), "health": health})
    out = ctx.path("debian")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "debian.json"), "w") as f:
        json.dump(res, f, indent=1, default=str)
    return write_outputs(ctx, res)


def report_only(ctx):
    """Write DIR/debian/'s files and the README section again from
    DIR/debian/debian.json (a format change needs no new run)."""
    with open(ctx.path(os.path.join("debian", "debian.json"))) as f:
        res = json.load(f)
    return write_outputs(ctx, res)


def write_outputs(ctx, res):
    """CSVs, plot, README.md and DIR/README.md's section of a run."""
    if res.get("skipped"):
        return res
    out = ctx.path("debian")
    rows, spans = res["rows"], res["spans"]
    summary = summarize(rows, spans, res["runs"])
    res["summary"] = summary
    C.write_csv(os.path.join(out, "debian.csv"), rows, [
        "mode", "client", "run", "i", "ms", "lost", "naps_since_last",
        "entry_ms", "exit_ms", "wake_latency_ms"] +
        [col for _, col in PHASES])
    C.write_csv(os.path.join(out, "debian_summary.csv"), summary)
    C.write_csv(os.path.join(out, "debian_asleep.csv"), spans)
    C.write_csv(os.path.join(out, "debian_devices.csv"), sorted(
        res.get("devices") or [],
        key=lambda d: -(d["suspend_ms"] + d["resume_ms"])))
    C.write_csv(os.path.join(out, "debian_health.csv"),
                res.get("health") or [])
    plot(os.path.join(out, "debian.png"), rows, res.get("health") or ())
    section = section_md(res)
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write(section.replace("](debian/", "]("))
    if update_readme(ctx.path("README.md"), section):
        C.say("  section written to %s" % ctx.path("README.md"))
    C.say(section)
    return res


def report_md(res):
    return section_md(res)
