# SPDX-License-Identifier: GPL-2.0
"""The first guest: `vm-run -- true` boots (fail fast: when it does not,
conftest.py stops the session, as nothing else that boots can pass)."""

import pytest

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
