# SPDX-License-Identifier: GPL-2.0
"""1. Wake latency: single HTTP GETs from the host to busybox httpd in the
guest at random gaps, so that they land while the guest is awake, entering
a sleep, or asleep.  Modes side by side:

  awake   no naps
  pseudo  napd --mode pseudo (NIC kept awake, its IRQs armed)
  pseudo-tuned  pseudo with the PM core's settings for frequent naps
          (Documentation/pseudosleep.rst, "Tuning for frequent naps"):
          pm_async=0, sync_on_suspend=0 and runtime PM allowed on the PCI
          functions without a driver, set before napd starts
  s2idle  napd --mode s2idle: nothing the host sends can wake it
          (virtio-net is reset by its freeze callback and has no wakeup
          capability); requests time out after 10 s and count as lost
  s2idle-pb  napd --mode s2idle with an idealized wake signal: the host
          presses the ACPI power button (QMP system_powerdown, which
          wakes s2idle and is otherwise ignored by this guest) before
          each request and, if the guest was asleep, sends the request
          once the console shows the sleep's end
  deep    napd --mode deep (ACPI S3), idealized Wake-on-LAN: the host
          sends QMP system_wakeup right before each request

After each answered request in awake and the pseudo modes the host reads the
guest's /sys/power/pseudosleep counters (a CGI): a nap aborted since the
previous request means the request arrived while a nap was being entered,
a nap ended by a NIC receive IRQ means it arrived while the guest slept.
"""

import random
import re
import time

from . import common as C

MODES = ("awake", "pseudo", "pseudo-tuned", "s2idle", "s2idle-pb", "deep")
TIMEOUT = 10.0
GAP_MIN, GAP_MAX = 0.01, 2.0
PHASES = ("entry_sync_ns", "entry_freeze_ns", "entry_suspend_devices_ns",
          "entry_cpu_halt_ns", "exit_cpu_wake_ns", "exit_resume_devices_ns",
          "exit_thaw_ns", "wake_latency_ns")


def guest_script(mode):
    s = r"""
httpd -p 80 -h /www
echo "INFO input_irqs=$(nic_input_irqs)"
"""
    if mode == "pseudo-tuned":
        # Set before napd starts, which leaves them alone.
        s += "/usr/share/pseudosleep/tune-naps.sh\n"
    if mode == "awake":
        return s + "echo READY\nexec sleep 1000000\n"
    if mode == "deep":
        # Only the host's system_wakeup should end an S3 sleep.
        s += "echo disabled > /sys/class/rtc/rtc0/device/power/wakeup\n"
    return s + "echo READY\n" + C.napper(napmode(mode), (80,))


def napmode(mode):
    """The sleep state a mode uses: pseudo-tuned naps as pseudo does."""
    return mode.split("-")[0]


def console_sleeps(text):
    return (len(re.findall(r"PM: suspend entry", text)),
            len(re.findall(r"PM: suspend exit", text)))


def wait_resumed(bg, exits, timeout=5.0):
    """Wait until the console shows more than `exits` sleep exits: ms
    waited, or None after timeout.  Sent at once after the power button,
    every request was lost: it reached the guest before virtio-net had
    resumed, and napd slept again before TCP resent the SYN a second
    later."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if console_sleeps(bg.console())[1] > exits:
            return (time.monotonic() - t0) * 1e3
        time.sleep(0.005)
    return None


def run_mode(ctx, mode, run, nreq, rng):
    rows = []
    meta = {"mode": mode, "run": run, "napd": None, "note": ""}
    bg = C.BenchGuest("wake-%s-%d" % (mode, run), guest_script(mode),
                      ports=(80,), qmp=(mode in ("deep", "s2idle-pb")),
                      logdir=ctx.logdir)
    try:
        if not ctx.started(bg, r"^READY", "wake %s run %d" % (mode, run)):
            meta["note"] = "guest did not start"
            return rows, meta
        port = bg.port[80]
        inputs = C.irq_set(bg.info.get("input_irqs"))
        if mode != "awake":
            m = bg.wait_any(r"^(napd: mode .*|NAPD-FAILED.*)$", 30)
            if m and m.group(1).startswith("napd: mode"):
                meta["napd"] = "napd"
            else:
                meta["napd"] = "shell loop"
                meta["note"] = "napd failed (%s), shell nap loop used" % (
                    m.group(1) if m else "no output")
        time.sleep(1.0)
        counted = mode == "awake" or napmode(mode) == "pseudo"
        prev = C.guest_stats(port) if counted else {}
        t_start = time.monotonic()
        for i in range(nreq):
            gap = C.loguniform(GAP_MIN, GAP_MAX, rng)
            time.sleep(gap)
            row = {"mode": mode, "run": run, "i": i, "gap_s": gap}
            con = bg.console()
            ent, ext = console_sleeps(con)
            row["sleeping_at_send"] = int(ent > ext)
            t0 = time.monotonic()
            if mode == "deep":
                r = bg.qmp("system_wakeup")
                row["wakeup_sent"] = int("error" not in r)
            elif mode == "s2idle-pb":
                r = bg.qmp("system_powerdown")
                row["wakeup_sent"] = int("error" not in r)
                if row["sleeping_at_send"] and row["wakeup_sent"]:
                    row["resume_ms"] = wait_resumed(bg, ext)
            body, _ = C.http_get(port, "/", timeout=TIMEOUT)
            rt = time.monotonic() - t0
            row["t_s"] = t0 - t_start
            row["answered"] = int(body is not None)
            row["rt_ms"] = rt * 1e3 if body is not None else None
            phase = "awake"
            if mode == "awake" and body is not None:
                # The same follow-up request as in pseudo mode, so that
                # both modes see the same load.
                C.guest_stats(port)
            if napmode(mode) == "pseudo" and body is not None:
                st = C.guest_stats(port)
                dn = st.get("naps", 0) - prev.get("naps", 0)
                da = st.get("aborted_naps", 0) - prev.get("aborted_naps", 0)
                row["d_naps"], row["d_aborted"] = dn, da
                row["wake_irq"] = st.get("last_wake_irq")
                if da > 0:
                    phase = "entering"
                elif dn > 0 and st.get("last_wake_irq") in inputs:
                    phase = "asleep"
                    for k in PHASES + ("last_nap_ns", "spurious_wakeups"):
                        row[k] = st.get(k)
                if st:
                    prev = st
            elif napmode(mode) == "pseudo":
                phase = "?"
            elif mode == "deep":
                phase = "asleep" if row["wakeup_sent"] else (
                    "in transition" if row["sleeping_at_send"] else "awake")
            elif mode.startswith("s2idle"):
                phase = "asleep" if row["sleeping_at_send"] else "awake"
            row["phase"] = phase
            rows.append(row)
        # Totals from the console (works in every mode) and the kernel.
        ent, ext = console_sleeps(bg.console())
        meta["sleep_entries"] = ent
        meta["sleep_exits"] = ext
        if mode == "deep":
            meta["wakeups_sent"] = sum(x.get("wakeup_sent") or 0
                                       for x in rows)
        if napmode(mode) == "pseudo":
            st = C.guest_stats(port)
            meta["naps"] = st.get("naps")
            meta["aborted"] = st.get("aborted_naps")
            # A nap's PM messages are debug messages: count from the kernel.
            ent = (meta["naps"] or 0) + (meta["aborted"] or 0)
            meta["sleep_entries"] = ent
        if mode != "awake" and not ent:
            meta["note"] = (meta["note"] + "; " if meta["note"] else "") + \
                "the guest never entered a sleep"
        bg.drain()
        meta["napd_other_irq_wakes"] = 0
        irqs = {}
        for line in bg.seen:
            m = re.search(r"napd: nap \d+ .*wake_irq=(\d+)", line)
            if m:
                irqs[m.group(1)] = irqs.get(m.group(1), 0) + 1
            if m and inputs and int(m.group(1)) not in inputs:
                meta["napd_other_irq_wakes"] += 1
        meta["wake_irqs"] = " ".join("%s:%d" % kv for kv in sorted(
            irqs.items()))
        meta["input_irqs"] = bg.info.get("input_irqs", "")
        meta["handshake_refused"] = sum(
            1 for line in bg.seen if "handshake refused" in line)
    finally:
        bg.stop()
    return rows, meta


def run(ctx):
    quick = ctx.quick
    modes = ("awake", "pseudo") if quick else MODES
    modes = ctx.modes(modes, MODES)
    runs = ctx.runs
    nreq = {"awake": 20, "pseudo": 20, "pseudo-tuned": 20, "deep": 10,
            "s2idle": 4, "s2idle-pb": 6}
    if quick:
        nreq.update({"awake": 10, "pseudo": 10, "pseudo-tuned": 10})
    if ctx.requests:
        nreq = {m: ctx.requests for m in modes}
    rng = random.Random(ctx.seed)
    rows, metas = [], []
    C.say("== 1. wake latency: HTTP GET at random gaps (%g..%g s, "
          "log-uniform), %s, %d run(s), timeout %g s" % (
              GAP_MIN, GAP_MAX, ", ".join("%s %d req" % (m, nreq[m])
                                          for m in modes), runs, TIMEOUT))
    for run in range(runs):
        for mode in ctx.order(modes, run):
            r, meta = run_mode(ctx, mode, run, nreq[mode], rng)
            rows += r
            metas.append(meta)
            ok = [x["rt_ms"] for x in r if x["answered"]]
            s = C.summary(ok)
            C.say("  run %d %-12s sent %2d answered %2d lost %2d  median %s ms"
                  "  p90 %s  max %s%s" % (
                      run, mode, len(r), len(ok), len(r) - len(ok),
                      C.fmt(s["median"]), C.fmt(s["p90"]), C.fmt(s["max"]),
                      ("  (" + meta["note"] + ")") if meta.get("note")
                      else ""))
    C.write_csv(ctx.path("wake_latency.csv"), rows, [
        "mode", "run", "i", "gap_s", "t_s", "answered", "rt_ms", "phase",
        "sleeping_at_send", "wakeup_sent", "resume_ms", "d_naps", "d_aborted",
        "wake_irq"]
        + list(PHASES) + ["last_nap_ns", "spurious_wakeups"])
    C.write_csv(ctx.path("wake_latency_runs.csv"), metas, [
        "mode", "run", "napd", "sleep_entries", "sleep_exits",
        "wakeups_sent", "naps",
        "aborted", "handshake_refused", "napd_other_irq_wakes", "wake_irqs",
        "input_irqs", "note"])

    # Summary per mode: every request of every run pooled, plus the spread
    # of the per-run medians.
    summary = []
    for mode in modes:
        r = [x for x in rows if x["mode"] == mode]
        ok = [x["rt_ms"] for x in r if x["answered"]]
        s = C.summary(ok)
        run_meds = [C.median([x["rt_ms"] for x in r
                              if x["run"] == k and x["answered"]])
                    for k in range(runs)]
        run_meds = [m for m in run_meds if m is not None]
        ms = [m for m in metas if m["mode"] == mode]
        row = {"mode": mode, "sent": len(r), "answered": len(ok),
               "lost": len(r) - len(ok), "median_ms": s["median"],
               "p90_ms": s["p90"], "p99_ms": s["p99"], "max_ms": s["max"],
               "min_ms": s["min"],
               "run_median_min_ms": min(run_meds) if run_meds else None,
               "run_median_max_ms": max(run_meds) if run_meds else None,
               "runs": len(ms),
               "sleeps": sum(m.get("sleep_entries") or 0 for m in ms),
               "wakeups_sent": sum(x.get("wakeup_sent") or 0 for x in r),
               "napper": ", ".join(sorted(set(m["napd"] for m in ms
                                              if m.get("napd")))) or "-",
               "notes": "; ".join(sorted(set(m["note"] for m in ms
                                            if m.get("note"))))}
        # Requests that met a guest that was not simply awake.
        sl = [x for x in r if x["phase"] in ("entering", "asleep",
                                             "in transition")]
        row["n_sleeping"] = len(sl)
        row["lost_sleeping"] = sum(1 for x in sl if not x["answered"])
        row["median_sleeping_ms"] = C.median([x["rt_ms"] for x in sl
                                              if x["answered"]])
        for ph in ("awake", "entering", "asleep", "in transition"):
            pr = [x for x in r if x["phase"] == ph]
            pok = [x["rt_ms"] for x in pr if x["answered"]]
            row["n_" + ph.replace(" ", "_")] = len(pr)
            row["median_" + ph.replace(" ", "_") + "_ms"] = C.median(pok)
            row["lost_" + ph.replace(" ", "_")] = len(pr) - len(pok)
        if napmode(mode) == "pseudo":
            for k in PHASES + ("last_nap_ns",):
                vals = [x[k] / 1e6 for x in r if x.get(k) is not None]
                row[k.replace("_ns", "_ms")] = C.median(vals)
                row[k.replace("_ns", "_ms") + "_p90"] = C.pct(vals, 90)
            row["naps"] = sum(m.get("naps") or 0 for m in ms)
            row["aborted"] = sum(m.get("aborted") or 0 for m in ms)
            row["other_irq_wakes"] = sum(m.get("napd_other_irq_wakes") or 0
                                         for m in ms)
            tally = {}
            for m in ms:
                for kv in (m.get("wake_irqs") or "").split():
                    k, v = kv.split(":")
                    tally[k] = tally.get(k, 0) + int(v)
            row["wake_irqs"] = " ".join("%s:%d" % kv for kv in sorted(
                tally.items()))
            row["input_irqs"] = " ".join(sorted(set(
                m.get("input_irqs") or "" for m in ms)))
            row["handshake_refused"] = sum(m.get("handshake_refused") or 0
                                           for m in ms)
        summary.append(row)
    C.write_csv(ctx.path("wake_latency_summary.csv"), summary)
    C.say("  %-12s %5s %5s %5s %10s %10s %10s %10s  %s" % (
        "mode", "sent", "ans", "lost", "median ms", "p90 ms", "p99 ms",
        "max ms", "per-run medians"))
    for s in summary:
        C.say("  %-12s %5d %5d %5d %10s %10s %10s %10s  %s..%s" % (
            s["mode"], s["sent"], s["answered"], s["lost"],
            C.fmt(s["median_ms"]), C.fmt(s["p90_ms"]), C.fmt(s["p99_ms"]),
            C.fmt(s["max_ms"]), C.fmt(s["run_median_min_ms"]),
            C.fmt(s["run_median_max_ms"])))
    for s in summary:
        if napmode(s["mode"]) == "pseudo":
            C.say("  %s by phase: awake %d (median %s ms), entering %d "
                  "(%s ms), asleep %d (%s ms); kernel wake latency median "
                  "%s ms" % (
                      s["mode"], s["n_awake"], C.fmt(s["median_awake_ms"]),
                      s["n_entering"], C.fmt(s["median_entering_ms"]),
                      s["n_asleep"], C.fmt(s["median_asleep_ms"]),
                      C.fmt(s.get("wake_latency_ms"), 2)))
    return {"name": "wake", "rows": rows, "summary": summary, "metas": metas,
            "modes": modes, "nreq": nreq, "runs": runs}
