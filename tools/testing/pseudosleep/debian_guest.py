# SPDX-License-Identifier: GPL-2.0
"""The napping Debian 12 guest (make rootfs) booted once for
tests/test_debian.py: vm-run --rootfs on the e1000e and a bridge in a
private namespace, with guest/debian-agent.py as the command, so that the
host can run shell commands in it (run()) and its clients reach it
(netns_cmd()).  napd, enabled in the image, naps it whenever it is idle;
a connection to the agent, Apache or memcached wakes it."""

import importlib.util
import os
import shutil
import socket
import subprocess
import time

import hosttests
import netns
import pslib

AGENT = os.path.join(pslib.HERE, "guest", "debian-agent.py")


def _load_agent():
    """The agent's own module: its protocol is used from here too."""
    spec = importlib.util.spec_from_file_location("debian_agent", AGENT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


agent = _load_agent()
AGENT_PORT = agent.PORT
recv_all = agent.recv_all

# DEBIAN_KERNEL=1 (make rootfs DEBIAN_KERNEL=1): the image booted on
# Debian's own kernel and initrd, to check the image apart from ours.
# That kernel has no pseudo mode: napd is masked and the guest stays awake.
OWN_KERNEL = hosttests.DEBIAN_OWN_KERNEL


def unusable():
    """None when the Debian guest can boot here, else why not."""
    ok, why = netns.bridge_usable()
    if not ok:
        return "no bridged network: " + why
    if OWN_KERNEL:
        return None
    missing = hosttests.debian_kernel_missing()
    if missing:
        return "the kernel lacks %d options of configs/debian-guest.config" \
            " (%s)" % (len(missing), ", ".join(missing[:4]))
    return None


def spaced(n, gap, fn, after=None):
    """fn(i) n times, each after gap s of quiet; fn returns None when its
    request was answered, else why not.  after(i), if given, runs right
    after each request, untimed.  One dict per request: i, s (seconds fn
    took), why, after (after's value)."""
    rows = []
    for i in range(n):
        time.sleep(gap)
        t0 = time.monotonic()
        why = fn(i)
        row = {"i": i, "s": time.monotonic() - t0, "why": why}
        if after:
            row["after"] = after(i)
        rows.append(row)
    return rows


def image():
    """(rootfs, None) when the Debian guest can boot here, else
    (None, why not)."""
    why = unusable()
    if why:
        return None, why
    rootfs, why = hosttests.debian_rootfs()
    return (rootfs, None) if rootfs else (None, "no Debian image: " + why)

# HAProxy as a load balancer runs it in front of the guest's Apache: HTTP
# keep-alive to the backend (idle server connections kept and reused by
# every client) and a TCP health check every 2 s.  It runs on the host
# side, in the namespace of the guest's bridge (tests/test_debian.py and
# bench --only debian).
HAPROXY_CFG = """\
global
    stats socket %(dir)s/stats.sock level admin
defaults
    mode http
    option http-keep-alive
    timeout connect 10s
    timeout client 60s
    timeout server 60s
frontend web
    bind 127.0.0.1:8080
    default_backend guest
backend guest
    http-reuse always
    server debian %(guest)s:80 check inter 2s
"""
HAPROXY_URL = "http://127.0.0.1:8080/"


def haproxy_start(guest, where):
    """HAProxy in directory where (its configuration and stats socket)."""
    with open(os.path.join(where, "haproxy.cfg"), "w") as f:
        f.write(HAPROXY_CFG % {"dir": where, "guest": netns.GUEST_IP})
    return subprocess.Popen(netns.command(guest.g.netns, [
        "haproxy", "-db", "-f", os.path.join(where, "haproxy.cfg")]),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def haproxy_server(where):
    """The backend server's row of HAProxy's "show stat" as a dict."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(os.path.join(where, "stats.sock"))
    s.sendall(b"show stat\n")
    out = recv_all(s)
    s.close()
    lines = out.decode().splitlines()
    keys = lines[0].lstrip("# ").split(",")
    for l in lines[1:]:
        row = dict(zip(keys, l.split(",")))
        if row.get("svname") == "debian":
            return row
    return {}


def haproxy_up(lb, where, timeout=60):
    """The backend's row once HAProxy's checks see it UP, else None."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and lb.poll() is None:
        time.sleep(1)
        row = haproxy_server(where)
        if row.get("status", "").startswith("UP"):
            return row
    return None


# The harness's own channels to the guest (the virtio console that carries
# vm-run's output, the two 9p shares), which a real server has not, kept
# running through naps (power/nosleep) as the test initramfs keeps them:
# bench --only debian then measures the server's devices, not these.
KEEP_HARNESS = "sh /mnt/add/keep-harness.sh"
KEEP_HARNESS_SH = os.path.join(pslib.HERE, "guest", "keep-harness.sh")

# The PM core's per-device callbacks and its suspend_resume steps, in a
# trace instance of their own; lean_naps.parse_trace() reads them.
TRACE = "/sys/kernel/tracing/instances/psbench"
TRACE_ON = """
[ -d /sys/kernel/tracing/instances ] || mount -t tracefs tracefs /sys/kernel/tracing
mkdir -p %(i)s
echo 8192 > %(i)s/buffer_size_kb
for e in device_pm_callback_start device_pm_callback_end suspend_resume; do
	echo 1 > %(i)s/events/power/$e/enable
done
echo > %(i)s/trace
""" % {"i": TRACE}
TRACE_OFF = "echo 0 > %(i)s/events/enable && rmdir %(i)s" % {"i": TRACE}


class DebianGuest:
    """One boot of the image.  start() returns once the agent answers."""

    def __init__(self, rootfs, timeout=1800):
        self.rootfs = rootfs
        self.timeout = timeout
        self.g = None
        self.boot_s = None
        # Whether napd runs (False on Debian's own kernel).
        self.napping = not OWN_KERNEL

    def start(self, boot_timeout=600):
        """Boot; returns None or why the guest is not up.  While it boots
        the host sends a GET to Apache every 5 s, so that a nap taken
        before the agent listens ends (only the NIC ends a nap)."""
        t0 = time.monotonic()
        extra = ["--rootfs", self.rootfs, "--mem", "2G"]
        if OWN_KERNEL:
            extra += ["--append", "systemd.mask=napd.service"]
        self.g = pslib.Guest(
            "exec python3 /mnt/add/debian-agent.py", nic="e1000e",
            net="bridge", timeout=self.timeout, extra=extra)
        shutil.copy(AGENT, self.g.share)
        shutil.copy(KEEP_HARNESS_SH, self.g.share)
        end = t0 + boot_timeout
        while time.monotonic() < end:
            if self.g.wait_line(r"^AGENT READY", 5):
                return self.reachable(t0, end)
            if self.g.proc.poll() is not None:
                break
            self.http_get(timeout=2)
        tail = [l for l in self.g.console().splitlines() if l.strip()][-3:]
        return "no agent after %.0f s (vm-run %s): %s" % (
            time.monotonic() - t0, self.g.proc.poll(),
            " | ".join(tail)[-300:])

    def reachable(self, t0, end):
        """None once the agent answers over the bridge, else why not.  The
        agent starts after multi-user.target, which waits for napd and so
        for network-online.target; still, the first request may meet a
        nap (up to max-nap for the agent's port, which napd does not
        watch) or a link that went down again."""
        why = "?"
        while time.monotonic() < end:
            try:
                rc, out = self.run("true", timeout=10)
                if rc == 0:
                    self.boot_s = time.monotonic() - t0
                    # Before any nap of a test: a virtio console port
                    # suspended by a nap no longer carries the command's
                    # end, and the power-off then waits for stop()'s
                    # timeout.
                    self.out(KEEP_HARNESS)
                    return None
                why = "exit %d: %s" % (rc, out[-200:])
            except OSError as e:
                why = str(e)
            if self.g.proc.poll() is not None:
                break
            time.sleep(1)
        return "the agent printed AGENT READY but never answered over " \
            "the bridge: " + why

    def run(self, cmd, timeout=120):
        """(rc, output) of `sh -c cmd` in the guest, through the agent.
        The connection wakes a napping guest."""
        with netns.inside(self.g.netns):
            s = socket.create_connection((netns.GUEST_IP, AGENT_PORT),
                                         timeout=timeout)
        with s:
            s.sendall(cmd.encode())
            s.shutdown(socket.SHUT_WR)
            out = recv_all(s).decode(errors="replace")
        res = agent.split_status(out)
        if res is None:
            raise OSError("agent: no status for %r: %r" % (cmd, out[-200:]))
        return res

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

    def stats(self):
        """Every /sys/power/pseudosleep/ value, name -> int, in one
        connection."""
        # -s and || true: arm is write-only.
        out = self.out("cd /sys/power/pseudosleep && grep -rs . . || true")
        res = {}
        for line in out.splitlines():
            k, _, v = line.partition(":")
            if v.strip().lstrip("-").isdigit():
                res[k.lstrip("./")] = int(v)
        return res

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

    def memcached(self, request, timeout=10.0):
        """(answer or None, seconds) of one request (bytes, CRLF-ended
        lines) to the guest's memcached on a new connection; the answer
        is read to its END or STORED line."""
        t0 = time.monotonic()
        try:
            with netns.inside(self.g.netns):
                s = socket.create_connection((netns.GUEST_IP, 11211),
                                             timeout=timeout)
            with s:
                s.sendall(request)
                buf = b""
                while not buf.endswith((b"END\r\n", b"STORED\r\n",
                                        b"ERROR\r\n")):
                    data = s.recv(65536)
                    if not data:
                        break
                    buf += data
        except OSError:
            return None, time.monotonic() - t0
        return buf, time.monotonic() - t0

    def memcached_get(self, key, timeout=10.0):
        """(value or None, seconds) of a get of key."""
        ans, took = self.memcached(b"get %s\r\n" % key.encode(), timeout)
        if not ans or not ans.startswith(b"VALUE "):
            return None, took
        return ans.split(b"\r\n", 2)[1], took

    def memcached_set(self, key, value, timeout=10.0):
        """True once memcached stored value (bytes) under key."""
        ans, _ = self.memcached(b"set %s 0 0 %d\r\n%s\r\n" % (
            key.encode(), len(value), value), timeout)
        return ans == b"STORED\r\n"

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
                self.run(agent.QUIT, timeout=30)
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
