# SPDX-License-Identifier: GPL-2.0
"""pytest set-up for the pseudosleep tests: the harness modules on the
path, the order of items (the KTAP parser's own tests, the boot check,
the two guest suites, napd's unit tests, then HOST_TESTS in their order,
each followed by its "dmesg clean" item), a session that stops when the
guest does not boot, and each check's detail on its PASSED line."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if HERE not in sys.path:
    sys.path.insert(0, HERE)


def pytest_addoption(parser):
    g = parser.getgroup("pseudosleep")
    g.addoption("--logs", default=os.environ.get("PS_TEST_LOGS"),
                help="keep the guest suites' console logs in this "
                "directory (default: $PS_TEST_LOGS)")
    g.addoption("--suite-timeout", type=int, default=600,
                help="vm-run --timeout of a guest suite's boot (600 s)")


@pytest.fixture(scope="module")
def debian_vm():
    """The Debian guest booted for one test module (a DebianGuest), or the
    module is skipped when there is no image; stopped after it."""
    import debian_guest
    rootfs, why = debian_guest.image()
    if not rootfs:
        pytest.skip(why)
    d = debian_guest.DebianGuest(rootfs)
    try:
        why = d.start()
        if why:
            pytest.fail("debian: the guest did not come up: " + why,
                        pytrace=False)
        yield d
    finally:
        d.stop()
        d.cleanup()


def pytest_collection_modifyitems(session, config, items):
    """Modules by their ORDER, items within one by their seq(n) mark."""
    pos = {id(item): i for i, item in enumerate(items)}

    def key(item):
        seq = item.get_closest_marker("seq")
        return (getattr(item.module, "ORDER", 50),
                seq.args[0] if seq else 0, pos[id(item)])
    items.sort(key=key)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and item.get_closest_marker("boot_check"):
        # Nothing that boots a guest can pass: stop here, as run-tests
        # did, rather than spend an hour on timeouts.
        item.session.shouldstop = "the guest does not boot"


def pytest_report_teststatus(report, config):
    """PASSED (detail): what the check measured, as run-tests printed it."""
    if report.when == "call" and report.passed:
        detail = dict(report.user_properties).get("detail")
        if detail:
            return "passed", ".", ("PASSED (%s)" % detail, {"green": True})
    return None
