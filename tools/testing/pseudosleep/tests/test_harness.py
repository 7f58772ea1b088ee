# SPDX-License-Identifier: GPL-2.0
"""The harness itself: the first guest, `vm-run -- true`, boots (fail fast:
when it does not, conftest.py stops the session, as nothing else that boots
can pass), and vm-run --cstates gives the guest a platform cpuidle
driver."""

import pytest

import cstates
import pslib

ORDER = 1


@pytest.mark.boot_check
def test_guest_boots(record_property):
    """harness: the guest boots and runs a command"""
    booted, detail = pslib.boot_check("pytest")
    if not booted:
        pytest.fail("harness: the guest does not boot: %s (vm-run's "
                    "messages are in the captured stderr)" % detail,
                    pytrace=False)
    record_property("detail", detail)


def test_cstates_table():
    """harness: the _CST table names every vCPU and refuses none"""
    src = cstates.asl(3)
    for cpu in ("C000", "C001", "C002"):
        assert "Scope (\\_SB.CPUS.%s)" % cpu in src
    assert "C003" not in src
    with pytest.raises(ValueError):
        cstates.asl(0)


def test_cstates_give_acpi_idle(tmp_path):
    """harness: vm-run --cstates gives the guest acpi_idle with POLL, C1
    and C2 on every CPU, both entered with HLT (a C2 of ACPI type 2 would
    make the kernel distrust the TSC, and spin), and idle CPUs reach C2"""
    g = pslib.Guest(
        "cat /sys/devices/system/cpu/cpuidle/current_driver; sleep 2; "
        "for s in /sys/devices/system/cpu/cpu*/cpuidle/state*; "
        "do echo \"state $s $(cat $s/usage) $(cat $s/name)=$(cat $s/desc)\"; "
        "done", smp=2, nic="none", timeout=300, extra=["--cstates"])
    try:
        rc = g.finish(timeout=330)
        console = g.console()
    finally:
        g.cleanup(keep_log_as=str(tmp_path / "console.log"))
    assert rc == 0, "vm-run --cstates exited %d: %s" % (rc, g.output[-5:])
    assert g.output[:1] == ["acpi_idle"], g.output
    assert "TSC halts in idle" not in console
    states = {}
    for line in g.output:
        f = line.split(" ", 3)
        if f[0] == "state" and len(f) == 4:
            cpu = f[1].split("/")[5]
            states.setdefault(cpu, []).append((f[3], int(f[2])))
    assert sorted(states) == ["cpu0", "cpu1"], g.output
    for cpu, st in states.items():
        assert [n for n, _ in st] == ["POLL=CPUIDLE CORE POLL IDLE",
                                      "C1=ACPI HLT", "C2=ACPI HLT"], (cpu, st)
        assert st[2][1] > 0, "%s never reached C2: %s" % (cpu, st)
