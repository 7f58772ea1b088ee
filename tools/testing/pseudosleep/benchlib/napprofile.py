# SPDX-License-Identifier: GPL-2.0
"""Part of 5: what a nap executes, kernel function by kernel function.

Runs tools/testing/pseudosleep/nap-profile (two -icount boots with the
tbcount TCG plugin: N naps on the RTC, N sleeps with the same RTC writes)
as booted and with the settings for frequent naps, and keeps the
instructions per nap of every function.  An exact count: host load
cannot move it.  Writes nap_profile_default.csv and nap_profile_tuned.csv
(function, insns_per_nap).
"""

import csv
import os

from . import common as C

NAPS = 20
QUICK_NAPS = 3
# (nap-profile --knobs, label); "tuned" is nap-costs.sh's tunedrt column.
KNOBS = (("default", "as booted"),
         ("tuned", "pm_async=0 sync_on_suspend=0, runtime PM"))
NS_PER_INSN = 8  # -icount shift=3
TOOL = os.path.join(C.HERE, "nap-profile")


def read_csv(path):
    """[(function, insns per nap)], most first."""
    with open(path) as f:
        rows = [(r["function"], float(r["insns_per_nap"]))
                for r in csv.DictReader(f)]
    return sorted(rows, key=lambda x: -x[1])


def run(ctx):
    """{knobs: {"naps", "total", "functions": [(name, insns)], "status"}}."""
    n = QUICK_NAPS if ctx.quick else NAPS
    out = {}
    for knobs, label in KNOBS:
        path = ctx.path("nap_profile_%s.csv" % knobs)
        rc, so, se = C.run_cmd([TOOL, "--naps", str(n), "--knobs", knobs,
                                "--top", "1", "--csv", path],
                               timeout=600 + 60 * n)
        if rc or not os.path.exists(path):
            C.say("  nap-profile --knobs %s failed (rc %d): %s" % (
                knobs, rc, (se or so).strip()[-300:]))
            out[knobs] = {"naps": n, "status": "failed (rc %d)" % rc,
                          "total": None, "functions": []}
            continue
        fn = read_csv(path)
        total = sum(v for _, v in fn if v > 0)
        out[knobs] = {"naps": n, "status": "ok", "total": total,
                      "functions": fn}
        C.say("  nap-profile, %s: %.0f instructions per nap (%.2f ms), "
              "%d naps against %d sleeps; most: %s" % (
                  label, total, total * NS_PER_INSN / 1e6, n, n,
                  ", ".join("%s %.0f" % x for x in fn[:5])))
    return out


def us(insns):
    return insns * NS_PER_INSN / 1000.0


def report_md(prof, top=20):
    """The functions a nap executes most with the settings for frequent
    naps, and those the settings save most against as booted."""
    d, t = prof.get("default") or {}, prof.get("tuned") or {}
    if t.get("status") != "ok":
        return []
    out = ["### What a nap still executes (nap-profile)\n",
           "`tools/testing/pseudosleep/nap-profile`: two boots under "
           "`-icount`, %d naps armed on the RTC against %d sleeps doing the "
           "same RTC writes, with a TCG plugin that counts each translation "
           "block's executions; the difference per nap, symbolized with "
           "vmlinux, is what one nap executes, per kernel function. Exact: "
           "host load does not move it. Microseconds at 8 ns per "
           "instruction. In total %.0f instructions (%.0f us) per nap with "
           "the settings for frequent naps%s; this counts every CPU and "
           "the halt loop, and leaves out the time the CPUs spend halted."
           "\n" % (t["naps"], t["naps"], t["total"], us(t["total"]),
                   ", %.0f (%.0f us) as booted" % (d["total"], us(d["total"]))
                   if d.get("status") == "ok" else "")]
    out.append("With the settings for frequent naps, the %d functions that "
               "execute most per nap:\n" % top)
    out.append(C.md_table(["function", "instructions per nap", "us"],
                          [(f, "%.0f" % v, "%.1f" % us(v))
                           for f, v in t["functions"][:top]]))
    if d.get("status") == "ok":
        dv = dict(d["functions"])
        tv = dict(t["functions"])
        diff = sorted(((f, dv.get(f, 0) - tv.get(f, 0))
                       for f in set(dv) | set(tv)), key=lambda x: -x[1])
        rows = [(f, "%.0f" % dv.get(f, 0), "%.0f" % tv.get(f, 0),
                 "%.1f" % us(x)) for f, x in diff[:top] if x > 0]
        out.append("What the settings save, per nap: the functions that "
                   "execute more as booted than with them (as booted "
                   "instructions, with the settings, the difference in "
                   "us). A negative count is a function the sleeps of the "
                   "baseline executed more of than the naps, mostly timer "
                   "and lock work of the boot that did not nap.\n")
        out.append(C.md_table(["function", "as booted", "with the settings",
                               "us saved"], rows))
    out.append("Data: `nap_profile_default.csv`, `nap_profile_tuned.csv` "
               "(every function, instructions per nap).\n")
    return out
