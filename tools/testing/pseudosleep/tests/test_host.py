# SPDX-License-Identifier: GPL-2.0
"""HOST_TESTS (hosttests.py): one item per entry, in the list's order, each
followed by "dmesg clean: NAME", the check of the guest console it
returns.  A test returns (status, detail, console); "skipped" is a pytest
skip with its detail as the reason.  Add a host test to HOST_TESTS, not
here."""

import pytest

import pslib
from hosttests import HOST_TESTS

ORDER = 4
# The long ones: make test runs them, -m "not slow" leaves them out.
SLOW = ("stress:", "nap-profile:")


def host_items():
    run, dmesg = [], []
    for i, (name, fn) in enumerate(HOST_TESTS):
        marks = [pytest.mark.seq(2 * i)]
        if name.startswith(SLOW):
            marks.append(pytest.mark.slow)
        run.append(pytest.param(name, fn, id=name, marks=marks))
        dmesg.append(pytest.param(name, fn, id="dmesg clean: " + name,
                                  marks=[pytest.mark.seq(2 * i + 1)]))
    return run, dmesg


RUN, DMESG = host_items()


@pytest.fixture(scope="session")
def host_result():
    """host_result(name, fn): its (status, detail, console), run once;
    an exception is kept and raised again by the test's item."""
    done = {}

    def get(name, fn):
        if name not in done:
            try:
                done[name] = fn()
            except Exception as e:  # a broken test is a failed test
                done[name] = e
        return done[name]
    return get


@pytest.mark.parametrize("name, fn", RUN)
def test_host(host_result, record_property, name, fn):
    res = host_result(name, fn)
    if isinstance(res, Exception):
        raise res
    status, detail, _ = res
    if status == "skipped":
        pytest.skip(detail)
    if status != "passed":
        pytest.fail("%s: %s" % (name, detail), pytrace=False)
    record_property("detail", detail)


@pytest.mark.parametrize("name, fn", DMESG)
def test_dmesg_clean(host_result, name, fn):
    res = host_result(name, fn)
    if isinstance(res, Exception) or res[2] is None:
        pytest.skip("no guest console to check")
    bad = pslib.bad_dmesg_lines(res[2])
    if bad:
        pytest.fail("dmesg clean: %s: %s" % (name, bad[0].strip()[:160]),
                    pytrace=False)
