# SPDX-License-Identifier: GPL-2.0
"""The napping Debian 12 guest (make rootfs) booted once for
tests/test_debian.py: vm-run --rootfs on the e1000e and a bridge in a
private namespace, with guest/debian-agent.py as the command, so that the
host can run shell commands in it (run()) and its clients reach it
(netns_cmd()).  napd, enabled in the image, naps it whenever it is idle;
a connection to the agent, Apache or memcached wakes it."""

import os
import re
import shutil
import socket
import subprocess
import time

import hosttests
import netns
import pslib

AGENT = os.path.join(pslib.HERE, "guest", "debian-agent.py")
AGENT_PORT = 7777


def unusable():
    """None when the Debian guest can boot here, else why not."""
    ok, why = netns.bridge_usable()
    if not ok:
        return "no bridged network: " + why
    if hosttests.DEBIAN_OWN_KERNEL:
        return "DEBIAN_KERNEL=1: Debian's kernel has no pseudo mode"
    missing = hosttests.debian_kernel_missing()
    if missing:
        return "the kernel lacks %d options of configs/debian-guest.config" \
            " (%s)" % (len(missing), ", ".join(missing[:4]))
    return None


class DebianGuest:
    """One boot of the image.  start() returns once the agent answers."""

    def __init__(self, rootfs, timeout=1800):
        self.rootfs = rootfs
        self.timeout = timeout
        self.g = None
        self.boot_s = None

    def start(self, boot_timeout=600):
        """Boot; returns None or why the guest is not up.  While it boots
        the host sends a GET to Apache every 5 s, so that a nap taken
        before the agent listens ends (only the NIC ends a nap)."""
        t0 = time.monotonic()
        self.g = pslib.Guest(
            "exec python3 /mnt/add/debian-agent.py", nic="e1000e",
            net="bridge", timeout=self.timeout,
            extra=["--rootfs", self.rootfs, "--mem", "2G"])
        shutil.copy(AGENT, self.g.share)
        end = t0 + boot_timeout
        while time.monotonic() < end:
            if self.g.wait_line(r"^AGENT READY", 5):
                self.boot_s = time.monotonic() - t0
                return None
            if self.g.proc.poll() is not None:
                break
            self.http_get(timeout=2)
        tail = [l for l in self.g.console().splitlines() if l.strip()][-3:]
        return "no agent after %.0f s (vm-run %s): %s" % (
            time.monotonic() - t0, self.g.proc.poll(),
            " | ".join(tail)[-300:])

    def run(self, cmd, timeout=120):
        """(rc, output) of `sh -c cmd` in the guest, through the agent.
        The connection wakes a napping guest."""
        with netns.inside(self.g.netns):
            s = socket.create_connection((netns.GUEST_IP, AGENT_PORT),
                                         timeout=timeout)
        with s:
            s.sendall(cmd.encode())
            s.shutdown(socket.SHUT_WR)
            chunks = []
            while True:
                data = s.recv(65536)
                if not data:
                    break
                chunks.append(data)
        out = b"".join(chunks).decode(errors="replace")
        m = re.search(r"\n@@rc=(\d+)\n$", out)
        if not m:
            raise OSError("agent: no status for %r: %r" % (cmd, out[-200:]))
        return int(m.group(1)), out[:m.start()]

    def out(self, cmd, timeout=120):
        """Output of cmd; an exit status other than 0 raises OSError."""
        rc, out = self.run(cmd, timeout)
        if rc:
            raise OSError("guest: %r exited %d: %s" % (cmd, rc,
                                                       out.strip()[-300:]))
        return out

    def stat(self, name):
        """/sys/power/pseudosleep/NAME as an int."""
        return int(self.out("cat /sys/power/pseudosleep/" + name))

    def netns_cmd(self, argv, timeout=60):
        """argv run on the host in the guest's namespace: (rc, output)."""
        try:
            p = subprocess.run(netns.command(self.g.netns, argv),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=timeout)
        except subprocess.TimeoutExpired:
            return 124, "timeout after %d s" % timeout
        return p.returncode, p.stdout.decode(errors="replace")

    def http_get(self, path="/", timeout=10.0):
        """(body or None, seconds) of a GET to the guest's Apache."""
        with netns.inside(self.g.netns):
            return pslib.http_get(80, path=path, timeout=timeout,
                                  host=netns.GUEST_IP)

    def console(self):
        return self.g.console() if self.g else ""

    def stop(self):
        """Power the guest off; returns vm-run's exit status."""
        if not self.g:
            return None
        if self.g.proc.poll() is None:
            # napd first: the guest's power-off must not wait in a nap.
            try:
                self.run("systemctl stop napd", timeout=60)
                self.run("@@quit", timeout=30)
            except OSError:
                pass
        try:
            return self.g.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            # SIGTERM: vm-run stops QEMU and removes its namespace.
            self.g.proc.terminate()
            return self.g.finish(timeout=60)

    def cleanup(self):
        if self.g:
            self.g.cleanup()
