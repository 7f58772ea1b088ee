# SPDX-License-Identifier: GPL-2.0
"""2. Idle cost: over a fixed idle window, the host CPU time of the QEMU
process per second (utime+stime, all threads) and the guest's interrupts
per second (every per-CPU count of /proc/interrupts, LOC/RES/CAL
included, read before the window and after the wake).

  awake    idle loop (HLT, no cpuidle driver in this guest)
  pseudo   one nap, ended after the window by an HTTP request from the host
  s2idle   suspend to idle, ended after the window by the ACPI power button
           (QMP system_powerdown): under QEMU the RTC alarm does not wake
           s2idle (IRQ 8 is not a wakeup IRQ and QEMU raises the ACPI RTC
           event only from S3), nor does virtio-net
  deep     ACPI S3, ended by QMP system_wakeup from the host
  poll     awake, booted with idle=poll
  pollist  awake, eth0's NAPI on the polling list, polled from acpi_idle's
           POLL state (POLLIST_APPEND, vm-run --cstates); "missing" when
           this kernel does not have it

The window is measured on the host from the guest's "before" line to its
"after" line, so the sleep modes include their entry and exit.
"""

import time

from . import common as C

MODES = ("awake", "pseudo", "s2idle", "deep", "poll", "pollist")
APPEND = {"poll": "idle=poll", "pollist": C.POLLIST_APPEND}
VM_ARGS = {"pollist": C.POLLIST_VM_ARGS}


def guest_script(mode, window):
    s = r"""
httpd -p 80 -h /www
"""
    if mode == "pollist":
        s += C.POLLIST_CHECK
    if mode == "pseudo":
        s += r"""
nic=$(readlink -f /sys/class/net/eth0/device)
echo 1 > "$nic/power/nosleep"
nic_input_irqs > /sys/power/wake_irq
echo pseudo > /sys/power/mem_sleep
"""
    elif mode == "s2idle":
        s += "echo s2idle > /sys/power/mem_sleep\n"
    elif mode == "deep":
        s += ("echo disabled > /sys/class/rtc/rtc0/device/power/wakeup\n"
              "echo deep > /sys/power/mem_sleep\n")
    s += "echo READY\nsleep 2\n"
    s += 'echo "IRQ0 $(irqsum) $(up)"\n'
    if mode in ("pseudo", "s2idle", "deep"):
        s += ('if echo mem > /sys/power/state; then r=ok; else r=failed; fi\n'
              'echo "IRQ1 $(irqsum) $(up) $r"\n')
    else:
        s += 'sleep %g\necho "IRQ1 $(irqsum) $(up) ok"\n' % window
    if mode == "pseudo":
        s += ('echo "INFO spurious=$(cat /sys/power/pseudosleep/'
              'spurious_wakeups)"\n'
              'echo "INFO nap_ns=$(cat /sys/power/pseudosleep/last_nap_ns)"\n'
              'echo "INFO wake_irq=$(cat /sys/power/pseudosleep/'
              'last_wake_irq)"\n')
    s += "echo DONE\nexec sleep 1000000\n"
    return s


def run_mode(ctx, mode, run, window):
    row = {"mode": mode, "run": run, "window_s": window, "status": "ok"}
    bg = C.BenchGuest("idle-%s-%d" % (mode, run), guest_script(mode, window),
                      ports=(80,), qmp=(mode in ("deep", "s2idle")),
                      append=APPEND.get(mode, ""), logdir=ctx.logdir,
                      vm_args=VM_ARGS.get(mode, ()))
    try:
        m = bg.wait(r"^(READY|MISSING.*)$", 180)
        if not m:
            row["status"] = "failed: guest did not start"
            C.broken("idle %s run %d: guest did not start" % (mode, run), bg)
            return row
        ctx.note_guest(bg)
        if m.group(1).startswith("MISSING"):
            row["status"] = "missing"
            row["note"] = m.group(1)[len("MISSING "):]
            return row
        row["driver"] = bg.info.get("driver")
        m0 = bg.wait(r"^IRQ0 (\d+) ([\d.]+)", 30)
        meter = C.CpuMeter(bg)
        t0, c0 = meter.t0, meter.q0
        if not m0:
            row["status"] = "failed: no IRQ0 line"
            return row
        # The steady part of the window: the sleep modes are fully asleep
        # (their entry takes well under a second even under TCG).
        sa, sb = t0 + min(1.0, 0.3 * window), t0 + window - 0.2
        time.sleep(max(0.0, sa - time.monotonic()))
        ca, ta = bg.cpu(), time.monotonic()
        time.sleep(max(0.0, sb - time.monotonic()))
        cb, tb = bg.cpu(), time.monotonic()
        if None not in (ca, cb):
            row["steady_s"] = tb - ta
            row["cpu_steady_pct"] = 100.0 * (cb - ca) / (tb - ta)
        if mode in ("pseudo", "deep", "s2idle"):
            time.sleep(max(0.0, t0 + window - time.monotonic()))
            if mode == "pseudo":
                C.http_get(bg.port[80], "/", timeout=10)
            elif mode == "s2idle":
                bg.qmp("system_powerdown")
            else:
                for _ in range(20):
                    r = bg.qmp("system_wakeup")
                    if "error" not in r:
                        break
                    time.sleep(0.25)
                else:
                    row["note"] = "system_wakeup: " + r["error"].get(
                        "desc", "")
        m1 = bg.wait(r"^IRQ1 (\d+) ([\d.]+) (\S+)", window + 60)
        cm = meter.stop()
        t1, c1 = time.monotonic(), bg.cpu()
        if "other_pct" in cm:
            row["other_cpu_pct"] = cm["other_pct"]
        if not m1:
            row["status"] = "failed: guest did not come back"
            return row
        bg.wait(r"^DONE", 10)
        dt = t1 - t0
        row["host_s"] = dt
        row["guest_s"] = float(m1.group(2)) - float(m0.group(2))
        row["irqs"] = int(m1.group(1)) - int(m0.group(1))
        row["sleep_result"] = m1.group(3)
        if c0 is not None and c1 is not None:
            row["cpu_s"] = c1 - c0
            row["cpu_pct"] = 100.0 * (c1 - c0) / dt
        if row["guest_s"] > 0:
            row["irq_per_s"] = row["irqs"] / row["guest_s"]
        for k in ("spurious", "nap_ns", "wake_irq"):
            if k in bg.info:
                row[k] = bg.info[k]
    finally:
        bg.stop()
    return row


def run(ctx):
    modes = ("awake", "pseudo") if ctx.quick else MODES
    modes = ctx.modes(modes, MODES)
    window = ctx.window or (3.0 if ctx.quick else 10.0)
    C.say("== 2. idle cost: %g s idle window, host CPU of QEMU and guest "
          "interrupts per second; modes %s, %d run(s)" % (
              window, ", ".join(modes), ctx.runs))

    def say(run, mode, r):
        C.say("  run %d %-8s %s  host CPU %s%%  guest %s IRQ/s  (%s "
              "IRQs in %s s), other load %s%%%s" % (
                  run, mode, r["status"], C.fmt(r.get("cpu_pct")),
                  C.fmt(r.get("irq_per_s")), r.get("irqs", "-"),
                  C.fmt(r.get("guest_s"), 2),
                  C.fmt(r.get("other_cpu_pct"), 0),
                  ("  " + r["note"]) if r.get("note") else ""))

    rows = ctx.each_mode(
        modes, lambda mode, run: run_mode(ctx, mode, run, window), say)
    C.write_csv(ctx.path("idle_cost.csv"), rows, [
        "mode", "run", "status", "window_s", "host_s", "guest_s", "cpu_s",
        "cpu_pct", "steady_s", "cpu_steady_pct", "irqs", "irq_per_s",
        "sleep_result", "driver",
        "spurious", "nap_ns", "wake_irq", "other_cpu_pct", "note"])
    summary = []
    for mode in modes:
        r = [x for x in rows if x["mode"] == mode]
        ok = [x for x in r if x["status"] == "ok"]
        cpu = C.summary([x.get("cpu_pct") for x in ok])
        irq = C.summary([x.get("irq_per_s") for x in ok])
        steady = C.summary([x.get("cpu_steady_pct") for x in ok])
        status = "ok" if ok else (r[0]["status"] if r else "not run")
        summary.append({
            "mode": mode, "status": status, "runs": len(ok),
            "cpu_pct_median": cpu["median"], "cpu_pct_min": cpu["min"],
            "cpu_pct_max": cpu["max"],
            "cpu_steady_pct_median": steady["median"],
            "cpu_steady_pct_min": steady["min"],
            "cpu_steady_pct_max": steady["max"],
            "irq_per_s_median": irq["median"],
            "irq_per_s_min": irq["min"], "irq_per_s_max": irq["max"],
            "other_cpu_pct": C.median([x.get("other_cpu_pct") for x in ok]),
            "note": "; ".join(sorted(set(x.get("note", "") for x in r
                                         if x.get("note"))))})
    C.write_csv(ctx.path("idle_cost_summary.csv"), summary)
    C.say("  %-8s %-8s %22s %22s %24s" % (
        "mode", "status", "host CPU % [min..max]", "steady CPU % [min..max]",
        "guest IRQ/s [min..max]"))
    for s in summary:
        C.say("  %-8s %-8s %22s %22s %24s" % (
            s["mode"], s["status"],
            "%s [%s..%s]" % (C.fmt(s["cpu_pct_median"]),
                             C.fmt(s["cpu_pct_min"]), C.fmt(s["cpu_pct_max"]))
            if s["runs"] else "-",
            "%s [%s..%s]" % (C.fmt(s["cpu_steady_pct_median"]),
                             C.fmt(s["cpu_steady_pct_min"]),
                             C.fmt(s["cpu_steady_pct_max"]))
            if s["runs"] else "-",
            "%s [%s..%s]" % (C.fmt(s["irq_per_s_median"]),
                             C.fmt(s["irq_per_s_min"]),
                             C.fmt(s["irq_per_s_max"]))
            if s["runs"] else "-"))
    return {"name": "idle", "rows": rows, "summary": summary,
            "modes": modes, "window": window, "runs": ctx.runs}
