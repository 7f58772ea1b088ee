# SPDX-License-Identifier: GPL-2.0
"""The two guest suites: one boot each runs the KUnit suites at boot (KTAP
on the console) and then kselftest programs (guest/run-selftests.sh).  The
guest_suite fixture boots each suite once per session; every KUnit case
and every kselftest case is an item of its own, listed from the sources
(caselists.py), plus per suite: the boot itself, "every case is
collected" for KUnit and for each program, and the console's dmesg check.
"""

import os
import re

import pytest

import caselists
import ktap
import pslib

ORDER = 2

# name: (kselftest programs, extra kernel command line, NIC model, KUnit,
#        extra vm-run options)
SUITES = {
    "guest suite": (["abi_test", "nap_test"], "", "virtio", True, []),
    # virtio-net polled through NAPI (pollist_test turns napi_idle_poll
    # on) from the polling state of the platform's driver: acpi_idle,
    # given C-states by --cstates.  The pseudo-sleep tests run again on
    # top of it, so naps run with a cpuidle driver current, as on a real
    # machine.  Also the naps of a server set up for quiet naps: a TSC
    # trusted without the clocksource watchdog, RCU callbacks offloaded.
    "pollist suite": (["pollist_test", "nap_test"],
                      "cpuidle_pollist.enable=1 tsc=reliable rcu_nocbs=all",
                      "virtio", True, ["--cstates"]),
    # The same NAPI client on other drivers, e1000 and e1000e, polled
    # from acpi_idle's POLL state too: no KUnit again.
    "pollist e1000 suite": (["pollist_test"], "cpuidle_pollist.enable=1",
                            "e1000", False, ["--cstates"]),
    "pollist e1000e suite": (["pollist_test"], "cpuidle_pollist.enable=1",
                             "e1000e", False, ["--cstates"]),
}
KUNIT = caselists.kunit_cases()


class SuiteRun:
    """What one boot of a suite left: vm-run's exit status, its output and
    console, the KUnit results by (suite, case) and the kselftest results
    by program."""

    def __init__(self, name, timeout, logdir):
        programs, append, nic, kunit, extra = SUITES[name]
        if kunit:
            append = "kunit.enable=1 " + append
        g = pslib.Guest("/usr/share/pseudosleep/run-selftests.sh " +
                        " ".join(programs),
                        append=append, nic=nic, timeout=timeout,
                        extra=extra)
        try:
            self.rc = g.finish(timeout=timeout + 30)
        except BaseException:
            # Ctrl-C: vm-run stops QEMU and removes its files on SIGTERM.
            g.proc.terminate()
            g.cleanup()
            raise
        self.console = g.console()
        self.output = list(g.output)
        base = os.path.join(logdir, name.replace(" ", "-")) if logdir \
            else None
        g.cleanup(base + ".log" if base else None)
        if base:	# the KTAP the guest printed, TH_LOG lines included
            with open(base + ".out", "w") as f:
                f.write("\n".join(self.output) + "\n")
        # KUnit: the nested results on the console, without timestamps.
        lines = [re.sub(r"^\[[ 0-9.]+\] ", "", l)
                 for l in self.console.splitlines()]
        # A parameterised case's own results are its children.
        self.kunit = {(r.suite, r.name): r for r in ktap.parse(lines).results
                      if r.depth == 1}
        # kselftests: the output between "# selftest: NAME" lines.
        self.kselftest, prog = {}, None
        for line in self.output + ["# selftest: END"]:
            m = re.match(r"# selftest: (\S+)", line)
            if m:
                prog = m.group(1)
                self.kselftest[prog] = []
            elif prog:
                self.kselftest[prog].append(line)
        self.kselftest = {p: [r for r in ktap.parse(b).results
                              if r.depth == 0]
                          for p, b in self.kselftest.items()}

    def boot_failure(self):
        """vm-run's own lines and how far the console got."""
        return "\n".join(
            [l for l in self.output if l.startswith("vm-run:")] +
            ["console: " + l for l in self.console.splitlines()[-15:]])


@pytest.fixture(scope="session")
def guest_suite(request):
    """guest_suite(name): the SuiteRun of that suite, booted on first use."""
    runs = {}
    timeout = request.config.getoption("--suite-timeout")
    logdir = request.config.getoption("--logs")

    def get(name):
        if name not in runs:
            runs[name] = SuiteRun(name, timeout, logdir)
        return runs[name]
    return get


def verdict(r, what, log_lines=12):
    """Pass, skip or fail as KTAP result r says."""
    if r.status == "skipped":
        pytest.skip("%s: %s" % (what, r.reason or "SKIP"))
    if r.status == "failed":
        why = "%s: not ok%s" % (what, " # " + r.directive
                                if r.directive else "")
        # What an EXPECT or TH_LOG printed: CI keeps only what is printed.
        log = r.diag[-log_lines:]
        bad = [c for c in r.children if c.status == "failed"]
        log += ["not ok %s" % c.name for c in bad]
        pytest.fail("\n".join([why] + ["#   " + l[:200] for l in log]),
                    pytrace=False)


def suite_items():
    """(test function, params) in the order run-tests reported them."""
    items = {k: [] for k in ("boot", "kunit", "kunit_all", "kselftest",
                             "kselftest_all", "dmesg")}
    seq = 0

    def add(kind, id, *args):
        nonlocal seq
        seq += 1
        items[kind].append(pytest.param(*args, id=id,
                                        marks=pytest.mark.seq(seq)))
    for name, (programs, _, _, kunit, _) in SUITES.items():
        add("boot", "%s: vm-run exits 0" % name, name)
        for suite, case in KUNIT if kunit else ():
            add("kunit", "kunit (%s): %s: %s" % (name, suite, case),
                name, suite, case)
        if kunit:
            add("kunit_all", "kunit (%s): suites ran, every case "
                "collected" % name, name)
        for prog in programs:
            for case in caselists.kselftest_cases(prog):
                add("kselftest", "kselftest (%s): %s: %s" % (
                    name, prog, case), name, prog, case)
            add("kselftest_all", "kselftest (%s): %s ran, every case "
                "collected" % (name, prog), name, prog)
        add("dmesg", "dmesg clean: " + name, name)
    return items


ITEMS = suite_items()


@pytest.mark.parametrize("name", ITEMS["boot"])
def test_suite_boot(guest_suite, name):
    run = guest_suite(name)
    if run.rc:
        pytest.fail("%s: vm-run exited %d\n%s" % (
            name, run.rc, run.boot_failure()), pytrace=False)


@pytest.mark.parametrize("name, suite, case", ITEMS["kunit"])
def test_kunit(guest_suite, name, suite, case):
    run = guest_suite(name)
    r = run.kunit.get((suite, case))
    if not r:
        pytest.fail("KUnit %s.%s: no result on the console (vm-run exit "
                    "%d)" % (suite, case, run.rc), pytrace=False)
    verdict(r, "KUnit %s.%s" % (suite, case))


@pytest.mark.parametrize("name", ITEMS["kunit_all"])
def test_kunit_all_collected(guest_suite, name):
    """KUnit ran, and reported no case that has no item of its own."""
    run = guest_suite(name)
    if not run.kunit:
        pytest.fail("%s: no KUnit results on the console" % name,
                    pytrace=False)
    extra = ["%s.%s: %s" % (s, c, r.status)
             for (s, c), r in run.kunit.items() if (s, c) not in KUNIT]
    if extra:
        pytest.fail("KUnit cases not in caselists.kunit_cases(): " +
                    ", ".join(extra), pytrace=False)


@pytest.mark.parametrize("name, prog, case", ITEMS["kselftest"])
def test_kselftest(guest_suite, name, prog, case):
    run = guest_suite(name)
    res = [r for r in run.kselftest.get(prog, []) if r.name == case]
    if not res:
        pytest.fail("kselftest %s: %s: no result (%s)" % (
            prog, case, "program ran" if prog in run.kselftest
            else "program did not run, vm-run exit %d" % run.rc),
            pytrace=False)
    verdict(res[0], "kselftest %s: %s" % (prog, case))


@pytest.mark.parametrize("name, prog", ITEMS["kselftest_all"])
def test_kselftest_all_collected(guest_suite, name, prog):
    """The program printed KTAP results, none without an item."""
    run = guest_suite(name)
    if not run.kselftest.get(prog):
        pytest.fail("kselftest %s: no KTAP results" % prog, pytrace=False)
    listed = caselists.kselftest_cases(prog)
    extra = ["%s: %s" % (r.name, r.status) for r in run.kselftest[prog]
             if r.name not in listed]
    if extra:
        pytest.fail("kselftest %s: cases not in its source's TEST*(): "
                    "%s" % (prog, ", ".join(extra)), pytrace=False)


@pytest.mark.parametrize("name", ITEMS["dmesg"])
def test_dmesg_clean(guest_suite, name):
    bad = pslib.bad_dmesg_lines(guest_suite(name).console)
    if bad:
        pytest.fail("dmesg clean: %s: %s" % (name, bad[0].strip()[:160]),
                    pytrace=False)
