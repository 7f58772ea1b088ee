# SPDX-License-Identifier: GPL-2.0
"""Shared pieces of the benchmarks: a guest booted with vm-run (through
pslib.Guest) with forwarded ports, the host CPU time of its QEMU process,
statistics and CSV output."""

import csv
import json
import math
import os
import platform
import queue
import random
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import netns  # noqa: E402
import pslib  # noqa: E402
import stats  # noqa: E402

# Every benchmark guest boots with these.  tsc=reliable: under TCG the
# clocksource watchdog marks the TSC unstable and Linux falls back to
# acpi_pm, whose clock stands still after an S3 resume in QEMU (timers
# never fire again, so napd and `sleep` hang after the first deep sleep).
# Keeping the TSC for every mode keeps the modes comparable.
BASE_APPEND = "tsc=reliable"

# The polling list, polled from the platform driver's polling state
# (drivers/cpuidle/cpuidle-pollist.c: cpuidle_pollist.enable=1): the
# platform driver is acpi_idle, which a TCG guest has only with
# vm-run --cstates.
POLLIST_APPEND = "cpuidle_pollist.enable=1"
POLLIST_VM_ARGS = ("--cstates",)
POLLIST_DRIVER = "acpi_idle"


def driver_check(driver, napi_poll):
    """Guest shell: stop with "MISSING ..." unless `driver` is the cpuidle
    driver, then, if napi_poll, put eth0's NAPI instances on the list."""
    s = r"""
d=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)
if [ "$d" != "%s" ]; then
	echo "MISSING cpuidle driver is '$d', not %s"
	exec sleep 1000000
fi
""" % (driver, driver)
    if napi_poll:
        s += r"""
if ! echo 1 > /sys/class/net/eth0/napi_idle_poll; then
	echo "MISSING /sys/class/net/eth0/napi_idle_poll refused 1"
	exec sleep 1000000
fi
"""
    return s


# Guest shell: stop with "MISSING ..." unless acpi_idle runs, then put
# eth0's NAPI instances on the polling list (napi_idle_poll).
POLLIST_CHECK = driver_check(POLLIST_DRIVER, True)

CLK_TCK = os.sysconf("SC_CLK_TCK")

NAPLOOP = r"""
# Fallback when napd cannot run: 50 ms without received packets and without
# established connections (after the arm step), then the wakeup_count
# handshake and a nap.
naploop() {
	while :; do
		echo 1 > /sys/power/pseudosleep/arm || continue
		a=$(cat /sys/class/net/eth0/statistics/rx_packets)
		usleep 50000
		[ "$a" = "$(cat /sys/class/net/eth0/statistics/rx_packets)" ] || continue
		netstat -tn 2>/dev/null | grep -q ESTABLISHED && continue
		c=$(cat /sys/power/wakeup_count) || continue
		echo "$c" > /sys/power/wakeup_count 2>/dev/null || continue
		if echo mem > /sys/power/state 2>/dev/null; then echo "LOOP nap ok"; else echo "LOOP nap aborted"; fi
	done
}
"""

# The napping daemon; BENCH_NAPD=false (any failing command) tests the
# fallback.
NAPD = os.environ.get("BENCH_NAPD", "napd")


def napper(mode, ports, background=False, extra=""):
    """Guest shell that naps in `mode` whenever the ports are quiet: napd
    (with `extra` options), or the shell loop when napd fails (it then
    prints NAPD-FAILED)."""
    s = r"""
%(napd)s %(ports)s --idle-ms 50 --wake-dev eth0 --log --mode %(mode)s %(extra)s
echo "NAPD-FAILED $?"
nic=$(readlink -f /sys/class/net/eth0/device)
if [ %(mode)s = pseudo ]; then
	echo 1 > "$nic/power/nosleep"
	nic_input_irqs > /sys/power/wake_irq
fi
echo %(mode)s > /sys/power/mem_sleep
naploop
""" % {"napd": NAPD, "mode": mode, "extra": extra,
       "ports": " ".join("--port %d" % p for p in ports)}
    if background:
        return "(\n%s) &\n" % s
    return s


# Shell functions every guest script can use.  irqsum sums every per-CPU
# count of /proc/interrupts (device IRQs and LOC, RES, CAL, ...).
GUEST_LIB = NAPLOOP + r"""
irqsum() { awk 'NR==1{n=NF;next}{for(i=2;i<=n+1;i++)if($i~/^[0-9]+$/)s+=$i}END{printf "%d\n", s}' /proc/interrupts; }
up() { cut -d' ' -f1 /proc/uptime; }
nic_input_irqs() { grep -E 'input\.[0-9]+$' /proc/interrupts | cut -d: -f1 | tr -d ' ' | tr '\n' ',' | sed 's/,$//'; }
mkdir -p /www/cgi-bin
cat > /www/cgi-bin/st <<'CGI'
#!/bin/sh
echo "Content-Type: text/plain"
echo
cd /sys/power && exec grep -r . pseudosleep suspend_stats/success suspend_stats/fail 2>/dev/null
CGI
cat > /www/cgi-bin/irq <<'CGI'
#!/bin/sh
echo "Content-Type: text/plain"
echo
exec awk 'NR==1{n=NF;next}{for(i=2;i<=n+1;i++)if($i~/^[0-9]+$/)s+=$i}END{printf "%d\n", s}' /proc/interrupts
CGI
# The polling list's hits (entries found with work), all CPUs; empty
# when pollist is not in this kernel.
cat > /www/cgi-bin/pollhits <<'CGI'
#!/bin/sh
echo "Content-Type: text/plain"
echo
exec awk 'NR>1{s+=$3}END{if(NR>1)printf "%d\n", s}' /sys/kernel/debug/pollist/stats 2>/dev/null
CGI
chmod +x /www/cgi-bin/st /www/cgi-bin/irq /www/cgi-bin/pollhits
echo "INFO uname=$(uname -r)"
echo "INFO driver=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
echo "INFO cmdline=$(cat /proc/cmdline)"
echo "INFO mem_sleep=$(cat /sys/power/mem_sleep)"
"""


def say(*a):
    print(*a, flush=True)


# Harness failures (a guest that does not boot): bench exits 1 on any.
BROKEN = []
REBOOTED = []	# guests booted twice: the first ended before init


BROKEN_TAIL = 25


def broken(what, bg=None):
    msg = what
    if bg is not None:
        msg += " (console log: %s)" % (
            os.path.join(bg.logdir, bg.name + ".console.log")
            if bg.logdir else "not kept")
    BROKEN.append(msg)
    say("  BROKEN: " + msg)
    if bg is not None:
        # CI keeps only what is printed: show the end of the guest's
        # output and console, so a failure explains itself.
        bg.drain()
        for title, lines in (("guest output", bg.seen),
                             ("console", bg.console().splitlines())):
            say("    last lines of the %s:" % title)
            for line in lines[-BROKEN_TAIL:]:
                say("    | " + line)


# --- statistics --------------------------------------------------------------

# stats.py's, for the bench modules (C.pct, C.median, C.summary).
pct, median, summary = stats.pct, stats.median, stats.summary


def fmt(x, nd=1, none="-"):
    if x is None:
        return none
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return none
    if abs(x) >= 1000 and nd <= 1:
        return "%.0f" % x
    return ("%%.%df" % nd) % x


def fmt_spread(s, nd=1, lo="p10", hi="p90"):
    """'median [lo..hi]' from a summary dict."""
    if not s or s.get("median") is None:
        return "-"
    return "%s [%s..%s]" % (fmt(s["median"], nd), fmt(s[lo], nd),
                            fmt(s[hi], nd))


def md_table(head, rows):
    """A Markdown table; short rows are padded with empty cells."""
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        r = list(r) + [""] * (len(head) - len(r))
        out.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(out) + "\n"


def loguniform(lo, hi, rng=random):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


# --- host CPU time of QEMU ---------------------------------------------------

def _stat_fields(path):
    with open(path) as f:
        s = f.read()
    # comm may hold spaces and parentheses: split after the last ')'.
    return s[s.rindex(")") + 2:].split()


def proc_cpu_seconds(pid):
    """utime+stime of the whole thread group, in seconds.  /proc/PID/stat
    is the sum over /proc/PID/task/*/stat plus the threads that already
    exited, so short-lived QEMU worker threads are counted too."""
    f = _stat_fields("/proc/%d/stat" % pid)
    return (int(f[11]) + int(f[12])) / CLK_TCK


def host_busy_seconds():
    """CPU seconds the whole host spent busy (all CPUs, /proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    # user nice system idle iowait irq softirq steal
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / CLK_TCK


def self_cpu_seconds():
    """CPU seconds of this process and its waited-for children (ab,
    iperf3)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class CpuMeter:
    """QEMU's CPU over an interval, and what the rest of the host used
    besides QEMU and the benchmark's own clients ('other', a noise
    indicator: other jobs on a shared host)."""

    def __init__(self, bg):
        self.bg = bg
        self.t0 = time.monotonic()
        self.q0 = bg.cpu()
        self.h0 = host_busy_seconds()
        self.s0 = self_cpu_seconds()

    def stop(self):
        wall = time.monotonic() - self.t0
        q1 = self.bg.cpu()
        r = {"wall_s": wall}
        if self.q0 is not None and q1 is not None:
            r["cpu_s"] = q1 - self.q0
            r["cpu_pct"] = 100.0 * r["cpu_s"] / wall
            other = (host_busy_seconds() - self.h0) - r["cpu_s"] - (
                self_cpu_seconds() - self.s0)
            r["other_pct"] = max(0.0, 100.0 * other / wall)
        return r


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            f = _stat_fields("/proc/%s/stat" % d)
            with open("/proc/%s/comm" % d) as c:
                comm = c.read().strip()
        except (OSError, ValueError):
            continue
        if int(f[1]) == pid:
            out.append((int(d), comm))
    return out


def find_qemu(vmrun_pid):
    """The QEMU that runs the guest: the child of vm-run that has a
    -kernel argument and is not the short KVM probe (-name vmrun-probe)."""
    for pid, comm in children(vmrun_pid):
        if not comm.startswith("qemu-system"):
            continue
        try:
            with open("/proc/%d/cmdline" % pid) as f:
                cmd = f.read().split("\0")
        except OSError:
            continue
        if "-kernel" in cmd and "vmrun-probe" not in cmd:
            return pid, " ".join(cmd)
    return None, ""


# --- the guest ---------------------------------------------------------------

class BenchGuest:
    """A benchmark guest: GUEST_LIB + script run by vm-run in the
    background, ports forwarded from free host ports.  `port[g]` is the
    host port for guest port g.  Lines "INFO key=value" are collected in
    `info` while waiting for other lines.  With net="bridge" the guest sits
    on vm-run's bridged network (netns.py): no ports are forwarded,
    `netns` names its namespace and get() reaches it there."""

    def __init__(self, name, script, ports=(80,), append="", qmp=False,
                 timeout=3600, logdir=None, smp=2, net="user", vm_args=()):
        self.name = name
        if net == "bridge":
            self.port = {g: g for g in ports}
            fwd = []
        else:
            self.port = {g: pslib.free_port() for g in ports}
            fwd = ["%d:%d" % (h, g) for g, h in self.port.items()]
        self.append = (BASE_APPEND + " " + append).strip()
        self.logdir = logdir
        self.info = {}
        self.seen = []
        self._boot = dict(command=GUEST_LIB + script, fwd=fwd,
                          append=self.append, qmp=qmp, timeout=timeout,
                          smp=smp, net=net, extra=vm_args)
        self.rebooted = False
        self._start()
        self.stopped = False

    def _start(self):
        self.g = pslib.Guest(**self._boot)
        self.netns = self.g.netns
        self.qemu_pid = None
        self.cmdline = ""

    def _boot_again(self):
        """Boot once more a guest that reset before its init (vm-run says
        so: QEMU exited 0 before init, seen once in ~2,000 TCG boots).  A
        QEMU that crashed or was killed is not retried, and a second reset
        in one bench run is BROKEN (bench): a kernel that resets in early
        boot is a bug, not noise.  Nothing was measured yet; the first
        boot's console and output are kept, and the report names the
        second boot.  True if booted again."""
        why = [line for line in self.seen
               if "guest ended before its init, QEMU exited 0" in line]
        if self.rebooted or not why:
            return False
        self.rebooted = True
        self.g.finish(timeout=30)	# vm-run exits right after saying so
        keep = self._keep_logs(self.name + ".first-boot")
        REBOOTED.append("%s: %s; booted again%s" % (
            self.name,
            why[0].replace("vm-run: ", "").split(" (console log")[0],
            " (first console: %s)" % os.path.basename(keep) if keep else ""))
        say("  note: %s" % REBOOTED[-1])
        self.seen = []
        self._start()
        return True

    def _qemu(self):
        if self.qemu_pid is None and self.g.proc.poll() is None:
            self.qemu_pid, self.cmdline = find_qemu(self.g.proc.pid)
        return self.qemu_pid

    @property
    def accel(self):
        self._qemu()
        m = re.search(r"-accel (\S+)", self.cmdline)
        return m.group(1) if m else "?"

    def _seen(self, line):
        self.seen.append(line)
        m = re.match(r"^INFO (\w+)=(.*)$", line)
        if m:
            self.info[m.group(1)] = m.group(2).strip()

    def _note(self, line):
        self._seen(line)
        self._qemu()

    def wait(self, pattern, timeout=120):
        """Next output line matching pattern (a match object) or None."""
        m = self.g.wait_line(pattern, timeout, on_line=self._note)
        if m is None and self._boot_again():
            m = self.g.wait_line(pattern, timeout, on_line=self._note)
        return m

    def wait_any(self, pattern, timeout=120):
        """Like wait(), but a line already seen also counts."""
        rx = re.compile(pattern)
        for line in self.seen:
            m = rx.search(line)
            if m:
                return m
        return self.wait(pattern, timeout)

    def drain(self):
        """Collect the output lines that arrived so far."""
        while True:
            try:
                line = self.g.lines.get_nowait()
            except queue.Empty:
                return
            if line is None:
                return
            self._seen(line)

    def cpu(self):
        """Host CPU seconds used by QEMU so far (None if unknown)."""
        if not self._qemu():
            return None
        try:
            return proc_cpu_seconds(self.qemu_pid)
        except OSError:
            return None

    def alive(self):
        return self.g.proc.poll() is None

    def get(self, guest_port=80, path="/", timeout=10.0):
        """HTTP GET to the guest's port: (body or None, seconds)."""
        if not self.netns:
            return http_get(self.port[guest_port], path, timeout)
        with netns.inside(self.netns):
            return pslib.http_get(guest_port, path, timeout=timeout,
                                  host=netns.GUEST_IP)

    def console(self):
        return self.g.console()

    def qmp(self, cmd):
        try:
            return json.loads(pslib.qmp(self.g.qmp_path, cmd))
        except Exception as e:  # noqa: BLE001 - reported, not raised
            return {"error": {"desc": str(e)}}

    def stop(self):
        if self.stopped:
            return
        self.stopped = True
        if self.g.proc.poll() is None:
            self.g.proc.terminate()
        self.g.finish(timeout=30)
        self.drain()
        self._keep_logs(self.name)

    def _keep_logs(self, base):
        """Copy the guest's console and output to logdir as base.console.log
        and base.out.log (if there is a logdir), remove its share; the
        console's copy or None."""
        keep = None
        if self.logdir:
            os.makedirs(self.logdir, exist_ok=True)
            keep = os.path.join(self.logdir, base + ".console.log")
            with open(os.path.join(self.logdir, base + ".out.log"),
                      "w") as f:
                f.write("\n".join(self.g.output) + "\n")
        try:
            self.g.cleanup(keep_log_as=keep)
        except OSError:
            pass
        return keep

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def http_get(port, path="/", timeout=10.0):
    return pslib.http_get(port, path, timeout=timeout)


def parse_stats(body):
    """Parse the /cgi-bin/st answer: {'naps': 3, 'success': 5, ...}."""
    out = {}
    if not body:
        return out
    for line in body.decode(errors="replace").splitlines():
        m = re.match(r"^(?:[\w/]*/)?(\w+):(\d+)$", line.strip())
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def guest_stats(port, timeout=10.0):
    body, _ = http_get(port, "/cgi-bin/st", timeout=timeout)
    return parse_stats(body)


def irq_set(spec):
    """'27-29,31' -> {27, 28, 29, 31}"""
    out = set()
    for part in (spec or "").split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out.update(range(int(a), int(b) + 1))
        elif part.isdigit():
            out.add(int(part))
    return out


# --- output ------------------------------------------------------------------

def write_csv(path, rows, fields=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if fields is None:
        fields = []
        for r in rows:
            for k in r:
                if k not in fields:
                    fields.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else
                            ("%.6g" % r[k] if isinstance(r.get(k), float)
                             else r[k])) for k in fields})


def run_cmd(cmd, timeout=None):
    """Run a host command; (returncode, stdout text, stderr text)."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace"), \
            p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or b"").decode(errors="replace"), "timeout"
    except OSError as e:
        return 127, "", str(e)


def conditions():
    """Host side of the run conditions."""
    c = {"nproc": os.cpu_count(),
         "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    c["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    rc, out, _ = run_cmd(["qemu-system-x86_64", "--version"])
    c["qemu"] = out.splitlines()[0] if out else "?"
    rc, out, _ = run_cmd(["git", "-C", TOP, "rev-parse", "--short", "HEAD"])
    c["commit"] = out.strip() or "?"
    rc, out, _ = run_cmd(["git", "-C", TOP, "status", "--porcelain"])
    c["dirty"] = bool(out.strip())
    c["host_kernel"] = platform.release()
    try:
        with open("/proc/loadavg") as f:
            c["loadavg_start"] = " ".join(f.read().split()[:3])
    except OSError:
        pass
    c["build_dir"] = pslib.BUILD
    c["kernel_kind"] = kernel_kind(c["build_dir"])
    return c


def kernel_kind(build_dir):
    """Whether the guest kernel has the debug options (from its .config)."""
    try:
        with open(os.path.join(build_dir, "obj", ".config")) as f:
            cfg = f.read()
    except OSError:
        return "Kernel configuration not found."
    def on(opts):
        return [o for o in opts if "\nCONFIG_%s=y" % o in "\n" + cfg]
    heavy = on(("PROVE_LOCKING", "DEBUG_LOCKDEP", "LOCK_STAT", "KASAN",
                "KCSAN", "UBSAN", "DEBUG_OBJECTS", "DEBUG_PAGEALLOC",
                "DEBUG_KMEMLEAK"))
    light = on(("DEBUG_ATOMIC_SLEEP", "DEBUG_PREEMPT", "DEBUG_LIST",
                "SCHED_DEBUG"))
    if heavy:
        return "Debug kernel (%s): its timings are inflated." % ", ".join(
            heavy + light)
    return "Kernel without the heavy debug options (no lockdep, KASAN, " \
        "UBSAN)%s." % ("; with " + ", ".join(light) if light else "")
