# SPDX-License-Identifier: GPL-2.0
"""napd --check, the preflight of a target host (tools/power/napd/
preflight.c), where it runs for real: on this machine's own kernel, which
has no pseudo-sleep (it must say "not supported" and exit 2, without a
crash), and in the busybox guest with each QEMU NIC, virtio-net and
e1000e (it must find pseudo-sleep, fail nothing, and arm the NIC's
receive vectors as the guest's /proc/interrupts names them).  The guests
boot with vm-run as the host tests do (hosttests.vm_run)."""

import os
import re
import subprocess

import pytest

import pslib
from hosttests import vm_run

ORDER = 3.5
NAPD_DIR = os.path.join(pslib.TOP, "tools", "power", "napd")
VERDICT = re.compile(r"^(ok|warn|fail|n/a)  +(\S.*)$")
NIC_LINE = re.compile(r"^ok +nic eth0: (\S+), driver (\S+), vectors (\S+); "
                      r"napd would arm (\S+): (.*)$")
# The receive vectors' names in /proc/interrupts, per NIC type.
RX_NAME = {"virtio": r"virtio\d+-input\.\d+", "e1000e": r"eth0-rx-\d+"}
DRIVER = {"virtio": "virtio_net", "e1000e": "e1000e"}


def irq_set(text):
    """"24-26,30" as a set of numbers."""
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def parse(out):
    """The verdict lines (verdict, text), the summary line, and any line
    that is neither."""
    lines, summary, other = [], None, []
    for line in out.splitlines():
        m = VERDICT.match(line)
        if m:
            lines.append((m.group(1), m.group(2)))
        elif line.startswith("# ") and " ok, " in line:
            summary = line
        elif line.strip() and not line.startswith("# "):
            other.append(line)
    return lines, summary, other


@pytest.fixture(scope="module")
def napd_bin():
    p = subprocess.run(["make", "-s", "-C", NAPD_DIR, "napd"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode:
        pytest.fail("make napd: %s" % p.stdout.decode(errors="replace")[-600:],
                    pytrace=False)
    return os.path.join(NAPD_DIR, "napd")


def host_has_pseudo():
    try:
        with open("/sys/power/mem_sleep") as f:
            words = f.read().split()
        return "pseudo" in words or "[pseudo]" in words
    except OSError:
        return False


def test_check_on_host_kernel(napd_bin, record_property):
    """napd --check on this machine's kernel: "not supported", exit 2"""
    p = subprocess.run([napd_bin, "--check", "--config", "/dev/null"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.decode(errors="replace")
    err = p.stderr.decode(errors="replace")
    lines, summary, other = parse(out)
    assert p.returncode >= 0, "napd --check died of signal %d:\n%s" % (
        -p.returncode, out[-2000:])
    assert not other, "lines without a verdict: %r" % other[:5]
    assert summary, "no summary line:\n" + out[-2000:]
    if host_has_pseudo():
        assert p.returncode in (0, 1, 2), out
        assert "not supported" not in out, out
        record_property("detail", summary[2:])
        return
    assert p.returncode == 2, "exit %d:\n%s%s" % (p.returncode, out, err)
    assert lines[0][0] == "fail" and \
        lines[0][1].startswith("kernel: pseudo-sleep not supported"), out
    assert summary.endswith("pseudo-sleep not supported by this kernel"), \
        summary
    assert not err, "stderr: " + err
    record_property("detail", "exit 2, " + summary[2:])


# The NIC is up (guest/init) but e1000e's link comes up a moment later:
# wait for the carrier so that the check sees the NIC as a server has it.
GUEST_CMD = ("while [ \"$(cat /sys/class/net/eth0/carrier 2>/dev/null)\" "
             "!= 1 ]; do sleep 0.2; done; "
             "napd --check --wake-dev eth0; echo \"CHECK-RC $?\"; "
             "echo INTERRUPTS; cat /proc/interrupts")


@pytest.mark.parametrize("nic", ["virtio", "e1000e"])
def test_check_in_guest(nic, record_property):
    """napd --check in the guest with NIC type NIC: pseudo-sleep found,
    no verdict fails, the receive vectors armed"""
    log = "/tmp/ps-preflight-%s-console.log" % nic
    rc, out, err = vm_run(["--nic", nic, "--log", log, "--", "sh", "-c",
                           GUEST_CMD])
    console = open(log, errors="replace").read() \
        if os.path.exists(log) else ""
    assert rc == 0, "vm-run exit %d: %s\n%s" % (rc, err.strip()[-600:],
                                                out[-2000:])
    check, _, interrupts = out.partition("INTERRUPTS\n")
    m = re.search(r"^CHECK-RC (\d+)$", check, re.M)
    assert m, "no exit status of napd --check:\n" + check[-2000:]
    lines, summary, other = parse(check.replace(m.group(0), ""))
    assert not other, "lines without a verdict: %r" % other[:5]
    assert summary, "no summary line:\n" + check[-2000:]
    fails = [t for v, t in lines if v == "fail"]
    assert not fails, "failed: %s" % "; ".join(fails)
    # Warnings depend on the moment (a busy interrupt): 0 or 1.
    assert m.group(1) in ("0", "1"), "exit %s:\n%s" % (m.group(1), check)
    assert any(v == "ok" and t.startswith(
        "kernel: /sys/power/mem_sleep offers pseudo") for v, t in lines), \
        check

    nic_lines = [NIC_LINE.match("%-4s  %s" % (v, t)) for v, t in lines]
    nic_lines = [n for n in nic_lines if n]
    assert len(nic_lines) == 1, "no single 'ok nic eth0' line:\n" + check
    dev, driver, vectors, armed, why = nic_lines[0].groups()
    assert driver == DRIVER[nic], nic_lines[0].group(0)
    assert irq_set(armed) <= irq_set(vectors), nic_lines[0].group(0)
    rx = set()
    for line in interrupts.splitlines():
        im = re.match(r"^\s*(\d+):.*\s(%s)\s*$" % RX_NAME[nic], line)
        if im:
            rx.add(int(im.group(1)))
    assert rx and irq_set(armed) == rx, \
        "armed %s, receive vectors in /proc/interrupts %s" % (armed,
                                                              sorted(rx))
    name = os.path.basename(dev)
    assert any(v == "ok" and t.startswith("device keep") and
               "/%s (kept NIC (wake-dev))" % name in t
               for v, t in lines), "the NIC is not kept:\n" + check
    bad = pslib.bad_dmesg_lines(console)
    assert not bad, "dmesg: " + bad[0].strip()[:160]
    record_property("detail", "%s: %s, armed %s of %s; %s" % (
        nic, driver, armed, vectors, summary[2:]))
