# SPDX-License-Identifier: GPL-2.0
"""5. Where a nap's time goes, and what still fires while it lasts.

Each run boots one guest that traces two naps with tracefs
(guest/nap-trace.sh): the PM core's phases (power:suspend_resume), every
device callback (power:device_pm_callback_start/end), and the interrupts,
IPIs, timers and work items of the CPUs.

  quiet  armed on the RTC only, ended by its alarm after the window: what
         fires during a steady nap with no traffic
  nic    armed on the NIC's receive IRQs, ended by an HTTP request from
         the host: the entry and exit phases of a real wake

Then, untraced (guest/quiet-nap.sh), a quiet nap of the same window and
the same window awake and idle, alternating: the interrupts the CPUs
serve per second in each.  A nap keeps every timer on time; it is quiet
only by legitimate means (frozen tasks, suspended devices, NOHZ idle).

Then, in a second guest booted with rcu_nocbs=all (RCU callbacks
offloaded to kthreads, configs/rcu-nocb.config), the same untraced quiet
naps and awake windows: a CPU with callbacks queued need not keep its
tick for them.

Then, in a guest run with QEMU's -icount (ICOUNT below: guest time is
counted in executed instructions, and a sleep takes the virtual time it
asked for), the same NIC-woken nap traced again: its phase costs do not
move with host load, so a change of a few percent shows in one run.  Its
phases are the rows of nap "nic-icount".  In the same guest, untraced
naps armed on the RTC (guest/nap-costs.sh) read the nap's own phase
counters, in turn as booted, with pseudosleep.skip_no_pm_work=0, with
the PM core's knobs for frequent sleep (pm_async=0, sync_on_suspend=0),
with runtime PM allowed on the PCI functions without a driver, and with
both: the rows of naps "untraced-icount", "untraced-icount-all",
"untraced-icount-tuned", "untraced-icount-rtpm" and
"untraced-icount-tuned-rtpm".

Last, nap-profile as booted and with the settings for frequent naps
(benchlib/napprofile.py): the instructions a nap executes, per kernel
function.

Writes breakdown_phases.csv (run, nap, phase, ms), breakdown_devices.csv
(the callbacks each device ran, per phase), quiet_nap.csv (each source of
interrupts and timers during the quiet nap, per second) and
breakdown.png (entry and exit of the NIC-woken nap, stacked by phase),
quiet_defer.csv (run, mode, rcu_nocbs, secs, irqs, per_s, wakeups).
"""

import re
import time
from collections import defaultdict

from . import common as C
from . import napprofile

TRACE_LINE = re.compile(r"^\s*.+?-\d+\s+\[(\d+)\]\s+\S+\s+([\d.]+): "
                        r"(\w+): (.*)$")
# The phases of entry and exit in the order they run; "halt" is the time
# from the last device phase to the CPUs halting (machine_suspend).
ENTRY = ("sync_filesystems", "freeze_processes", "dpm_prepare", "dpm_suspend",
         "dpm_suspend_late", "dpm_suspend_noirq")
EXIT = ("dpm_resume_noirq", "dpm_resume_early", "dpm_resume", "dpm_complete",
        "resume_console", "thaw_processes")
QUIET_LINE = re.compile(r"^QUIET (\w+) mode=(\w+) secs=([\d.]+) irqs=(\d+)"
                        r"(?: nap_ns=\d+ wakeups=(\d+))?")
QUIET_KINDS = ("nap", "awake")
QUIET_PAIRS = 2
# The quiet modes of the report: (nap or awake, rcu_nocbs=).
QUIET_MODES = (("nap", ""), ("awake", ""), ("nap", "all"), ("awake", "all"))
INTERRUPTS = ("irq_handler_entry", "local_timer_entry", "reschedule_entry",
              "call_function_entry", "call_function_single_entry")


# One guest instruction is 2^3 ns of guest time (125 MIPS).  sleep=on:
# an idle guest waits in real time, so the host's request still reaches
# it; what the phases measure is instructions and programmed sleeps.
ICOUNT = ["--accel", "tcg", "--qemu-arg=-icount",
          "--qemu-arg=shift=3,sleep=on"]
ICOUNT_SCRIPT = r"""
/usr/share/pseudosleep/nap-trace.sh nic
echo 0 > /sys/kernel/tracing/events/enable
/usr/share/pseudosleep/nap-costs.sh %d
echo DONE
exec sleep 1000000
"""
# Untraced naps per -icount guest (guest/nap-costs.sh): the nap's own
# phase counters, without the cost of tracing every device.
COST_NAPS = 5
COST_LINE = re.compile(r"^COST (\d+) mode=(\w+) (entry_sync=.*)$")
# The nap's counters (/sys/power/pseudosleep/*_ns), in the order they run.
COST_ENTRY = ("entry_sync", "entry_freeze", "entry_suspend_devices",
              "entry_cpu_halt")
COST_EXIT = ("exit_cpu_wake", "exit_resume_devices", "exit_thaw")
# Nap names of the untraced naps, by guest/nap-costs.sh's mode: as booted
# (devices with no PM work sit out the phases), every device taking part
# (skip_no_pm_work=0), as booted with pm_async=0 and sync_on_suspend=0, as
# booted with power/control=auto on the PCI functions without a driver,
# and with both.  In the order of the report's columns: (mode, nap name,
# label).
UNTRACED_MODES = (("every", "untraced-icount-all", "skip_no_pm_work=0"),
                  ("default", "untraced-icount", "as booted"),
                  ("tuned", "untraced-icount-tuned",
                   "pm_async=0 sync_on_suspend=0"),
                  ("rtpm", "untraced-icount-rtpm",
                   "runtime PM of unbound PCI functions"),
                  ("tunedrt", "untraced-icount-tuned-rtpm",
                   "pm_async=0 sync_on_suspend=0, runtime PM"))
UNTRACED = {mode: nap for mode, nap, _ in UNTRACED_MODES}

# The untraced quiet naps start once the guest has been up this long: a
# server naps long after its boot, when IPv6 address configuration, router
# solicitation and MLD reports, which run on timers for the first tens of
# seconds, have settled.
SETTLE_S = 60


def guest_script(window, settle):
    quiet = "".join("/usr/share/pseudosleep/quiet-nap.sh %g %s\n" % (window, k)
                    for _ in range(QUIET_PAIRS) for k in QUIET_KINDS)
    return r"""
/usr/share/pseudosleep/nap-trace.sh rtc %g
echo QUIET-DONE
/usr/share/pseudosleep/nap-trace.sh nic
while [ "$(cut -d. -f1 /proc/uptime)" -lt %d ]; do sleep 1; done
echo "INFO quiet_uptime_s=$(cut -d' ' -f1 /proc/uptime)"
%secho DONE
exec sleep 1000000
""" % (window, settle, quiet)


def quiet_wait(window):
    """How long a guest's untraced quiet naps may take, at most."""
    return len(QUIET_KINDS) * QUIET_PAIRS * (window + 60)


def nocb_script(window, settle):
    """The quiet naps and awake windows of a guest booted with
    rcu_nocbs=all."""
    quiet = "".join("/usr/share/pseudosleep/quiet-nap.sh %g %s\n" % (window, k)
                    for k in QUIET_KINDS)
    return r"""
dmesg | grep -q 'Offload RCU callbacks' || echo "NOCB-MISSING"
while [ "$(cut -d. -f1 /proc/uptime)" -lt %d ]; do sleep 1; done
%secho DONE
exec sleep 1000000
""" % (settle, quiet * QUIET_PAIRS)


def quiet_rows(lines, run, nocbs):
    """The rows of quiet_defer.csv from quiet-nap.sh's QUIET lines."""
    out = []
    for line in lines:
        m = QUIET_LINE.match(line)
        if not m or m.group(1) != "ok":
            continue
        secs = float(m.group(3))
        out.append({"run": run, "mode": m.group(2),
                    "rcu_nocbs": nocbs, "secs": round(secs, 3),
                    "irqs": int(m.group(4)),
                    "per_s": round(int(m.group(4)) / secs, 3)
                    if secs else None,
                    "wakeups": int(m.group(5)) if m.group(5) else ""})
    return out


def parse(lines):
    """Events of one nap-trace.sh trace: [(ts, cpu, event, detail)]."""
    out = []
    for line in lines:
        m = TRACE_LINE.match(line)
        if m:
            out.append((float(m.group(2)), int(m.group(1)), m.group(3),
                        m.group(4).strip()))
    return out


def phases(events):
    """{phase: ms} from suspend_resume begin/end pairs, plus "halt" (the
    end of dpm_suspend_noirq to the CPUs being sent to halt) and "nap"
    (machine_suspend: halted until the wake)."""
    open_, ms, noirq_end = {}, {}, None
    for ts, _, ev, d in events:
        m = re.match(r"(\w+)\[\d+\] (begin|end)", d) \
            if ev == "suspend_resume" else None
        if not m:
            continue
        name, what = m.groups()
        if what == "begin":
            open_[name] = ts
            if name == "machine_suspend" and noirq_end is not None:
                ms["halt"] = (ts - noirq_end) * 1e3
        elif name in open_:
            ms[name] = ms.get(name, 0.0) + (ts - open_.pop(name)) * 1e3
            if name == "dpm_suspend_noirq":
                noirq_end = ts
    if "machine_suspend" in ms:
        ms["nap"] = ms.pop("machine_suspend")
    return ms


def windows(events):
    """(start, end) of each open suspend_resume phase, by name."""
    w, open_ = {}, {}
    for ts, _, ev, d in events:
        m = re.match(r"(\w+)\[\d+\] (begin|end)", d) \
            if ev == "suspend_resume" else None
        if not m:
            continue
        if m.group(2) == "begin":
            open_[m.group(1)] = ts
        elif m.group(1) in open_:
            w[m.group(1)] = (open_.pop(m.group(1)), ts)
    return w


def devices(events):
    """[(phase, device, driver, ms)]: each device callback, placed in the
    device phase whose window holds its start."""
    win = windows(events)
    start, out = {}, []
    for ts, _, ev, d in events:
        if ev == "device_pm_callback_start":
            m = re.match(r"(\S*) (\S+), parent: \S+, (.*)$", d)
            if m:
                start[m.group(2)] = (ts, m.group(1))
        elif ev == "device_pm_callback_end":
            m = re.match(r"(\S*) (\S+), err=", d)
            if m and m.group(2) in start:
                t0, drv = start.pop(m.group(2))
                ph = next((p for p in ENTRY + EXIT if p in win and
                           win[p][0] <= t0 <= win[p][1]), "?")
                out.append((ph, m.group(2), drv or "-", (ts - t0) * 1e3))
    return out


def sources(events):
    """({source: count} of the interrupts during the nap, {cause: count}
    of the timers and work items run meanwhile, nap seconds)."""
    w = windows(events).get("machine_suspend")
    if not w:
        return {}, {}, 0.0
    irq, cause = defaultdict(int), defaultdict(int)
    for ts, _, ev, d in events:
        if not w[0] <= ts <= w[1]:
            continue
        if ev == "irq_handler_entry":
            m = re.search(r"irq=(\d+) name=(\S+)", d)
            irq["IRQ %s %s" % m.groups() if m else "IRQ ?"] += 1
        elif ev in INTERRUPTS:
            irq[{"local_timer_entry": "LAPIC timer",
                 "reschedule_entry": "IPI reschedule"}.get(
                     ev, "IPI call function")] += 1
        elif ev in ("hrtimer_expire_entry", "timer_expire_entry"):
            m = re.search(r"function=(\w+)", d)
            cause["%s %s" % ("hrtimer" if ev[0] == "h" else "timer",
                             m.group(1) if m else "?")] += 1
        elif ev == "workqueue_execute_start":
            m = re.search(r"function (\w+)", d)
            cause["work " + (m.group(1) if m else "?")] += 1
    return dict(irq), dict(cause), w[1] - w[0]


def run_one(ctx, run, window):
    row = {"run": run, "status": "ok"}
    bg = C.BenchGuest("breakdown-%d" % run,
                      guest_script(window, 0 if ctx.quick else SETTLE_S),
                      ports=(80,), logdir=ctx.logdir)
    traces = {}
    try:
        for nap in ("quiet", "nic"):
            if not bg.wait(r"^NAPPING 1", 180):
                row["status"] = "failed: no %s nap" % nap
                C.broken("breakdown run %d: no %s nap" % (run, nap), bg)
                return row, traces
            # The trace follows NAPPING at once when the nap ends, maybe
            # before the request below has its answer: count from here.
            n = len(bg.g.output)
            if nap == "nic":
                time.sleep(1.0)
                body, _ = C.http_get(bg.port[80], "/", timeout=10)
                row["answered"] = body is not None
            end = bg.wait(r"^TRACE-END", window + 120)
            if not end:
                row["status"] = "failed: no trace of the %s nap" % nap
                return row, traces
            lines = bg.g.output[n:]
            if "TRACE-BEGIN" in lines:
                lines = lines[lines.index("TRACE-BEGIN") + 1:]
            traces[nap] = parse(lines)
        n = len(bg.g.output)
        if bg.wait(r"^DONE", SETTLE_S + quiet_wait(window)):
            row["quiet"] = quiet_rows(bg.g.output[n:], run, "")
        ctx.note_guest(bg)
    finally:
        bg.stop()
    return row, traces


def run_nocb(ctx, run, window):
    """Untraced quiet naps in a guest booted with rcu_nocbs=all: rows."""
    settle = 0 if ctx.quick else SETTLE_S
    bg = C.BenchGuest("breakdown-nocb-%d" % run, nocb_script(window, settle),
                      ports=(), append="rcu_nocbs=all", logdir=ctx.logdir)
    try:
        if not bg.wait(r"^DONE", settle + 120 + quiet_wait(window)):
            C.broken("breakdown run %d: no quiet naps with rcu_nocbs=all"
                     % run, bg)
            return []
        if "NOCB-MISSING" in bg.g.output:
            C.say("  run %d: the kernel offloads no RCU callbacks "
                  "(no CONFIG_RCU_NOCB_CPU)" % run)
            return []
        return quiet_rows(bg.g.output, run, "all")
    finally:
        bg.stop()


def cost_rows(lines, run):
    """Rows (run, nap, phase, ms) of the untraced naps' COST lines, with an
    entry and an exit sum per nap."""
    rows = []
    for line in lines:
        m = COST_LINE.match(line)
        if not m:
            continue
        v = dict(kv.split("=", 1) for kv in m.group(3).split())
        ms = {k: int(v[k]) / 1e6 for k in COST_ENTRY + COST_EXIT if k in v}
        if len(ms) != len(COST_ENTRY + COST_EXIT):
            continue
        ms["entry_sum"] = sum(ms[k] for k in COST_ENTRY)
        ms["exit_sum"] = sum(ms[k] for k in COST_EXIT)
        if m.group(2) not in UNTRACED:
            continue
        rows.extend({"run": run, "nap": UNTRACED[m.group(2)], "phase": k,
                     "ms": round(x, 4)} for k, x in ms.items())
    return rows


def run_icount(ctx, run):
    """The NIC-woken nap traced under -icount, then untraced naps:
    (status, events, cost rows)."""
    n_cost = 2 if ctx.quick else COST_NAPS
    bg = C.BenchGuest("breakdown-icount-%d" % run, ICOUNT_SCRIPT % n_cost,
                      ports=(80,), logdir=ctx.logdir, vm_args=ICOUNT)
    try:
        if not bg.wait(r"^NAPPING 1", 300):
            C.broken("breakdown run %d: no nap under -icount" % run, bg)
            return "failed: no nap under -icount", [], []
        n = len(bg.g.output)
        time.sleep(1.0)
        body, _ = C.http_get(bg.port[80], "/", timeout=30)
        if not bg.wait(r"^TRACE-END", 180):
            return "failed: no trace under -icount", [], []
        lines = bg.g.output[n:]
        if "TRACE-BEGIN" in lines:
            lines = lines[lines.index("TRACE-BEGIN") + 1:]
        events = parse(lines)
        status = "ok" if body is not None else "not answered"
        if not bg.wait(r"^COSTS-END", 30 + 25 * n_cost):
            C.broken("breakdown run %d: untraced naps under -icount did "
                     "not finish" % run, bg)
            return status + ", untraced naps failed", events, []
        return status, events, cost_rows(bg.g.output, run)
    finally:
        bg.stop()


def run(ctx):
    window = ctx.window or (3.0 if ctx.quick else 10.0)
    C.say("== 5. nap breakdown: phases and device callbacks of a NIC-woken "
          "nap, and what fires during a %g s quiet nap; untraced quiet naps "
          "from %d s of uptime; %d run(s)"
          % (window, 0 if ctx.quick else SETTLE_S, ctx.runs))
    ph_rows, dev_rows, quiet_rows, runs = [], [], [], []
    for run in range(ctx.runs):
        row, traces = run_one(ctx, run, window)
        row.setdefault("quiet", []).extend(run_nocb(ctx, run, window))
        row["icount"], ev, costs = run_icount(ctx, run)
        if ev:
            traces["nic-icount"] = ev
        ph_rows.extend(costs)
        runs.append(row)
        for nap, ev in traces.items():
            for p, ms in phases(ev).items():
                ph_rows.append({"run": run, "nap": nap, "phase": p,
                                "ms": round(ms, 4)})
            for p, dev, drv, ms in devices(ev):
                dev_rows.append({"run": run, "nap": nap, "phase": p,
                                 "device": dev, "driver": drv,
                                 "ms": round(ms, 4)})
        if "quiet" in traces:
            irq, cause, secs = sources(traces["quiet"])
            for kind, d in (("interrupt", irq), ("cause", cause)):
                for src, n in d.items():
                    quiet_rows.append({"run": run, "kind": kind,
                                       "source": src, "count": n,
                                       "nap_s": round(secs, 3),
                                       "per_s": round(n / secs, 3)
                                       if secs else None})
        C.say("  run %d %s, -icount %s" % (run, row["status"],
                                            row["icount"]))
    C.write_csv(ctx.path("breakdown_phases.csv"), ph_rows,
                ["run", "nap", "phase", "ms"])
    C.write_csv(ctx.path("breakdown_devices.csv"), dev_rows,
                ["run", "nap", "phase", "device", "driver", "ms"])
    C.write_csv(ctx.path("quiet_nap.csv"), quiet_rows,
                ["run", "kind", "source", "count", "nap_s", "per_s"])
    window_rows = [q for r in runs for q in r.pop("quiet", [])]
    C.write_csv(ctx.path("quiet_defer.csv"), window_rows,
                ["run", "mode", "rcu_nocbs", "secs", "irqs", "per_s",
                 "wakeups"])
    for d, nocbs in QUIET_MODES:
        w = window_summary(window_rows, d, "per_s", nocbs)
        C.say("  quiet, %s%s: %s interrupts/s "
              "(median of %d windows, %s..%s)" % (
                  d, ", rcu_nocbs=" + nocbs if nocbs else "",
                  C.fmt(w["median"]), w["n"], C.fmt(w["min"]),
                  C.fmt(w["max"])))
    for nap in ("nic", "nic-icount"):
        sums = part_sums(ph_rows, nap)
        for part in ("entry", "exit"):
            v = C.summary([x[part] for x in sums.values()])
            C.say("  %s, %s: %s ms (median of %d, %s..%s)" % (
                "traced" if nap == "nic" else "traced under -icount", part,
                C.fmt(v["median"]), v["n"], C.fmt(v["min"]),
                C.fmt(v["max"])))
    for _, nap, label in UNTRACED_MODES:
        for part in ("entry_sum", "exit_sum"):
            v = C.summary([r["ms"] for r in ph_rows
                           if r["nap"] == nap and r["phase"] == part])
            C.say("  untraced under -icount, %s, %s: %s ms "
                  "(median of %d naps, %s..%s)" % (
                      label, part[:-4], C.fmt(v["median"]),
                      v["n"],
                      C.fmt(v["min"]), C.fmt(v["max"])))
    profile = napprofile.run(ctx)
    return {"name": "breakdown", "window": window,
            "settle_s": 0 if ctx.quick else SETTLE_S, "runs": runs,
            "phases": ph_rows, "devices": dev_rows, "quiet": quiet_rows,
            "defer": window_rows, "profile": profile}


# --- summaries for the report and the plot ---------------------------------

def part_sums(ph_rows, nap):
    """{run: {"entry": ms or None, "exit": ms or None}} of one kind of nap.
    A part whose trace lacks one of its phases (the ring buffer lost the
    first events) has no sum rather than a short one."""
    got = defaultdict(dict)
    for r in ph_rows:
        if r["nap"] == nap:
            got[r["run"]][r["phase"]] = r["ms"]
    out = {}
    for run, ph in got.items():
        out[run] = {}
        for part, names in (("entry", ENTRY + ("halt",)), ("exit", EXIT)):
            # A nap does not suspend the console: no resume_console.
            need = [p for p in names if p != "resume_console"]
            out[run][part] = sum(ph.get(p, 0.0) for p in names) \
                if all(p in ph for p in need) else None
    return out


def phase_medians(res, nap):
    by = defaultdict(list)
    for r in res["phases"]:
        if r["nap"] == nap:
            by[r["phase"]].append(r["ms"])
    return {p: C.median(v) for p, v in by.items()}


def device_summary(res, nap="nic", top=12):
    """[(phase, device, driver, median ms per run)] of the slowest."""
    per = defaultdict(lambda: defaultdict(float))
    for r in res["devices"]:
        if r["nap"] == nap:
            per[(r["phase"], r["device"], r["driver"])][r["run"]] += r["ms"]
    rows = [(k[0], k[1], k[2], C.median(list(v.values())))
            for k, v in per.items()]
    return sorted(rows, key=lambda x: -x[3])[:top], len(per)


def window_summary(rows, mode, key, nocbs=""):
    """C.summary() of `key` over the quiet windows of this mode (nap or
    awake) and rcu_nocbs= (rows of earlier runs, with timer_defer_ms
    instead of a mode, have none)."""
    return C.summary([q[key] for q in rows if q.get("mode") == mode and
                      q.get("rcu_nocbs", "") == nocbs])


def quiet_summary(res):
    per = defaultdict(list)
    total = defaultdict(float)
    for r in res["quiet"]:
        if r["per_s"] is not None:
            per[(r["kind"], r["source"])].append(r["per_s"])
            if r["kind"] == "interrupt":
                total[r["run"]] += r["per_s"]
    rows = sorted(((k, s, C.median(v)) for (k, s), v in per.items()),
                  key=lambda x: (x[0] != "interrupt", -x[2]))
    return rows, C.median(list(total.values())) if total else None


def plot(P, res):
    e = phase_medians(res, "nic")
    if not e:
        return None
    cols = list(ENTRY) + ["halt"] + list(EXIT)
    x = ["bar " + " ".join(cols)]
    x.append("entry " + " ".join("%.4f" % (e.get(c, 0) if c in ENTRY or
                                         c == "halt" else 0) for c in cols))
    x.append("exit " + " ".join("%.4f" % (e.get(c, 0) if c in EXIT else 0)
                                for c in cols))
    P.dat("breakdown.dat", x)
    script = ("set title 'Entry and exit of a NIC-woken nap, by phase "
              "(median ms; %s)'\n" % P.cond +
              "set style data histograms\nset style histogram rowstacked\n"
              "set style fill solid 0.8 border -1\nset boxwidth 0.5\n"
              "set key outside right\nset ylabel 'ms'\nset yrange [0:*]\n"
              "plot for [i=2:%d] 'breakdown.dat' using i:xtic(1) "
              "title columnhead(i)\n" % (len(cols) + 1))
    return P.render("breakdown", script)


def spread_pct(v):
    """(max - min) / median in %, or None."""
    if not v["median"] or v["n"] < 2:
        return None
    return 100.0 * (v["max"] - v["min"]) / v["median"]


def icount_md(res):
    """The phases of the NIC-woken nap under -icount beside the wall-clock
    ones: medians, [min..max] and spread over the runs."""
    by = {nap: defaultdict(list) for nap in ("nic", "nic-icount")}
    for r in res["phases"]:
        if r["nap"] in by and r["phase"] != "nap":
            by[r["nap"]][r["phase"]].append(r["ms"])
    if not by["nic-icount"]:
        return []
    for nap in by:
        for run, v in part_sums(res["phases"], nap).items():
            for part in ("entry", "exit"):
                if v[part] is not None:
                    by[nap]["**%s, sum**" % part].append(v[part])
    rows = []
    for p in list(ENTRY) + ["halt"] + list(EXIT) + ["**entry, sum**",
                                                    "**exit, sum**"]:
        w = C.summary(by["nic"].get(p, []))
        i = C.summary(by["nic-icount"].get(p, []))
        if not w["n"] and not i["n"]:
            continue
        cells = [p]
        for v in (w, i):
            sp = spread_pct(v)
            cells.append("%s [%s..%s]" % (C.fmt(v["median"], 3),
                                          C.fmt(v["min"], 3),
                                          C.fmt(v["max"], 3))
                         if v["n"] else "-")
            cells.append("%.0f %%" % sp if sp is not None else "-")
        rows.append("| %s |" % " | ".join(cells))
    return ["### The same nap on an instruction clock (-icount)\n",
            "The NIC-woken nap traced again in a guest under QEMU's "
            "`-icount shift=3,sleep=on`: guest time counts executed "
            "instructions (8 ns each) and the sleeps the guest asked for, "
            "so host load does not move it. Medians [min..max] over the "
            "runs, and the spread (max - min over the median), wall clock "
            "beside instruction clock. A change is visible in one run when "
            "it is larger than the instruction clock's spread. A sum "
            "counts only the runs whose trace has all of its phases.\n",
            "| phase | traced, wall ms | spread | traced, -icount ms | "
            "spread |\n|---|---|---|---|---|\n" + "\n".join(rows) + "\n"]


def untraced_md(res):
    """The untraced naps under -icount, one column per mode of
    guest/nap-costs.sh: each counter's median [min..max] over every nap of
    every run, and the ratios of the medians to every device taking
    part."""
    by = {nap: defaultdict(list) for nap in UNTRACED.values()}
    for r in res["phases"]:
        if r["nap"] in by:
            by[r["nap"]][r["phase"]].append(r["ms"])
    cols = [by[nap] for _, nap, _ in UNTRACED_MODES]
    if not any(cols):
        return []
    rows = []
    for p in COST_ENTRY + ("entry_sum",) + COST_EXIT + ("exit_sum",):
        v = [C.summary(c.get(p, [])) for c in cols]
        if not any(x["n"] for x in v):
            continue
        cells = ["**%s, sum**" % p[:-4] if p.endswith("_sum") else p]
        for x in v:
            cells.append("%s [%s..%s]" % (C.fmt(x["median"], 3),
                                          C.fmt(x["min"], 3),
                                          C.fmt(x["max"], 3))
                         if x["n"] else "-")
        for x in v[1:]:
            cells.append("%.2f" % (x["median"] / v[0]["median"])
                         if x["n"] and v[0]["n"] and v[0]["median"]
                         else "-")
        rows.append("| %s |" % " | ".join(cells))
    n = max(len(c.get("entry_sum", [])) for c in cols)
    return ["### Untraced, on the instruction clock\n",
            "What a nap costs without tracing: in the same -icount guests, "
            "after the traced nap, rounds of naps armed on the RTC and "
            "ended by its alarm (guest/nap-costs.sh, up to %d naps per "
            "column), read from the nap's own counters (`/sys/power/"
            "pseudosleep/*_ns`), one nap per column in turn: every device "
            "goes through every phase (`pseudosleep.skip_no_pm_work=0`, as "
            "before that change); as booted (devices with no PM work sit "
            "out the phases); as booted with the PM core's knobs for a "
            "machine that sleeps often, `/sys/power/pm_async=0` (callbacks "
            "in order, no async work items) and `sync_on_suspend=0`; as "
            "booted with runtime PM allowed (`power/control=auto`) on the "
            "PCI functions without a driver, which a suspend then "
            "completes directly; both of these. "
            "entry_suspend_devices runs from the frozen tasks to the end of "
            "suspend_noirq (choosing the keep set, prepare, suspend, "
            "suspend_late, suspend_noirq); exit_resume_devices from the "
            "woken task to the end of complete. Medians [min..max] over all "
            "naps; the ratios are to the first column.\n" % n,
            "| counter | %s | %s |\n|%s\n" % (
                " | ".join("%s, ms" % label for _, _, label in UNTRACED_MODES),
                " | ".join("%s / every" % mode
                           for mode, _, _ in UNTRACED_MODES[1:]),
                "---|" * (2 * len(UNTRACED_MODES))) + "\n".join(rows) + "\n"]


def report_md(res, figs, fig_md):
    e = phase_medians(res, "nic")
    out = ["## 5. Where a nap's time goes\n",
           "tracefs in the guest (guest/nap-trace.sh): `power:suspend_resume` "
           "phases and `power:device_pm_callback_*` of a nap woken by an "
           "HTTP request (NIC receive IRQs armed), medians of %d run(s).\n"
           % len(res["runs"])]
    if e:
        ent = sum(e.get(p, 0) for p in ENTRY) + e.get("halt", 0)
        ex = sum(e.get(p, 0) for p in EXIT)
        rows = [[p, "entry" if p in ENTRY or p == "halt" else "exit",
                 "%.3f" % e[p]] for p in list(ENTRY) + ["halt"] +
                list(EXIT) if p in e]
        out.append("| phase | part | ms |\n|---|---|---|\n" + "\n".join(
            "| %s |" % " | ".join(r) for r in rows) +
            "\n| **entry, sum** | | **%.3f** |\n| **exit, sum** | | "
            "**%.3f** |\n" % (ent, ex))
    out.append(fig_md(figs, "breakdown.png"))
    top, n = device_summary(res)
    if top:
        out.append("%d device callbacks ran in the NIC-woken nap; the "
                   "slowest (median ms per nap):\n" % n)
        out.append("| phase | device | driver | ms |\n|---|---|---|---|\n" +
                   "\n".join("| %s | %s | %s | %.3f |" % r for r in top) +
                   "\n")
    out.extend(icount_md(res))
    out.extend(untraced_md(res))
    out.extend(napprofile.report_md(res.get("profile") or {}))
    defer = res.get("defer") or []
    if defer:
        out.append("### A quiet nap against the same time awake\n")
        out.append("Untraced windows of %g s with no traffic "
                   "(guest/quiet-nap.sh), %s, alternating a nap armed on "
                   "the RTC only with the same time awake and idle. "
                   "Interrupts: every interrupt the CPUs served "
                   "(/proc/stat `intr`: device IRQs, local timer, IPIs), "
                   "per second of the window; a nap's window includes its "
                   "entry and exit. Timers run on time in both. The "
                   "rcu_nocbs=all rows come from a second guest booted "
                   "with that parameter (RCU callbacks run by kthreads, so "
                   "a CPU with callbacks queued need not keep its tick "
                   "for them).\n" % (
                       res["window"],
                       "from %s s of uptime on, once boot-time timers have "
                       "settled" % res["settle_s"] if res.get("settle_s")
                       else "right after boot"))
        trows = []
        for d, nocbs in QUIET_MODES:
            w = window_summary(defer, d, "per_s", nocbs)
            i = window_summary(defer, d, "irqs", nocbs)
            if not w["n"]:
                continue
            trows.append("| %s | %s | %d | %s [%s..%s] | %s |" % (
                d, nocbs or "-", w["n"],
                C.fmt(w["median"]), C.fmt(w["min"]), C.fmt(w["max"]),
                C.fmt(i["median"])))
        out.append("| quiet | rcu_nocbs | windows | interrupts/s, "
                   "median [min..max] | interrupts per window, median |\n"
                   "|---|---|---|---|---|\n" +
                   "\n".join(trows) + "\n")
    rows, total = quiet_summary(res)
    if rows:
        out.append("### What fires during a quiet nap\n")
        out.append("A %g s nap armed on the RTC only, no traffic, traced "
                   "(the tracing itself slows the CPUs under TCG), timers "
                   "on time: %s interrupts per second on all CPUs. "
                   "Interrupts, then the timers and work items they ran (per "
                   "second, median of runs):\n"
                   % (res["window"], C.fmt(total, 1)))
        out.append("| kind | source | per s |\n|---|---|---|\n" + "\n".join(
            "| %s | %s | %.2f |" % r for r in rows[:25]) + "\n")
    return "\n".join(out)
