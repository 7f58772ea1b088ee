# SPDX-License-Identifier: GPL-2.0
"""The targets of issue 12, from one run, side by side with awake: entry
and exit of a nap, the HTTP response of a request that met a nap over an
awake one, and lost requests; then what is left of entry and exit,
counter by counter, and why.

Entry and exit are judged on the instruction clock (experiment 5's
untraced naps under -icount), which host load cannot move; the wall-clock
figures of the naps the requests ended (experiment 1) stand beside them.
Each column pairs a wake mode with the nap-costs.sh column of the same
settings: pseudo with "as booted", pseudo-tuned with "tunedrt".
"""

from . import common as C
from . import breakdown as B

F = C.fmt
ENTRY_MS = 1.5
EXIT_MS = 1.2
HTTP_PCT = 20.0
# (wake mode, nap-costs.sh mode, label)
SETTINGS = (("pseudo", "default", "as booted"),
            ("pseudo-tuned", "tunedrt", "with the settings for frequent "
             "naps"))
PARTS = (("entry", B.COST_ENTRY, ENTRY_MS,
          "entry: sync + freeze + suspend devices + halt"),
         ("exit", B.COST_EXIT, EXIT_MS,
          "exit: armed IRQ to the server runnable (CPU wake + resume "
          "devices + thaw)"))

# What each counter is, and why it stays what it is with the settings.
WHY = {
    "entry_sync": "`ksys_sync()` of every filesystem (and, here, of the "
                  "harness's 9p share). `sync_on_suspend=0` skips it; the "
                  "default keeps the PM core's protection for a sleep that "
                  "may not come back.",
    "entry_freeze": "The PM notifiers and the freezer: each user task and "
                    "freezable kernel thread is woken and enters the "
                    "refrigerator. The freezer waits for them rather than "
                    "sleeping (hook patch 0018); what is left grows with "
                    "the tasks, and a nap must freeze them (a frozen task "
                    "cannot touch a suspended device).",
    "entry_suspend_devices": "Choosing the devices to keep (a walk of every "
                             "device, its links and the owners of the armed "
                             "IRQs), then prepare, suspend, suspend_late "
                             "and suspend_noirq of the devices with PM "
                             "work, and `suspend_device_irqs()`. As booted "
                             "each of them costs an async work item per "
                             "phase and the PCI functions without a driver "
                             "save their config space; the settings remove "
                             "both. What is left is the callbacks of the "
                             "devices that have PM work and the walks of "
                             "the device lists.",
    "entry_cpu_halt": "IPIs that send the other CPUs to the halt loop, and "
                      "the wait until every CPU is in it.",
    "exit_cpu_wake": "The CPU that took the armed IRQ leaves HLT, wakes the "
                     "others and runs the suspending task.",
    "exit_resume_devices": "resume_noirq, resume_early, resume and complete "
                           "of the devices that took part, "
                           "`resume_device_irqs()`, and the device lists "
                           "put back together. As booted, async work items "
                           "and the config space written back to the PCI "
                           "functions without a driver; the settings remove "
                           "both.",
    "exit_thaw": "Waking every frozen task and the PM_POST_SUSPEND "
                 "notifiers: a nap must thaw what it froze.",
}


def icount(bd, mode):
    """({counter: median ms}, naps) of nap-costs.sh's mode."""
    if not bd:
        return {}, 0
    nap = B.UNTRACED[mode]
    n = sum(1 for r in bd.get("phases", [])
            if r["nap"] == nap and r["phase"] == "entry_sum")
    return B.phase_medians(bd, nap), n


def wall(ws, counters):
    """Sum of the medians of the counters (wall clock) of the naps the
    requests of one wake mode ended, or None."""
    v = [ws.get(k + "_ms") for k in counters] if ws else [None]
    return sum(v) if all(x is not None for x in v) else None


def verdict(x, goal):
    if x is None:
        return "not measured"
    return "**hit**" if x <= goal else "miss"


def rows(by):
    """The target rows: (target, goal, awake, one cell per setting)."""
    wake = {s["mode"]: s for s in by.get("wake", {}).get("summary", [])}
    bd = by.get("breakdown")
    aw = wake.get("awake", {})
    out = []
    cells = []
    for mode, _, _ in SETTINGS:
        w = wake.get(mode)
        if not w or w.get("median_sleeping_ms") is None or \
                not aw.get("median_ms"):
            cells.append("not measured")
            continue
        pct = 100.0 * (w["median_sleeping_ms"] / aw["median_ms"] - 1)
        cells.append("%s ms, %+.0f %% (%d requests): %s" % (
            F(w["median_sleeping_ms"]), pct, w["n_sleeping"],
            verdict(pct, HTTP_PCT)))
    out.append(["HTTP response when the request met a nap, over awake "
                "(wall clock)", "<= +%g %%" % HTTP_PCT,
                "%s ms (%d requests)" % (F(aw.get("median_ms")),
                                         aw.get("answered", 0))
                if aw else "not measured"] + cells)
    for part, counters, goal, label in PARTS:
        cells = []
        for mode, cmode, _ in SETTINGS:
            med, n = icount(bd, cmode)
            x = med.get(part + "_sum")
            c = "%s ms on the instruction clock (%d naps): %s" % (
                F(x, 2), n, verdict(x, goal)) if x is not None else \
                "not measured on the instruction clock"
            wl = wall(wake.get(mode), counters)
            if wl is not None:
                c += "; %s ms on the wall clock" % F(wl, 2)
            cells.append(c)
        out.append([label, "<= %g ms" % goal, "-"] + cells)
    cells = []
    for mode, _, _ in SETTINGS:
        w = wake.get(mode)
        cells.append("%d/%d: %s" % (w["lost"], w["sent"],
                                    "**hit**" if not w["lost"] else "miss")
                     if w else "not measured")
    out.append(["requests lost", "0",
                "%d/%d" % (aw["lost"], aw["sent"]) if aw else "-"] + cells)
    return out


def table(results):
    """The target rows as a Markdown table, for REPORT.md and results/README.md."""
    return C.md_table(["target", "goal", "awake"] +
                      [lab for _, _, lab in SETTINGS],
                      rows({r["name"]: r for r in results}))


def left_table(by):
    """Counter by counter, as booted and with the settings, on the
    instruction clock, with what runs there."""
    meds = [icount(by.get("breakdown"), cmode)[0]
            for _, cmode, _ in SETTINGS]
    if not any(meds):
        return ""
    out = []
    for part, counters, goal, _ in PARTS:
        for k in counters:
            out.append([k] + [F(m.get(k), 3) for m in meds] + [WHY[k]])
        out.append(["**%s** (goal %g ms)" % (part, goal)] +
                   ["**%s**" % F(m.get(part + "_sum"), 3) for m in meds])
    return C.md_table(["counter"] + ["%s, ms" % lab
                                     for _, _, lab in SETTINGS] +
                      ["what runs there, and why it stays"], out)


def http_split(by):
    """Per setting: the median response of the requests a nap's end
    answered, of the awake requests of the same mode, the median of the
    kernel's wake latency of those naps, and the median of response minus
    wake latency, request by request (ms)."""
    rows = by.get("wake", {}).get("rows", [])
    out = []
    for mode, cmode, label in SETTINGS:
        asleep = [x for x in rows if x["mode"] == mode and x["answered"]
                  and x["phase"] == "asleep" and x.get("wake_latency_ns")]
        awake = [x["rt_ms"] for x in rows if x["mode"] == mode
                 and x["answered"] and x["phase"] == "awake"]
        if not asleep:
            continue
        ic = icount(by.get("breakdown"), cmode)[0].get("exit_sum")
        out.append((label, len(asleep),
                    C.median([x["rt_ms"] for x in asleep]),
                    C.median(awake),
                    C.median([x["wake_latency_ns"] / 1e6 for x in asleep]),
                    C.median([x["rt_ms"] - x["wake_latency_ns"] / 1e6
                              for x in asleep]), ic))
    return out


def http_split_md(by):
    rows = http_split(by)
    if not rows:
        return ""
    return ("Where the HTTP row's extra time goes, on the wall clock: for "
            "the requests that a nap's end answered, their response, the "
            "kernel's wake latency of those naps (`wake_latency_ns`: armed "
            "IRQ to `mem` returning, the exit row on the wall clock), and "
            "the response less that latency, request by request, beside "
            "the requests of the same boots that met an awake guest "
            "(medians, ms):\n\n" +
            C.md_table(["setting", "requests", "response", "wake latency",
                        "response less wake latency",
                        "awake requests' response"],
                       [(lab, n, F(rt), F(wl, 2), F(rest), F(aw))
                        for lab, n, rt, aw, wl, rest, _ in rows]) +
            "\n" + " ".join(
                "%s: the kernel's exit is %.0f %% of the %s ms a request "
                "that met a nap took over an awake one%s." % (
                    lab.capitalize(), 100.0 * wl / (rt - aw), F(rt - aw),
                    ", and %.1f times its instruction-clock time (%s ms)"
                    % (wl / ic, F(ic, 2)) if ic else "")
                for lab, n, rt, aw, wl, rest, ic in rows
                if aw is not None and rt > aw) +
            " The rest lies outside the nap's counters and is not "
            "measured apart: the halted CPU taking the interrupt before "
            "the kernel counts it, and the server's first run after the "
            "thaw.\n")


def report_md(results):
    by = {r["name"]: r for r in results}
    if "wake" not in by and "breakdown" not in by:
        return ""
    out = ["## Targets of issue 12\n",
           "From this report's own experiments: the HTTP rows from "
           "experiment 1 (wake latency), entry and exit from experiment 5's "
           "untraced naps under `-icount` (guest time counts instructions, "
           "so host load does not move it; medians), with the wall-clock "
           "sums of the counters of the naps the requests ended beside "
           "them. Columns: awake; pseudo-sleep as booted; pseudo-sleep with "
           "the PM core's settings for frequent naps "
           "(Documentation/pseudosleep.rst, \"Tuning for frequent naps\": "
           "`pm_async=0`, `sync_on_suspend=0`, runtime PM allowed on the "
           "PCI functions without a driver; napd leaves them as they "
           "are).\n",
           table(results),
           http_split_md(by),
           "\n### What is left, counter by counter\n",
           "The nap's own counters (`/sys/power/pseudosleep/*_ns`), medians "
           "on the instruction clock:\n",
           left_table(by),
           "\nWhy the defaults stay: `pm_async=1` lets slow devices (a disk "
           "spinning down, a PCI function's 10 ms D3hot delay) overlap, "
           "which on a real machine gains more than its work items cost; "
           "`sync_on_suspend=1` and `power/control=on` are the PM core's "
           "and the PCI core's defaults for every kind of suspend. A nap "
           "leaves them to the administrator. Below the settings' figures "
           "is what a nap must do to keep its semantics: freeze and thaw "
           "the tasks, run the PM callbacks of the devices it suspends, "
           "halt and wake the CPUs. The HTTP row is a wall-clock figure "
           "under TCG, where a request costs tens of milliseconds and host "
           "load moves both of its sides.\n"]
    if (by.get("breakdown") or {}).get("profile"):
        out.append("\nThe functions a nap executes, as booted and with the "
                   "settings: section 5, \"What a nap still executes\".\n")
    return "\n".join(out)
