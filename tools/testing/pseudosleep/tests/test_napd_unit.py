# SPDX-License-Identifier: GPL-2.0
"""napd's unit tests (make -C tools/power/napd check, TAP 13 on the host):
one item per entry of test_napd.c's tests[] table, the make run once per
session."""

import os
import subprocess

import pytest

import caselists
import ktap
import pslib

ORDER = 3
CASES = caselists.napd_unit_cases()


@pytest.fixture(scope="session")
def napd_check():
    """(make's exit status, its output lines, results by name)."""
    p = subprocess.run(["make", "-s", "-C",
                        os.path.join(pslib.TOP, "tools/power/napd"), "check"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode(errors="replace").splitlines()
    return p.returncode, out, {r.name: r for r in ktap.parse(out).results}


@pytest.mark.parametrize("case", CASES, ids=["napd unit: " + c
                                             for c in CASES])
def test_napd_unit(napd_check, case):
    rc, out, res = napd_check
    r = res.get(case)
    if not r:
        pytest.fail("napd unit %s: no result (make check exit %d): %s" % (
            case, rc, " | ".join(out[-5:])[-600:]), pytrace=False)
    if r.status == "skipped":
        pytest.skip("napd unit %s: %s" % (case, r.reason))
    # A failure carries its own diagnostics into CI's log.
    if r.status != "passed":
        pytest.fail("napd unit %s: not ok\n%s" % (
            case, "\n".join(r.diag)[-600:]), pytrace=False)


def test_napd_unit_all_collected(napd_check):
    """napd unit: make check exits 0 and reports no unlisted test."""
    rc, out, res = napd_check
    if not res:
        pytest.fail("napd unit: no results: " +
                    " | ".join(out[-5:])[-600:], pytrace=False)
    extra = [n for n in res if n not in CASES]
    if extra:
        pytest.fail("napd unit tests not in test_napd.c's tests[]: " +
                    ", ".join(extra), pytrace=False)
    if rc:
        pytest.fail("napd unit: make check exit status %d" % rc,
                    pytrace=False)
