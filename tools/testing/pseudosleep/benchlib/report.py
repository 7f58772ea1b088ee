# SPDX-License-Identifier: GPL-2.0
"""results/REPORT.md (tables, conditions, caveats) and
results/README-table.md (the headline table that results/README.md
copies)."""

import os

from . import common as C
from . import targets

F = C.fmt


def _rng(s, k, nd=1):
    """'median [min..max]' from summary keys k, k_min, k_max."""
    if s.get(k) is None:
        return "-"
    lo, hi = s.get(k + "_min"), s.get(k + "_max")
    if lo is None or hi is None or lo == hi:
        return F(s[k], nd)
    return "%s [%s..%s]" % (F(s[k], nd), F(lo, nd), F(hi, nd))


def _blocks(out):
    """Join blocks (paragraphs, lists, tables) with blank lines; list
    items given one per element are kept together."""
    text = []
    for b in out:
        b = b.strip("\n")
        if not b:
            continue
        if text and b.startswith("- ") and text[-1].startswith("- "):
            text[-1] += "\n" + b
        else:
            text.append(b)
    return "\n\n".join(text) + "\n"


def _fig(figs, name):
    for f in figs:
        if os.path.basename(f) == name:
            return "![%s](%s)\n" % (name, name)
    return ""


def _ending(out, figs, pngs, data):
    """A section's end: its figures, then where its data is; the section."""
    out.append("\n" + "".join(_fig(figs, png) for png in pngs))
    out.append("\nData: %s.\n" % data)
    return _blocks(out)


def conditions_md(ctx, results):
    c, g = ctx.cond, ctx.guest
    rows = [
        ("host", "%s CPUs, %s, Linux %s" % (c.get("nproc"), c.get("cpu", "?"),
                                            c.get("host_kernel", "?"))),
        ("host load average (1/5/15 min)", "%s at start, %s at the end "
         "(other jobs on the host add noise)" % (
             c.get("loadavg_start", "?"), c.get("loadavg_end", "?"))),
        ("QEMU", "%s, accelerator %s (%s)" % (
            c.get("qemu", "?"), g.get("accel", "?"),
            g.get("accel_from", "?"))),
        ("guest", "q35, 2 vCPUs, 512 MB, virtio-net behind a PCIe root port, "
                  "QEMU user networking (restrict=on), ports forwarded on "
                  "127.0.0.1"),
        ("guest kernel", "%s (uname -r in the guest), from %s. %s" % (
            g.get("uname", "?"), c.get("build_dir"),
            c.get("kernel_kind", ""))),
        ("guest command line", "`%s`" % g.get("cmdline", "?")),
        ("guest mem_sleep", g.get("mem_sleep", "?")),
        ("git commit", "%s%s" % (c.get("commit", "?"),
                                 " (with uncommitted changes)"
                                 if c.get("dirty") else "")),
        ("date", c.get("date")),
        ("runs", "%d boot(s) per mode%s; seed %d" % (
            ctx.runs, " (--quick subset)" if ctx.quick else "", ctx.seed)),
        ("experiments", ", ".join(
            "%s (%.0f s%s)" % (r["name"], r.get("seconds", 0),
                               ", from the run of %s" % r["earlier"]
                               if r.get("earlier") else "")
            for r in results)),
        ("total time", "%.0f s" % c.get("seconds", 0)),
        ("guests booted twice", "not recorded" if "rebooted" not in c
         else "; ".join(c["rebooted"]) or
         "none (each guest reached its init on its first boot)"),
    ]
    return C.md_table(["", ""], rows)


WAKE_MODES = {
    "awake": "- **awake**: no naps.",
    "pseudo": "- **pseudo**: `napd --port 80 --idle-ms 50 --wake-dev eth0 "
              "--log` (pseudo-sleep, NIC kept awake, its IRQs armed).",
    "pseudo-tuned": "- **pseudo-tuned**: pseudo with the PM core's settings "
                    "for frequent naps, set in the guest before napd starts "
                    "(Documentation/pseudosleep.rst, \"Tuning for frequent "
                    "naps\"): `/sys/power/pm_async=0`, "
                    "`/sys/power/sync_on_suspend=0` and `power/control=auto` "
                    "on the PCI functions without a driver.",
    "s2idle": "- **s2idle**: napd `--mode s2idle`. virtio-net cannot wake "
              "it: its freeze callback resets the device, and it has no "
              "wakeup capability. Nothing but the ACPI power button wakes "
              "this guest from s2idle (the RTC alarm does not either under "
              "QEMU).",
    "s2idle-pb": "- **s2idle-pb**: as s2idle, with an idealized wake signal: "
                 "the host presses the ACPI power button (QMP "
                 "`system_powerdown`) before each request and, if the "
                 "guest was asleep, sends the request once the console "
                 "shows `PM: suspend exit`; the response time counts from "
                 "the press. (Sent at once, every such request was lost: "
                 "it reached the guest before virtio-net had resumed, and "
                 "napd slept again, about 75 ms after the resume, before "
                 "TCP resent the SYN a second later.)",
    "deep": "- **deep**: napd `--mode deep` (ACPI S3) with idealized "
            "Wake-on-LAN: QMP `system_wakeup` right before each request; "
            "the RTC is not a wakeup source.",
}

IDLE_MODES = {
    "pseudo": "- **pseudo**: one nap, ended after the window by an HTTP "
              "request.",
    "s2idle": "- **s2idle**: ended by the ACPI power button (QMP "
              "`system_powerdown`); the RTC alarm does not wake s2idle in "
              "this QEMU guest.",
    "deep": "- **deep**: ACPI S3, ended by QMP `system_wakeup`.",
    "poll": "- **poll**: booted with `idle=poll`.",
    "pollist": "- **pollist**: the polling list, booted with `%s` and "
               "acpi_idle (`vm-run --cstates`), eth0's NAPI polled from "
               "its POLL state (`napi_idle_poll=1`); "
               "'missing' when `/sys/devices/system/cpu/cpuidle/"
               "current_driver` is not `%s`." % (C.POLLIST_APPEND,
                                                 C.POLLIST_DRIVER),
}


def wake_md(res, figs):
    s_by = {s["mode"]: s for s in res["summary"]}
    out = ["## 1. Wake latency\n",
           "Single HTTP GETs from the host to busybox httpd in the guest, "
           "each after a random gap (log-uniform %g..%g s after the previous "
           "answer) so that they land while the guest is awake, entering a "
           "sleep, or asleep. Timeout %g s per request; a request without an "
           "answer by then is lost. Response time is measured by the host "
           "from just before the request (and, for the idealized wake modes, "
           "the wake signal) to the end of the answer. Requests per run: %s."
           "\n" % (0.01, 2.0, 10.0, ", ".join(
               "%s %d" % (m, res["nreq"][m]) for m in res["modes"])),
           ] + [WAKE_MODES[m] for m in res["modes"] if m in WAKE_MODES] + [
           ""]
    rows = []
    for m in res["modes"]:
        s = s_by[m]
        rows.append((m, s["sent"], s["answered"], s["lost"],
                     F(s["median_ms"]), F(s["p90_ms"]), F(s["p99_ms"]),
                     F(s["max_ms"]),
                     "%s..%s" % (F(s["run_median_min_ms"]),
                                 F(s["run_median_max_ms"]))
                     if s["run_median_min_ms"] is not None else "-",
                     s["sleeps"] if m != "awake" else "-",
                     s.get("napper", "-")))
    out.append(C.md_table(["mode", "sent", "answered", "lost", "median ms",
                           "p90 ms", "p99 ms", "max ms", "per-run medians ms",
                           "sleeps entered", "napping daemon"], rows))
    out.append("\nPercentiles pool every request of every run; 'per-run "
               "medians' is the spread of the medians of the single runs. "
               "'sleeps entered' counts `PM: suspend entry` on the guest "
               "console; for pseudo, whose per-nap messages are debug "
               "messages, the kernel's naps and aborted naps.\n")
    pms = [m for m in res["modes"] if m.split("-")[0] == "pseudo"]
    if pms:
        out.append("**The pseudo modes, by the phase the request met** "
                   "(from the guest's /sys/power/pseudosleep counters read "
                   "after each answer: a nap aborted since the previous "
                   "request = entering; a nap ended by a NIC receive IRQ = "
                   "asleep):")
        out.append(C.md_table(["mode", "phase", "requests", "lost",
                               "median ms"], [
            (m, ph, s_by[m]["n_" + ph], s_by[m]["lost_" + ph],
             F(s_by[m]["median_" + ph + "_ms"]))
            for m in pms for ph in ("awake", "entering", "asleep")]))
        ks = ("entry_sync_ns", "entry_freeze_ns", "entry_suspend_devices_ns",
              "entry_cpu_halt_ns", "exit_cpu_wake_ns",
              "exit_resume_devices_ns", "exit_thaw_ns", "wake_latency_ns")
        out.append("In-kernel phases of the naps that a request ended, on "
                   "the wall clock (medians [p90], ms):")
        out.append(C.md_table(["mode"] + [k[:-3] for k in ks], [
            [m] + ["%s [%s]" % (F(s_by[m].get(k[:-3] + "_ms"), 2),
                                F(s_by[m].get(k[:-3] + "_ms_p90"), 2))
                   for k in ks] for m in pms]))
        for m in pms:
            p = s_by[m]
            out.append("\n%s: napd took %s naps, %s aborted in the kernel, "
                       "%s refused by the wakeup_count handshake. IRQs that "
                       "ended its naps (IRQ:naps): %s; the NIC's receive IRQ "
                       "is %s. napd arms every MSI vector of the NIC; naps "
                       "ended by its transmit or config vector (for example "
                       "by the transmit completion of the previous answer) "
                       "rather than by a request: %s.\n" % (
                           m, p.get("naps"), p.get("aborted"),
                           p.get("handshake_refused"),
                           p.get("wake_irqs") or "-",
                           p.get("input_irqs") or "?",
                           p.get("other_irq_wakes")))
    d = s_by.get("deep")
    if d:
        out.append("\n**deep**: %d S3 sleeps entered for %d requests; the "
                   "host's `system_wakeup` found the guest suspended for %d "
                   "of the requests. Every other S3 sleep ended without a "
                   "host wake "
                   "signal: on this QEMU, after the first resume each S3 "
                   "entry is woken again at once (Linux counts these wakes on "
                   "the ACPI power button, LNXPWRBN:00), so napd cycles "
                   "through S3 while idle and most requests meet a guest in "
                   "transition whose NIC is reset.\n" % (
                       d["sleeps"], d["sent"], d["wakeups_sent"]))
    if any(m.startswith("s2idle") or m == "deep" for m in res["modes"]):
        out.append("\nWhy sleeping modes lose requests: the host's connect() "
                   "is accepted at once by QEMU's user-mode TCP stack, which "
                   "then sends the SYN to the guest. A SYN that reaches a "
                   "suspended (reset) virtio-net is dropped, so the request "
                   "waits for a SYN retransmission (1 s, 2 s, 4 s, ...). "
                   "After a wake that carried no packet, napd sees 50 ms of "
                   "quiet and sleeps again before the retransmission "
                   "arrives: the request is lost (10 s timeout). This is the "
                   "failure the pseudo-sleep paper reports for S3 + WoL.\n")
    return _ending(out, figs, ["wake_latency_cdf.png"],
                   "`wake_latency.csv` (one row per request), "
                   "`wake_latency_runs.csv` (per boot), "
                   "`wake_latency_summary.csv`")


def idle_md(res, figs):
    out = ["## 2. Idle cost\n",
           "Over a %g s idle window: host CPU time of the QEMU process "
           "(utime+stime of the whole thread group from /proc/PID/stat, i.e. "
           "the sum over /proc/PID/task/*/stat plus exited threads, at "
           "%d ticks/s) per wall second, and guest interrupts per second (the "
           "sum of every per-CPU count of /proc/interrupts, LOC/RES/CAL "
           "included, read before the window and after the wake, divided by "
           "the guest's CLOCK_BOOTTIME interval). The window runs from the "
           "guest's 'before' line to its 'after' line, so sleep modes include "
           "entry and exit; 'steady' is host CPU from %g s into the window to "
           "0.2 s before its end, when the sleep modes are fully asleep "
           "(10 ms tick resolution).\n" % (
               res["window"], C.CLK_TCK, min(1.0, 0.3 * res["window"])),
           "- **awake**: the default idle loop, HLT (cpuidle driver: %s)." % (
               ", ".join(sorted(set(str(r.get("driver")) for r in res["rows"]
                                    if r["mode"] == "awake"
                                    and r.get("driver")))) or "?"),
           ] + [IDLE_MODES[m] for m in res["modes"] if m in IDLE_MODES]
    rows = []
    for s in res["summary"]:
        span = C.median([r.get("host_s") for r in res["rows"]
                         if r["mode"] == s["mode"] and r["status"] == "ok"])
        rows.append((s["mode"], s["status"], s["runs"], F(span, 2),
                     ("%s [%s..%s]" % (F(s["cpu_pct_median"]),
                                       F(s["cpu_pct_min"]),
                                       F(s["cpu_pct_max"]))
                      if s["runs"] else "-"),
                     ("%s [%s..%s]" % (F(s["cpu_steady_pct_median"]),
                                       F(s["cpu_steady_pct_min"]),
                                       F(s["cpu_steady_pct_max"]))
                      if s["runs"] else "-"),
                     ("%s [%s..%s]" % (F(s["irq_per_s_median"]),
                                       F(s["irq_per_s_min"]),
                                       F(s["irq_per_s_max"]))
                      if s["runs"] else "-"),
                     F(s.get("other_cpu_pct"), 0),
                     s.get("note") or ""))
    out.append(C.md_table(["mode", "status", "runs", "window s",
                           "host CPU % of one CPU, median [min..max]",
                           "steady host CPU %", "guest IRQ/s",
                           "other host load %", "note"], rows))
    out.append("'window s' is the measured window: the idle time plus, for "
               "the sleep modes, entering the sleep and waking up from it. "
               "'other host load' is what the rest of the host used during "
               "the window besides QEMU and the benchmark itself (busy CPU "
               "time from /proc/stat, 200 % = both host CPUs): other jobs "
               "on a shared machine, the main source of noise here.")
    return _ending(out, figs, ["idle_cost.png"],
                   "`idle_cost.csv` (per boot), `idle_cost_summary.csv`")


def polling_md(res, figs):
    p = res["params"]
    out = ["## 3. Polling idle driver and interrupt baselines\n",
           "Latency: `ab -n %d -c 1` on a small page (busybox httpd forks per "
           "request), %d sequential memcached gets of a 100-byte value on one "
           "connection (Python client). Throughput: `iperf3 -c 127.0.0.1 -t "
           "%d` (host to guest) and memcached gets of a 1 KB value on 4 "
           "connections for %d s. Host CPU is QEMU's. ping: not measured, "
           "QEMU user networking does not forward ICMP from the host to the "
           "guest.\n" % (p["ab_n"], p["mc_n"], p["iperf_s"], p["mc_s"]),
           "- **hlt**: default idle, HLT (cpuidle driver: %s). "
           "**poll**: `idle=poll`. "
           "**acpi**: acpi_idle with POLL, C1 and C2 (`vm-run --cstates`), "
           "governor menu. **pollist**: acpi_idle with eth0's NAPI on the "
           "polling list, polled from its POLL state (`%s`, "
           "`napi_idle_poll=1`). **napi**: HLT with "
           "`napi_defer_hard_irqs=2`, `gro_flush_timeout=20000` on eth0. "
           "**coal**: HLT with `ethtool -C eth0 rx-usecs 50 rx-frames 16` "
           "(virtio-net needs VIRTIO_NET_F_NOTF_COAL, which QEMU 7.2 does "
           "not offer).\n" % (", ".join(sorted(set(
               str(r.get("driver")) for r in res["rows"]
               if r["mode"] == "hlt" and r.get("driver")))) or "?",
               C.POLLIST_APPEND)]
    head = ["mode", "status (runs)", "HTTP mean ms", "HTTP p90 / p99 ms",
            "host CPU ms per HTTP request", "memcached get p50 ms",
            "memcached p99 ms", "list hits per HTTP request / get",
            "iperf3 Mbit/s", "memcached 1 KB KB/s", "other host load %"]
    rows = []
    for s in res["summary"]:
        if s["status"] != "ok":
            rows.append((s["mode"], s["status"], s["note"] or "") +
                        ("",) * (len(head) - 3))
            continue
        hits = "-"
        if s.get("http_hits_per_req") is not None:
            hits = "%s / %s" % (F(s["http_hits_per_req"], 2),
                                F(s.get("mc_hits_per_get"), 2))
        rows.append((s["mode"], "ok (%d)" % s["runs"],
                     _rng(s, "http_mean_ms"),
                     "%s / %s" % (F(s["http_p90_ms"], 0),
                                  F(s["http_p99_ms"], 0)),
                     _rng(s, "http_cpu_ms_per_req"),
                     _rng(s, "mc_p50_ms", 2),
                     F(s["mc_p99_ms"], 2), hits,
                     _rng(s, "iperf_mbps"),
                     _rng(s, "mc_tput_kbs", 0),
                     F(s.get("other_cpu_pct"), 0)))
    out.append(C.md_table(head, rows))
    out.append("\nList hits: entries of the polling list found with work "
               "(`/sys/kernel/debug/pollist/stats`), all CPUs, per request "
               "(a request is several packets; a hit is one NAPI poll that "
               "found one or more). ab reports its percentiles in whole "
               "milliseconds. "
               "Medians over runs, [min..max] across runs. Under TCG a "
               "polling vCPU is a host thread that spins: on this 2-core "
               "host it competes with QEMU's I/O thread and with the "
               "host-side client (ab, iperf3, the memcached client), so "
               "polling can cost latency here where it would not on a "
               "machine with spare cores.\n")
    return _ending(out, figs, ["polling.png"],
                   "`polling.csv` (per boot, with host CPU % and "
                   "guest IRQs per request), `polling_summary.csv`")


def density_md(res, figs):
    out = ["## 4. Request size x load density\n",
           "After server-power-http-kvs Tables 1-2: %s, each in %d period(s) "
           "of %g s at each density: the host sends for that share of the "
           "period, then pauses. %d connections (the paper: 100; scaled down "
           "for 2 host cores running the guest under TCG). HTTP: a new "
           "connection per request like ab, from a Python client because "
           "ab's `-t` takes whole seconds only. memcached started with "
           "`-I 2m`. Throughput is payload KB over the whole period; "
           "efficiency is payload KB per host CPU-second of QEMU.\n" % (
               ", ".join("%s %d KB" % w for w in res["cells"]),
               res["periods"], res["period"], 10),
           "The guests of all modes run side by side (an idle guest costs "
           "about 1 % of a host CPU); each cell is measured on each mode in "
           "turn, the order rotating from cell to cell, so that the changing "
           "load of other jobs on the host hits every mode alike.",
           "- **normal**: the guest idles normally between bursts. "
           "**napd**: naps with pseudo-sleep between bursts (`napd --port 80 "
           "--port 11211 --idle-ms 50 --wake-dev eth0`). **pollist**: eth0's "
           "NAPI on the polling list, polled from acpi_idle's POLL state.\n"]
    st = res.get("status", {})
    for m in res["modes"]:
        s0 = st.get(m, ("?", ""))
        if s0[0] != "ok" or s0[1]:
            out.append("- %s: %s%s\n" % (m, s0[0], (", " + s0[1]) if s0[1]
                                          else ""))
    modes = [m for m in res["modes"] if st.get(m, ("?",))[0] == "ok"]
    if modes:
        head = ["workload", "density"]
        for m in modes:
            head += ["%s KB/s" % m, "%s KB/CPU-s" % m]
        if "napd" in modes:
            head.append("napd naps")
        rows = []
        for (w, kb) in res["cells"]:
            for d in res["cells"][(w, kb)]:
                r = ["%s %d KB" % (w, kb), "%d %%" % d]
                naps = "-"
                for m in modes:
                    s = [x for x in res["summary"] if x["mode"] == m and
                         x["workload"] == w and x["size_kb"] == kb and
                         x["density_pct"] == d]
                    s = s[0] if s else {}
                    r += [_rng(s, "kb_per_s", 0), _rng(s, "kb_per_cpu_s", 0)]
                    if m == "napd":
                        naps = s.get("naps", "-")
                if "napd" in modes:
                    r.append(naps)
                rows.append(r)
        out.append(C.md_table(head, rows))
        oth = [x.get("other_cpu_pct") for x in res["summary"]
               if x.get("other_cpu_pct") is not None]
        per_mode = ", ".join("%s %s %%" % (m, F(C.median(
            [x.get("other_cpu_pct") for x in res["rows"]
             if x["mode"] == m]), 0)) for m in modes)
        out.append("\nMedian [min..max] over runs. 'napd naps': naps taken "
                   "during the cell, all runs. Median other host load during "
                   "each mode's cells: " + per_mode + ". Other jobs on the host used "
                   "%s..%s %% CPU (median per cell, 200 %% = both CPUs) "
                   "besides QEMU and the load generator: the cells are "
                   "noisy, read trends across densities and modes, not "
                   "single cells.\n" % (F(min(oth), 0) if oth else "?",
                                         F(max(oth), 0) if oth else "?"))
    return _ending(out, figs, ["density.png", "density_throughput.png"],
                   "`density.csv` (per cell and run), `density_summary.csv`")


def readme_table(ctx, results):
    by = {r["name"]: r for r in results}
    wake = {s["mode"]: s for s in by.get("wake", {}).get("summary", [])}
    idle = {s["mode"]: s for s in by.get("idle", {}).get("summary", [])}
    order = ["awake", "pseudo", "pseudo-tuned", "s2idle", "s2idle-pb",
             "deep", "poll", "pollist"]
    label = {"awake": "awake (HLT idle)", "pseudo": "pseudo-sleep (napd)",
             "pseudo-tuned": "pseudo-sleep (napd), PM settings for frequent "
                             "naps",
             "s2idle": "s2idle (NIC wake)",
             "s2idle-pb": "s2idle (ideal wake: power button)",
             "deep": "S3 (ideal WoL: QMP system_wakeup)",
             "poll": "idle=poll", "pollist": "polling list (acpi_idle)"}
    idle_of = {"s2idle-pb": None, "s2idle": "s2idle", "pseudo-tuned": None}
    rows = []
    for m in order:
        w = wake.get(m)
        i = idle.get(idle_of.get(m, m)) if idle_of.get(m, m) else None
        if not w and not i:
            continue
        if w:
            wl = "%s ms (p90 %s)" % (F(w["median_ms"]), F(w["p90_ms"])) \
                if w["answered"] else "-"
            lost = "%d/%d" % (w["lost"], w["sent"])
            if m == "awake":
                ws = "-"
            elif w.get("n_sleeping") and w.get("median_sleeping_ms") is None:
                ws = "none answered, %d/%d lost" % (w["lost_sleeping"],
                                                   w["n_sleeping"])
            elif w.get("n_sleeping"):
                ws = "%s ms, %d/%d lost" % (
                    F(w.get("median_sleeping_ms")), w["lost_sleeping"],
                    w["n_sleeping"])
            else:
                ws = "no request met it asleep"
        else:
            wl, lost, ws = "not measured", "-", "-"
        if i and i["status"] == "ok":
            ic = "%s %% (%s %%)" % (F(i["cpu_pct_median"]),
                                  F(i["cpu_steady_pct_median"]))
            ir = F(i["irq_per_s_median"])
        elif i:
            ic, ir = i["status"].split(":")[0], "-"
        else:
            ic, ir = "-", "-"
        rows.append((label[m], wl, ws, lost, ic, ir))
    g = ctx.guest
    text = ("<!-- generated by tools/testing/pseudosleep/bench; do not edit "
            "-->\n"
            "Measured by `make bench%s` on %s: %s CPUs (%s), QEMU %s, guest "
            "kernel %s, commit %s, %d run(s) per mode. Medians; timings "
            "under TCG are slow and noisy, compare the rows with each "
            "other, not with hardware. Details: results/REPORT.md.\n\n" % (
                " QUICK=1" if ctx.quick else "", ctx.cond.get("date", "?"),
                ctx.cond.get("nproc"),
                ctx.cond.get("cpu", "?"), g.get("accel", "?"),
                g.get("uname", "?"), ctx.cond.get("commit", "?"), ctx.runs))
    idle_w = by.get("idle", {}).get("window")
    text += C.md_table(["mode", "HTTP response time, median (p90)",
                        "median when the request met a sleeping guest",
                        "lost / sent",
                        "idle host CPU%s (asleep part)" % (
                            ", %g s window" % idle_w if idle_w else ""),
                        "idle guest IRQ/s"], rows)
    text += ("\nA request is lost when it has no answer after 10 s. Host "
             "CPU is QEMU's, in %% of one host CPU; the window includes "
             "entering and leaving the sleep state, the part in parentheses "
             "only the time asleep. %s\n" % ctx.cond.get("kernel_kind", ""))
    if "wake" in by or "breakdown" in by:
        text += ("\nTargets of issue 12 (entry and exit on the instruction "
                 "clock, the HTTP rows on the wall clock; what is left, "
                 "counter by counter: results/REPORT.md):\n\n" +
                 targets.table(results))
    return text


def write(ctx, results, figs, failed):
    by = {r["name"]: r for r in results}
    md = ["# pseudosleep benchmark results\n",
          "Generated by `tools/testing/pseudosleep/bench%s` (`make bench%s`)."
          " Timings come from a guest under QEMU %s on a shared 2-core host: "
          "they are slow and noisy. Compare modes measured side by side in "
          "this run; figures are medians with their spread, nothing asserts "
          "on them.\n" % (" --quick" if ctx.quick else "",
                          " QUICK=1" if ctx.quick else "",
                          ctx.guest.get("accel", "?")),
          "## Conditions\n", conditions_md(ctx, results),
          "\nEvery guest boots with `%s` in addition to vm-run's command line:"
          " under TCG the clocksource watchdog marks the TSC unstable, Linux "
          "falls back to acpi_pm, and that clock stands still after an S3 "
          "resume in QEMU (no timer fires again: `sleep` and napd hang after "
          "the first deep sleep). All modes use it, so they stay comparable."
          "\n" % C.BASE_APPEND]
    if failed:
        md.append("\n**Experiments that failed (harness error)**: %s\n"
                  % ", ".join(failed))
    md.append(targets.report_md(results))
    if "wake" in by:
        md.append(wake_md(by["wake"], figs))
    if "idle" in by:
        md.append(idle_md(by["idle"], figs))
    if "polling" in by:
        md.append(polling_md(by["polling"], figs))
    if "density" in by:
        md.append(density_md(by["density"], figs))
    if "breakdown" in by:
        from . import breakdown
        md.append(breakdown.report_md(by["breakdown"], figs, _fig))
    if "lannoise" in by:
        from . import lannoise
        md.append(lannoise.report_md(by["lannoise"]))
    if "hotpath" in by:
        from . import hotpath
        md.append(hotpath.report_md(by["hotpath"], figs, _fig))
    if "debian" in by:
        from . import debian
        md.append(debian.report_md(by["debian"]))
    if "keepalive" in by:
        from . import keepalive
        md.append(keepalive.report_md(by["keepalive"]))
    # Missing and unsupported, in one place.
    miss = []
    if ctx.pollist is not None and not ctx.pollist[0]:
        miss.append("polling list: missing in this kernel (%s)"
                    % ctx.pollist[1])
    for s in by.get("polling", {}).get("summary", []):
        if s["status"] == "not supported":
            miss.append("%s: %s" % (s["mode"], s["note"]))
    if "lannoise" not in by or by["lannoise"].get("skipped"):
        miss.append("ping latency: not measurable with QEMU user "
                    "networking (no ICMP forwarding); the bridged network "
                    "of experiment 6 needs root and /dev/net/tun")
    md.append("## Missing or unsupported")
    md.append("\n".join("- %s" % m for m in miss))
    md.append("## Files")
    files = sorted(f for f in os.listdir(ctx.out)
                   if f.endswith((".csv", ".png", ".md")))
    md.append("\n".join("- `%s`" % f for f in files) + "\n"
              "- `results.json`: every number above; `bench --report-only "
              "--out DIR` redraws the figures and rewrites the reports\n"
              "- `plots/`: gnuplot scripts and their data "
              "(`gnuplot plots/NAME.gp` redraws NAME.png)\n"
              "- `logs/`: guest output and console log of every boot")
    text = _blocks(md)
    with open(ctx.path("REPORT.md"), "w") as f:
        f.write(text)
    with open(ctx.path("README-table.md"), "w") as f:
        f.write(readme_table(ctx, results))
    C.say("report: %s, %s" % (ctx.path("REPORT.md"),
                               ctx.path("README-table.md")))
