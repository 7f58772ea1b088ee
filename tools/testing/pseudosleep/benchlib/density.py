# SPDX-License-Identifier: GPL-2.0
"""4. Request size x load density, after server-power-http-kvs Tables 1-2:
HTTP GETs of 1, 10 and 100 KB files from busybox httpd and memcached gets
of 1, 10 and 999 KB values (memcached -I 2m), sent in periods of 5 s at
density 100/75/50/25 %: the host sends for that share of each period,
then pauses.  The paper used concurrency 100; here 10 connections (HTTP:
a new connection per request, like ab; memcached: one connection per
client thread per burst), scaled down for a 2-core host running the
guest under TCG.  ab's -t takes whole seconds only, so the bursts come
from a Python client with the same pattern.

Guest modes:
  normal   idles normally between bursts (HLT)
  napd     naps with pseudo-sleep between bursts
           (napd --port 80 --port 11211 --idle-ms 50 --wake-dev eth0)
  pollist  eth0's NAPI on the polling list, polled from acpi_idle's POLL
           state (vm-run --cstates); "missing" if not in this kernel

The guests of all modes run side by side (an idle guest costs about 1 %
of a host CPU) and each cell is measured on each mode in turn, the order
rotating from cell to cell, so that the changing load of other jobs on a
shared host hits every mode alike.

Reported per cell: payload throughput over the whole period (KB/s) and
per host CPU-second of QEMU (KB per CPU-s).
"""

import time

from . import common as C
from . import load as L

MODES = ("normal", "napd", "pollist")
APPEND = {"pollist": C.POLLIST_APPEND}
VM_ARGS = {"pollist": C.POLLIST_VM_ARGS}
WORKLOADS = (("http", 1), ("http", 10), ("http", 100),
             ("memcached", 1), ("memcached", 10), ("memcached", 999))
DENSITIES = (100, 75, 50, 25)
CONNS = 10


def guest_script(mode):
    s = r"""
httpd -p 80 -h /www
memcached -u root -d -p 11211 -U 0 -I 2m -m 256 -t 2
for k in 1 10 100; do dd if=/dev/zero of=/www/f${k}k bs=1024 count=$k 2>/dev/null; done
"""
    if mode == "pollist":
        s += C.POLLIST_CHECK
    if mode == "napd":
        s += C.napper("pseudo", (80, 11211), background=True)
    s += "echo READY\nexec sleep 1000000\n"
    return s


def boot(ctx, mode, run, cells):
    """Boot the guest of one mode and load its data; (guest or None,
    status, note)."""
    bg = C.BenchGuest("density-%s-%d" % (mode, run), guest_script(mode),
                      ports=(80, 11211), append=APPEND.get(mode, ""),
                      logdir=ctx.logdir,
                      vm_args=VM_ARGS.get(mode, ()))
    try:
        m = bg.wait(r"^(READY|MISSING.*)$", 240)
        if not m:
            C.broken("density %s run %d: guest did not start" % (mode, run),
                     bg)
            bg.stop()
            return None, "failed: guest did not start", ""
        ctx.note_guest(bg)
        if m.group(1).startswith("MISSING"):
            bg.stop()
            return None, "missing", m.group(1)[len("MISSING "):]
        note = ""
        if mode == "napd":
            m = bg.wait_any(r"^(napd: mode .*|NAPD-FAILED.*)$", 30)
            if not m or not m.group(1).startswith("napd: mode"):
                note = "napd failed (%s), shell nap loop used" % (
                    m.group(1) if m else "no output")
                C.say("  run %d %s: %s" % (run, mode, note))
        hp, mp = bg.port[80], bg.port[11211]
        mc = L.memcached_connect(mp)
        for kb in set(k for w, k in cells if w == "memcached"):
            mc.set("v%dk" % kb, b"z" * (kb * 1024))
        mc.close()
        for w, kb in cells:
            if w == "http":
                L.http_fetch(hp, "/f%dk" % kb)
        return bg, "ok", note
    except Exception as e:  # noqa: BLE001 - reported
        bg.stop()
        return None, "failed: %s" % e, ""


def measure_cell(bg, mode, run, w, kb, d, period, periods):
    """One cell: `periods` periods of `period` s, sending for d % of each."""
    hp, mp = bg.port[80], bg.port[11211]
    st0 = C.guest_stats(hp) if mode == "napd" else {}
    meter = C.CpuMeter(bg)
    t0 = meter.t0
    n = nbytes = errs = 0
    for k in range(periods):
        ps = t0 + k * period
        burst = period * d / 100.0
        if w == "http":
            a, b, e = L.http_load(hp, "/f%dk" % kb, burst, CONNS)
        else:
            a, b, e = L.memcached_load(mp, "v%dk" % kb, burst, CONNS)
        n, nbytes, errs = n + a, nbytes + b, errs + e
        time.sleep(max(0.0, ps + period - time.monotonic()))
    c = meter.stop()
    row = {"mode": mode, "run": run, "workload": w, "size_kb": kb,
           "density_pct": d, "period_s": period, "periods": periods,
           "wall_s": c["wall_s"], "requests": n, "errors": errs,
           "kbytes": nbytes / 1024.0,
           "kb_per_s": nbytes / 1024.0 / c["wall_s"]}
    for k in ("cpu_s", "cpu_pct"):
        if k in c:
            row[k] = c[k]
    if "other_pct" in c:
        row["other_cpu_pct"] = c["other_pct"]
    if c.get("cpu_s"):
        row["kb_per_cpu_s"] = nbytes / 1024.0 / c["cpu_s"]
    if mode == "napd":
        st1 = C.guest_stats(hp)
        if st0 and st1:
            row["naps"] = st1.get("naps", 0) - st0.get("naps", 0)
            row["nap_s"] = (st1.get("total_nap_ns", 0) -
                            st0.get("total_nap_ns", 0)) / 1e9
    C.say("  run %d %-7s %-9s %4d KB %3d%%  %8s KB/s  CPU %5s%%  "
          "%8s KB/CPU-s  %d req, %d err, other load %s%%%s" % (
              run, mode, w, kb, d, C.fmt(row["kb_per_s"]),
              C.fmt(row.get("cpu_pct")), C.fmt(row.get("kb_per_cpu_s")),
              n, errs, C.fmt(row.get("other_cpu_pct"), 0),
              ("  naps %d (%.1f s)" % (row["naps"], row["nap_s"]))
              if "naps" in row else ""))
    return row


def run_interleaved(ctx, modes, run, cells, period, periods, status):
    """All modes' guests booted side by side (idle guests cost about 1 %
    of a host CPU), then each cell measured on each mode in turn, the order
    rotating from cell to cell: a change of the host's other load then hits
    every mode alike."""
    guests, rows = {}, []
    try:
        for mode in modes:
            if status.get(mode, ("ok",))[0] == "missing":
                continue
            bg, st, note = boot(ctx, mode, run, cells)
            if mode not in status or st != "ok":
                status[mode] = (st, note)
            if st == "missing" and mode == "pollist":
                ctx.pollist = (False, note)
            if st != "ok":
                C.say("  run %d %-7s %s (%s)" % (run, mode, st, note))
            if bg:
                guests[mode] = bg
        order = [m for m in modes if m in guests]
        time.sleep(1.0)
        k = run
        for (w, kb) in cells:
            for d in cells[(w, kb)]:
                for mode in order[k % len(order):] + order[:k % len(order)] \
                        if order else []:
                    time.sleep(0.5)
                    try:
                        rows.append(measure_cell(guests[mode], mode, run, w,
                                                 kb, d, period, periods))
                    except Exception as e:  # noqa: BLE001 - reported
                        C.say("  run %d %s %s %d KB %d%%: failed: %s" % (
                            run, mode, w, kb, d, e))
                        status[mode] = (status.get(mode, ("ok", ""))[0],
                                        "a cell failed: %s" % e)
                k += 1
    finally:
        for bg in guests.values():
            bg.stop()
    return rows


def run(ctx):
    if ctx.quick:
        modes = ("normal", "napd")
        cells = {("http", 10): (100, 25), ("memcached", 10): (100, 25)}
        period, periods = 2.0, 1
    else:
        modes = MODES
        cells = {w: DENSITIES for w in WORKLOADS}
        period, periods = 5.0, 1
    modes = ctx.modes(modes, MODES)
    C.say("== 4. size x density: %s at %s %%, %g s period(s) x %d, %d "
          "connections; modes %s side by side, %d run(s)" % (
              ", ".join("%s %d KB" % w for w in cells),
              "/".join(str(d) for d in cells[next(iter(cells))]), period,
              periods, CONNS, ", ".join(modes), ctx.runs))
    rows, status = [], {}
    for run in range(ctx.runs):
        rows += run_interleaved(ctx, modes, run, cells, period, periods,
                                status)
    C.write_csv(ctx.path("density.csv"), rows, [
        "mode", "run", "workload", "size_kb", "density_pct", "period_s",
        "periods", "wall_s", "requests", "errors", "kbytes", "kb_per_s",
        "cpu_s", "cpu_pct", "kb_per_cpu_s", "naps", "nap_s",
        "other_cpu_pct"])
    summary = []
    for mode in modes:
        for (w, kb) in cells:
            for d in cells[(w, kb)]:
                r = [x for x in rows if x["mode"] == mode and
                     x["workload"] == w and x["size_kb"] == kb and
                     x["density_pct"] == d]
                tp = C.summary([x["kb_per_s"] for x in r])
                eff = C.summary([x.get("kb_per_cpu_s") for x in r])
                cpu = C.summary([x.get("cpu_pct") for x in r])
                summary.append({
                    "mode": mode, "status": status.get(mode, ("?",))[0],
                    "workload": w, "size_kb": kb, "density_pct": d,
                    "runs": len(r), "kb_per_s": tp["median"],
                    "kb_per_s_min": tp["min"], "kb_per_s_max": tp["max"],
                    "cpu_pct": cpu["median"],
                    "kb_per_cpu_s": eff["median"],
                    "kb_per_cpu_s_min": eff["min"],
                    "kb_per_cpu_s_max": eff["max"],
                    "naps": sum(x.get("naps") or 0 for x in r),
                    "other_cpu_pct": C.median([x.get("other_cpu_pct")
                                               for x in r])})
    C.write_csv(ctx.path("density_summary.csv"), summary)
    return {"name": "density", "rows": rows, "summary": summary,
            "modes": modes, "cells": cells, "period": period,
            "periods": periods, "runs": ctx.runs, "status": status}
