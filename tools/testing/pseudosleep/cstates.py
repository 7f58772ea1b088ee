# SPDX-License-Identifier: GPL-2.0
"""An SSDT that gives QEMU's q35 processors a _CST (vm-run --cstates).

QEMU's processor objects have neither a _CST nor a P_BLK, so acpi_idle
gives up on them (no C-state information at all) and a q35 guest under TCG
has no cpuidle driver.  With this table acpi_idle registers, with the
cpuidle core's POLL as state 0 and two halting states behind it: C1 (1 us)
and C2 (100 us), which menu picks for long idle periods.  It stands in for a platform's deeper states where the polling
idle work needs a platform driver to poll from.

C2 is declared as a second state of ACPI type C1: a type-2 state makes the
kernel mark the TSC unstable (TCG's CPU has no nonstop TSC), and QEMU
ignores its P_LVL2 read, so it would spin.  Both halt.  Needs iasl
(Debian's acpica-tools).  See docs/plan-pollist-platform-states.md.
"""

import os
import subprocess

# (latency us, power mW) of C1 and C2.  Each is an FFH register with bit
# offset 0, which is not the kernel's "native C-state beyond halt" mark,
# so acpi_idle enters both with HLT.
STATES = ((1, 1000), (100, 500))


class TableError(Exception):
    """The table could not be made (no iasl, or iasl failed)."""


def asl(ncpus):
    """The table's source for ncpus vCPUs (QEMU names them C000, C001...)."""
    if ncpus < 1:
        raise ValueError("ncpus must be at least 1")
    cpus = ["C%03X" % i for i in range(ncpus)]
    states = ",\n".join(
        "        Package () { ResourceTemplate () "
        "{ Register (FFixedHW, 0, 0, 0) }, 1, %d, %d }" % s for s in STATES)
    lines = ['DefinitionBlock ("", "SSDT", 2, "PSLEEP", "CST", 1)', "{"]
    lines += ["    External (\\_SB.CPUS.%s, ProcessorObj)" % c for c in cpus]
    lines += ["    Name (CSTP, Package () {", "        %d," % len(STATES),
              states, "    })"]
    for c in cpus:
        lines += ["    Scope (\\_SB.CPUS.%s) {" % c,
                  "        Method (_CST, 0) { Return (CSTP) }", "    }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


def build(ncpus, workdir):
    """Compile the table for ncpus vCPUs in workdir; return the .aml path.
    Raises TableError with iasl's output when it fails."""
    src = os.path.join(workdir, "cstates.asl")
    with open(src, "w") as f:
        f.write(asl(ncpus))
    prefix = os.path.join(workdir, "cstates")
    try:
        r = subprocess.run(["iasl", "-p", prefix, src], capture_output=True,
                           text=True, check=False)
    except FileNotFoundError:
        raise TableError("--cstates needs iasl (apt-get install "
                           "acpica-tools)") from None
    if r.returncode or not os.path.exists(prefix + ".aml"):
        raise TableError("iasl failed on %s: %s" %
                           (src, (r.stdout + r.stderr).strip()[-400:]))
    return prefix + ".aml"
