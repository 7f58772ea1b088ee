# SPDX-License-Identifier: GPL-2.0
"""Host-side load generators: ApacheBench, iperf3 and a small memcached
client (text protocol, standard library only), all against 127.0.0.1."""

import json
import re
import socket
import threading
import time

from . import common as C


# --- ApacheBench -------------------------------------------------------------

def ab(port, path="/", n=100, c=1, t=None, timeout_s=10):
    """Run ab; returns a dict (complete, failed, bytes, rps, mean_ms,
    p50/p90/p99/max in ms as ab prints them, whole milliseconds) or
    {'error': ...}."""
    cmd = ["ab", "-q", "-s", str(timeout_s), "-c", str(c)]
    if t is not None:
        cmd += ["-t", "%g" % t, "-n", "10000000"]
    else:
        cmd += ["-n", str(n)]
    cmd.append("http://127.0.0.1:%d%s" % (port, path))
    limit = (t or 0) + 60 + (n * timeout_s if t is None else 0)
    rc, out, err = C.run_cmd(cmd, timeout=limit)
    r = {"rc": rc}
    pats = {"complete": r"Complete requests:\s+(\d+)",
            "failed": r"Failed requests:\s+(\d+)",
            "bytes": r"Total transferred:\s+(\d+) bytes",
            "html_bytes": r"HTML transferred:\s+(\d+) bytes",
            "rps": r"Requests per second:\s+([\d.]+)",
            "mean_ms": r"Time per request:\s+([\d.]+) \[ms\] \(mean\)",
            "elapsed_s": r"Time taken for tests:\s+([\d.]+) seconds",
            "p50": r"^\s+50%\s+(\d+)", "p90": r"^\s+90%\s+(\d+)",
            "p99": r"^\s+99%\s+(\d+)", "max": r"^\s+100%\s+(\d+)"}
    for k, p in pats.items():
        m = re.search(p, out, re.M)
        if m:
            r[k] = float(m.group(1)) if "." in m.group(1) else int(m.group(1))
    if "complete" not in r:
        r["error"] = (err.strip() or out.strip() or "ab rc %d" % rc)[-300:]
    return r


# --- iperf3 ------------------------------------------------------------------

def iperf3(port, seconds=5):
    rc, out, err = C.run_cmd(["iperf3", "-c", "127.0.0.1", "-p", str(port),
                              "-t", "%g" % seconds, "-J"],
                             timeout=seconds + 60)
    try:
        j = json.loads(out)
    except ValueError:
        return {"error": (err or out or "iperf3 rc %d" % rc).strip()[-300:]}
    if "error" in j:
        return {"error": j["error"]}
    end = j.get("end", {})
    return {"sent_mbps": end.get("sum_sent", {}).get("bits_per_second",
                                                       0) / 1e6,
            "recv_mbps": end.get("sum_received", {}).get("bits_per_second",
                                                           0) / 1e6,
            "retransmits": end.get("sum_sent", {}).get("retransmits")}


# --- memcached ---------------------------------------------------------------

class Memcache:
    def __init__(self, port, timeout=10.0):
        self.s = socket.create_connection(("127.0.0.1", port),
                                          timeout=timeout)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.s.makefile("rb")

    def set(self, key, value):
        self.s.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key.encode(), len(value),
                                                    value))
        line = self.f.readline()
        if line != b"STORED\r\n":
            raise IOError("memcached set %s: %r" % (key, line[:80]))

    def get(self, key):
        """The value's length in bytes, or -1 if missing."""
        self.s.sendall(b"get %s\r\n" % key.encode())
        line = self.f.readline()
        if line.startswith(b"VALUE "):
            n = int(line.split()[3])
            data = self.f.read(n + 2)
            if len(data) != n + 2:
                raise IOError("memcached: short read")
            if self.f.readline() != b"END\r\n":
                raise IOError("memcached: no END")
            return n
        if line == b"END\r\n":
            return -1
        raise IOError("memcached get: %r" % line[:80])

    def close(self):
        try:
            self.f.close()
            self.s.close()
        except OSError:
            pass


def memcached_connect(port, tries=60):
    """Connect, waiting for memcached to come up.  Through QEMU user
    networking the host's connect() succeeds before the guest listens;
    the first command then fails with a reset."""
    for _ in range(tries):
        mc = None
        try:
            mc = Memcache(port)
            mc.get("bench-probe")
            return mc
        except (OSError, IOError):
            if mc:
                mc.close()
            time.sleep(0.5)
    mc = Memcache(port)
    mc.get("bench-probe")
    return mc


def memcached_latency(port, key, n):
    """n sequential gets on one connection; per-get seconds."""
    mc = Memcache(port)
    out = []
    try:
        for _ in range(n):
            t0 = time.monotonic()
            mc.get(key)
            out.append(time.monotonic() - t0)
    finally:
        mc.close()
    return out


def load_threads(seconds, conns, worker):
    """conns threads each running worker(end) until the monotonic time end,
    `seconds` from now; worker returns (requests, body bytes, errors).
    Returns their sums."""
    end = time.monotonic() + seconds
    tot = [0, 0, 0]
    lock = threading.Lock()

    def run():
        done = worker(end)
        with lock:
            for i, n in enumerate(done):
                tot[i] += n

    th = [threading.Thread(target=run, daemon=True) for _ in range(conns)]
    for t in th:
        t.start()
    for t in th:
        t.join(seconds + 30)
    return tuple(tot)


def memcached_load(port, key, seconds, conns=4):
    """conns connections each doing gets of key for `seconds`; returns
    (gets, bytes, errors)."""
    def worker(end):
        gets = nbytes = errs = 0
        try:
            mc = Memcache(port)
        except OSError:
            return 0, 0, 1
        try:
            while time.monotonic() < end:
                n = mc.get(key)
                if n < 0:
                    errs += 1
                else:
                    gets += 1
                    nbytes += n
        except (OSError, IOError):
            errs += 1
        finally:
            mc.close()
        return gets, nbytes, errs

    return load_threads(seconds, conns, worker)


# --- HTTP --------------------------------------------------------------------

def http_fetch(port, path, timeout=10.0):
    """One GET on a new connection (HTTP/1.0, like ab); body bytes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(b"GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" %
                  path.encode())
        buf = bytearray()
        while True:
            d = s.recv(65536)
            if not d:
                break
            buf += d
    finally:
        s.close()
    head, sep, body = bytes(buf).partition(b"\r\n\r\n")
    if not sep or not head.startswith(b"HTTP/1.") or b" 200 " not in \
            head.split(b"\r\n", 1)[0] + b" ":
        raise IOError("bad HTTP answer %r" % head[:60])
    return len(body)


def http_load(port, path, seconds, conns=10):
    """conns threads each fetching path on a new connection per request
    for `seconds` (ab -c conns, with a sub-second time limit, which ab's
    whole-second -t cannot do); returns (requests, body bytes, errors)."""
    def worker(end):
        n = nbytes = errs = 0
        while time.monotonic() < end:
            try:
                nbytes += http_fetch(port, path)
                n += 1
            except (OSError, IOError):
                errs += 1
                time.sleep(0.01)
        return n, nbytes, errs

    return load_threads(seconds, conns, worker)
