# SPDX-License-Identifier: GPL-2.0
"""Host-side helpers shared by run-tests, demo and bench: a guest started
with vm-run in the background, read line by line, plus HTTP probing and
console-log checks."""

import itertools
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
VM_RUN = os.path.join(HERE, "vm-run")
TOP = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
# The build directory vm-run boots from (make's BUILD_DIR).
BUILD = os.environ.get("BUILD_DIR", os.path.join(TOP, "build"))

# Lines of a guest console that mean the kernel complained.
BAD_DMESG = re.compile(
    r"WARNING:|BUG:|Oops|general protection fault|Kernel panic|"
    r"possible circular locking|possible recursive locking|"
    r"inconsistent lock state|suspicious RCU usage|DEBUG_LOCKS_WARN_ON|"
    r"turning off the locking correctness validator|"
    r"rcu: INFO|rcu_.*self-detected stall|soft lockup|hard LOCKUP|"
    r"blocked for more than|UBSAN|KASAN|Invalid wait context|"
    r"sleeping function called from invalid context|Call Trace:")


def kernel_config(option):
    """CONFIG_<option>'s value in the kernel vm-run boots (BUILD_DIR's
    .config), or None if it is not set or there is no build."""
    try:
        with open(os.path.join(BUILD, "obj", ".config")) as f:
            for line in f:
                if line.startswith("CONFIG_%s=" % option):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


_GUESTS = itertools.count()


def bad_dmesg_lines(log_text):
    return [l for l in log_text.splitlines() if BAD_DMESG.search(l)]


class Guest:
    """A guest running one command under vm-run in the background.

    The host side talks to it through a shared directory (/mnt/add in the
    guest) and reads its output line by line."""

    def __init__(self, command, fwd=(), append="", smp=2, nic="virtio",
                 timeout=300, qmp=False, extra=(), net="user"):
        self.share = tempfile.mkdtemp(prefix="ps-share.")
        os.chmod(self.share, 0o777)
        self.log = os.path.join(self.share, "console.log")
        self.qmp_path = os.path.join(self.share, "qmp.sock") if qmp else None
        args = [VM_RUN, "--quiet", "--smp", str(smp), "--nic", nic,
                "--timeout", str(timeout), "--add", self.share,
                "--log", self.log]
        for f in fwd:
            args += ["--fwd", f]
        # --net bridge: the guest is netns.GUEST_IP inside self.netns.
        self.netns = None
        if net == "bridge":
            self.netns = "ps-%d-%d" % (os.getpid(), next(_GUESTS))
            args += ["--net", "bridge", "--netns", self.netns]
        if append:
            args += ["--append", append]
        if self.qmp_path:
            args += ["--qmp", self.qmp_path]
        args += list(extra)
        args += ["--", "sh", "-c", command]
        self.lines = queue.Queue()
        self.output = []
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\r\n")
            self.output.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def wait_line(self, pattern, timeout=120, on_line=None):
        """Next output line matching regex pattern, or None.  on_line, if
        given, sees every line read on the way."""
        rx = re.compile(pattern)
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return None
            if line is None:
                return None
            if on_line:
                on_line(line)
            m = rx.search(line)
            if m:
                return m

    def signal(self, name):
        """Create /mnt/add/NAME in the guest (the guest polls for it)."""
        open(os.path.join(self.share, name), "w").close()

    def finish(self, timeout=300):
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.reader.join(timeout=5)
        return rc

    def console(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def close(self):
        """Wait for the guest to end and clean up: (exit status, console)."""
        rc = self.finish()
        console = self.console()
        self.cleanup()
        return rc, console

    def cleanup(self, keep_log_as=None):
        if keep_log_as:
            os.makedirs(os.path.dirname(keep_log_as), exist_ok=True)
            shutil.copy(self.log, keep_log_as)
        shutil.rmtree(self.share, ignore_errors=True)


def boot_check(who):
    """Fail fast: boot the guest once with `vm-run -- true` (vm-run stops a
    guest that has not reached its init after its --boot-timeout, 60 s).
    Returns (ok, detail); on failure vm-run's messages are printed after
    "who: the guest does not boot"."""
    p = subprocess.run([VM_RUN, "--", "true"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=900)
    err = p.stderr.decode(errors="replace").strip().splitlines()
    accel = [l.replace("vm-run: ", "") for l in err if "vm-run: accel" in l]
    if p.returncode == 0:
        return True, accel[-1] if accel else ""
    eprint("%s: the guest does not boot (vm-run -- true exited %d):"
           % (who, p.returncode))
    for line in err:
        eprint("%s:   %s" % (who, line))
    return False, "vm-run -- true exited %d" % p.returncode


def http_get(port, path="/", timeout=10.0, host="127.0.0.1"):
    """GET http://host:port/path; returns (body or None, seconds)."""
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen("http://%s:%d%s" % (host, port, path),
                                    timeout=timeout) as r:
            body = r.read()
        return body, time.monotonic() - t0
    except Exception:
        return None, time.monotonic() - t0


def echo_roundtrip(c, msg):
    """Send MSG (one line) on socket C and read its echo: the echo, or
    None."""
    try:
        c.sendall(msg)
        got = b""
        while not got.endswith(b"\n"):
            part = c.recv(256)
            if not part:
                return None
            got += part
        return got
    except OSError:
        return None


def qmp(sock_path, command, timeout=5.0, arguments=None):
    """Send one QMP command (with its arguments, a dict); returns the
    reply line."""
    import json
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(sock_path)
    f = s.makefile("rw")
    f.readline()
    f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n")
    f.flush()
    f.readline()
    msg = {"execute": command}
    if arguments:
        msg["arguments"] = arguments
    f.write(json.dumps(msg) + "\n")
    f.flush()
    reply = f.readline()
    s.close()
    return reply


def eprint(*a):
    print(*a, file=sys.stderr, flush=True)
