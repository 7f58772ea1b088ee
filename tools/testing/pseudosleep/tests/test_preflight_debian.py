# SPDX-License-Identifier: GPL-2.0
"""napd --check on a server-shaped host: one boot of the Debian 12 guest
(make rootfs: root on NVMe, AHCI, xHCI, e1000e, systemd, napd enabled from
its package), booted with debian_guest.DebianGuest as test_debian.py does.
The napd of this tree is copied in through the guest's share (the image's
package may predate --check), run from the guest's /tmp, and reads the
image's /etc/napd.conf.  It
must fail nothing, arm the e1000e's receive vector, keep the NVMe and USB
host controllers (and the AHCI, with libata in the kernel) by the device
policy with their runtime PM and ASPM state, and check systemd's services
with WatchdogSec=."""

import os
import re
import shutil
import subprocess

import pytest

import hosttests
import pslib

ORDER = 5.5
# A second boot of the Debian guest: make test runs it, -m "not slow" not.
pytestmark = pytest.mark.slow
# DEBIAN_KERNEL=1: the image on Debian's own kernel, which has no
# pseudo-sleep: the check must say so (exit 2) and still list the rest.
OWN_KERNEL = hosttests.DEBIAN_OWN_KERNEL
NAPD_DIR = os.path.join(pslib.TOP, "tools", "power", "napd")
VERDICT = re.compile(r"^(ok|warn|fail|n/a)  +(\S.*)$")


@pytest.fixture(scope="module")
def check(debian_vm):
    """(exit status, verdict lines, output) of napd --check in the guest,
    or the module is skipped."""
    p = subprocess.run(["make", "-s", "-C", NAPD_DIR, "napd"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode:
        pytest.fail("make napd: " + p.stdout.decode(errors="replace")[-600:],
                    pytrace=False)
    d = debian_vm
    shutil.copy(os.path.join(NAPD_DIR, "napd"),
                os.path.join(d.g.share, "napd"))
    # Run from the guest's disk, not the 9p share, with the guest's
    # napd paused: a task reading over 9p cannot be frozen, and each
    # nap napd tries meanwhile waits out the freezer's timeout (seen:
    # no answer in 300 s, "1 tasks refusing to freeze" every 5 s).
    # The check reads the host; it does not need the naps.
    rc, out = d.run("napctl pause 10min && "
                    "cp /mnt/add/napd /tmp/napd-check && "
                    "/tmp/napd-check --check; rc=$?; napctl resume; "
                    "exit $rc", timeout=300)
    lines = [VERDICT.match(l) for l in out.splitlines()]
    return rc, [(m.group(1), m.group(2)) for m in lines if m], out


def test_check_debian_no_failure(check, record_property):
    """napd --check in the Debian guest: no verdict fails, exit 0 or 1
    (on Debian's own kernel: "not supported", exit 2)"""
    rc, lines, out = check
    summary = [l for l in out.splitlines() if l.startswith("# ") and
               " ok, " in l]
    assert summary, "no summary line:\n" + out[-2000:]
    if OWN_KERNEL:
        assert rc == 2 and lines and lines[0][0] == "fail" and \
            lines[0][1].startswith("kernel: pseudo-sleep not supported"), \
            "exit %d:\n%s" % (rc, out[-3000:])
        record_property("detail", "Debian's kernel: exit 2, " +
                        summary[-1][2:])
        return
    fails = [t for v, t in lines if v == "fail"]
    assert not fails, "failed: " + "; ".join(fails)
    assert rc in (0, 1), "exit %d:\n%s" % (rc, out[-3000:])
    assert any(v == "ok" and t.startswith(
        "kernel: /sys/power/mem_sleep offers pseudo") for v, t in lines), out
    record_property("detail", "exit %d, %s" % (rc, summary[-1][2:]))


def test_check_debian_nic(check, record_property):
    """napd --check in the Debian guest: the e1000e's receive vector is
    the one to arm, and the NIC is kept"""
    rc, lines, out = check
    nic = [t for v, t in lines if v == "ok" and t.startswith("nic ") and
           "driver e1000e" in t and "napd would arm" in t]
    assert len(nic) == 1, "no e1000e wake NIC line:\n" + out[-3000:]
    assert "receive vectors only" in nic[0], nic[0]
    assert any(t.startswith("device keep") and "(kept NIC (wake-dev))" in t
               for v, t in lines), out[-3000:]
    record_property("detail", nic[0])


def test_check_debian_devices(check, record_property):
    """napd --check in the Debian guest: NVMe and USB host controllers
    (and SATA, with libata) kept by the device policy, with runtime PM and
    ASPM"""
    rc, lines, out = check
    keep = [t for v, t in lines if t.startswith("device keep")]
    rules = ["class rule: NVMe controller", "class rule: USB host controller"]
    # q35's AHCI has a driver only with libata in the kernel.
    if pslib.kernel_config("SATA_AHCI") == "y":
        rules.append("class rule: SATA controller")
    for rule in rules:
        assert any(rule in t for t in keep), "%s not kept:\n%s" % (
            rule, "\n".join(keep))
    assert all(re.search(r": runtime PM \S+, \S+; ASPM ", t) for t in keep), \
        "\n".join(keep)
    assert any(v == ("n/a" if OWN_KERNEL else "ok") and
               t.startswith("devices: a nap would keep")
               for v, t in lines), out[-3000:]
    record_property("detail", "%d kept, %d warn" % (
        len(keep), sum(1 for v, t in lines if v == "warn" and
                       t.startswith("device keep"))))


def test_check_debian_watchdogs(check, record_property):
    """napd --check in the Debian guest: systemd's services with
    WatchdogSec= are checked against max-nap"""
    rc, lines, out = check
    wd = [t for v, t in lines if v == "ok" and
          re.match(r"watchdog: [1-9]\d* services? with WatchdogSec=", t)]
    assert wd, "no services with WatchdogSec= seen:\n" + out[-3000:]
    record_property("detail", wd[0])
