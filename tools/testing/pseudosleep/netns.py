# SPDX-License-Identifier: GPL-2.0
"""The harness's private L2 network: a network namespace holding a bridge
(br0, 10.0.2.2/24) and the tap device QEMU's NIC is plugged into.  The
guest keeps its usual address, 10.0.2.15.  Host-side clients reach it from
inside the namespace, so no traffic leaves it and no QEMU proxy answers
for the guest: TCP, ARP and ICMP are the guest kernel's own.

Needs root, /dev/net/tun and iproute2; bridge_usable() says why not.
"""

import contextlib
import ctypes
import os
import shutil
import subprocess
import threading

CLONE_NEWNET = 0x40000000
HOST_IP = "10.0.2.2"
GUEST_IP = "10.0.2.15"
GUEST_MAC = "52:54:00:12:34:56"
BRIDGE = "br0"
TAP = "tap0"
# A second NIC (vm-run --nics 2): its tap, on the same bridge, and MAC.
TAP1 = "tap1"
GUEST_MAC1 = "52:54:00:12:34:57"

_libc = ctypes.CDLL(None, use_errno=True)


def bridge_usable():
    """(True, "") or (False, why)."""
    if os.geteuid() != 0:
        return False, "needs root"
    if not os.access("/dev/net/tun", os.R_OK | os.W_OK):
        return False, "needs /dev/net/tun"
    if not shutil.which("ip"):
        return False, "needs iproute2 (ip)"
    return True, ""


def _ip(*args):
    p = subprocess.run(["ip"] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if p.returncode:
        raise OSError("ip %s: %s" % (" ".join(args),
                                     p.stdout.decode(errors="replace").strip()))


def create(name, taps=1):
    """The namespace `name` with br0 and tap0 (and tap1 with taps=2), all
    up."""
    _ip("netns", "add", name)
    try:
        n = ["-n", name]
        # The host side sends nothing of its own (no IPv6 DAD or MLD):
        # every frame the guest gets comes from a test.  /proc/sys/net
        # shows the namespace of the thread that opens it.
        with inside(name):
            for conf in ("default", "all"):
                path = "/proc/sys/net/ipv6/conf/%s/disable_ipv6" % conf
                if os.path.exists(path):
                    with open(path, "w") as f:
                        f.write("1\n")
        _ip(*n, "link", "set", "lo", "up")
        _ip(*n, "link", "add", BRIDGE, "type", "bridge")
        # No STP and no forwarding delay: the tap forwards as soon as QEMU
        # opens it.
        _ip(*n, "link", "set", BRIDGE, "type", "bridge", "stp_state", "0",
            "forward_delay", "0")
        _ip(*n, "addr", "add", HOST_IP + "/24", "dev", BRIDGE)
        for tap in (TAP, TAP1)[:taps]:
            _ip(*n, "tuntap", "add", "dev", tap, "mode", "tap")
            _ip(*n, "link", "set", tap, "master", BRIDGE)
            _ip(*n, "link", "set", tap, "up")
        _ip(*n, "link", "set", BRIDGE, "up")
    except OSError:
        remove(name)
        raise


def remove(name):
    """Delete the namespace; its bridge and tap go with it."""
    subprocess.run(["ip", "netns", "del", name], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def exists(name):
    return os.path.exists("/var/run/netns/" + name)


def ready(name):
    """Whether `name` can be entered now.  `ip netns add` creates the file
    before it bind-mounts the namespace on it, and `ip netns del` unmounts
    it before the unlink: in between, the file is there and setns() fails
    with EINVAL.  A mounted one is on nsfs, as this thread's own is."""
    try:
        st = os.stat("/var/run/netns/" + name)
    except FileNotFoundError:
        return False
    return st.st_dev == os.stat("/proc/thread-self/ns/net").st_dev


class SetnsError(OSError):
    """Entering a namespace failed (it is being created or deleted)."""


@contextlib.contextmanager
def inside(name):
    """Run the body with this thread in namespace `name`: sockets it
    creates belong to that namespace for their whole life.  Other threads
    are not affected."""
    tid = threading.get_native_id()
    old = os.open("/proc/self/task/%d/ns/net" % tid, os.O_RDONLY)
    try:
        new = os.open("/var/run/netns/" + name, os.O_RDONLY)
    except FileNotFoundError as e:
        os.close(old)
        raise SetnsError(e.errno, "setns %s: %s" % (name, e.strerror))
    try:
        if _libc.setns(new, CLONE_NEWNET):
            e = ctypes.get_errno()
            raise SetnsError(e, "setns %s: %s" % (name, os.strerror(e)))
        try:
            yield
        finally:
            if _libc.setns(old, CLONE_NEWNET):
                e = ctypes.get_errno()
                raise OSError(e, "setns back: %s" % os.strerror(e))
    finally:
        os.close(old)
        os.close(new)


def command(name, argv):
    """argv run inside namespace `name` (for ab, ping, iperf3, ...)."""
    return ["ip", "netns", "exec", name] + list(argv)
