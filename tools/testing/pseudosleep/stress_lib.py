# SPDX-License-Identifier: GPL-2.0
"""Host side of the stress suite (tools/testing/pseudosleep/stress).

One boot runs guest/stress.sh with a list of sections; the host sends HTTP
requests through the forwarded NIC port while the guest naps, then checks
what came back: every request answered, every nap ended by an armed NIC
IRQ, the kernel's counters equal to the guest loop's, the phase each
armed interrupt met (from the guest's trace), noise that did not end a
nap, a long nap with the clocks and timers right, CPU hotplug, the fuzzer's
verdict, and a clean console (pslib.bad_dmesg_lines).

Timings are reported, never asserted; only correctness fails a run.
"""

import contextlib
import csv
import json
import os
import random
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import netns
import pslib
from stats import median, pct

HERE = pslib.HERE
FUZZ_SRC = os.path.join(HERE, "stress-fuzz.c")
GUEST = "/usr/share/pseudosleep/stress.sh"

# The phases a request can meet, in the order a nap goes through them.
# Gap labels ("after X") cover the code between two traced phases.
PHASES = [
    ("awake", "awake, before the arm step"),
    ("handshake", "armed, wakeup_count read -> count written"),
    ("count->mem", "count written -> mem written"),
    ("suspend_enter", "enter_state() start"),
    ("sync_filesystems", "sync"),
    ("after sync_filesystems", "PM notifiers, before freezing"),
    ("freeze_processes", "freeze tasks"),
    ("after freeze_processes", "after freezing, before devices"),
    ("dpm_prepare", "devices: prepare"),
    ("dpm_suspend", "devices: suspend"),
    ("dpm_suspend_late", "devices: suspend_late"),
    ("dpm_suspend_noirq", "devices: suspend_noirq"),
    ("after dpm_suspend_noirq", "devices suspended, before the halt"),
    ("machine_suspend", "CPUs halted (the nap)"),
    ("after machine_suspend", "woken, before devices resume"),
    ("dpm_resume_noirq", "devices: resume_noirq"),
    ("dpm_resume_early", "devices: resume_early"),
    ("dpm_resume", "devices: resume"),
    ("resume_console", "console resume"),
    ("dpm_complete", "devices: complete"),
    ("after dpm_complete", "after devices, before thaw"),
    ("thaw_processes", "thaw tasks"),
    ("after thaw_processes", "thawed, mem returning"),
]
# The phases the issue asks every run to hit.
REQUIRED = ["awake", "handshake", "count->mem", "sync_filesystems",
            "freeze_processes", "dpm_prepare", "dpm_suspend",
            "dpm_suspend_late", "dpm_suspend_noirq", "machine_suspend",
            "dpm_resume_noirq", "dpm_resume_early", "dpm_resume",
            "dpm_complete", "thaw_processes"]
# The worknaps section's: napd's handshake is in "awake" (no markers) and
# split by napd's own counters instead (WORK_HELD).  A wakeup source
# activates once until napd relaxes it, so work that comes while a nap
# resumes, after the one that ended it, shows no new activation.
REQUIRED_WORK = REQUIRED[:REQUIRED.index("machine_suspend") + 1]
REQUIRED_WORK.remove("handshake")
REQUIRED_WORK.remove("count->mem")
# napd's --stats: where work met an attempt before the kernel's entry.
WORK_HELD = [("wake_source", "work found at the wakeup_count read"),
             ("handshake", "work between the read and the count's write"),
             ("aborted", "work between the write and the nap")]
# The wakeup source that ends napd's naps in wake on task: the
# EPOLLWAKEUP item of its outer epoll set, named after the inner set.
WORK_SOURCE = "[eventpoll]"

TRACE_RE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([0-9.]+):\s+"
                      r"(\w+):\s+(.*)$")


# The pump's gap is at least PACE times an awake request's service time.
PACE = 10


def kernel_has(option):
    """Whether the kernel vm-run boots (BUILD_DIR) has CONFIG_<option>=y."""
    return pslib.kernel_config(option) == "y"


def irq_set(text):
    s = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            s.update(range(int(a), int(b) + 1))
        else:
            s.add(int(part))
    return s


def build_fuzzer(dest):
    """gcc -static the guest fuzzer into dest; raises on failure."""
    subprocess.run(["gcc", "-static", "-O2", "-Wall", "-o", dest, FUZZ_SRC],
                   check=True, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT)


class Pump:
    """HTTP clients on the forwarded port.  Mode "pump": two clients, each
    waiting a random 0..gap_ms between requests; "flood": six clients,
    no gaps; "solo": client 0 of "pump" alone, so that a request the
    guest forgot is never answered (no other request wakes it), three in
    four of its gaps a fifth as long, to land in a nap's entry; "noise":
    two clients sending requests and four opening and
    closing bare TCP connections as fast as they can to noise_port, a
    closed port of the guest (each one several packets, so NIC interrupts,
    even while the guest's tasks are frozen; a flood against the server's
    own port would fill its listen backlog and starve the requests);
    "off": none.  Every request is recorded; connects are counted.
    With ns, the clients run inside that network namespace (vm-run --net
    bridge) and reach the guest at host."""

    def __init__(self, port, seed, gap_ms=400, timeout=60, noise_port=None,
                 host="127.0.0.1", ns=None):
        self.port, self.gap, self.timeout = port, gap_ms / 1000.0, timeout
        self.noise_port = noise_port or port
        self.host, self.ns = host, ns
        self.mode, self.section = "off", ""
        self.records = []  # (section, mode, t, seconds, answered)
        self.lock = threading.Lock()
        self.inflight = 0
        self.connects = 0
        self.stop = False
        self.threads = []
        for i in range(6):
            t = threading.Thread(target=self._run,
                                 args=(i, random.Random(seed * 100 + i)),
                                 daemon=True)
            t.start()
            self.threads.append(t)

    def _in_ns(self):
        """The calling thread in the pump's namespace, if it has one."""
        return netns.inside(self.ns) if self.ns else contextlib.nullcontext()

    def _run(self, idx, rnd):
        # vm-run creates the namespace once QEMU is about to start, and
        # deletes it when QEMU is gone, maybe before the pump is stopped.
        while self.ns and not netns.ready(self.ns) and not self.stop:
            time.sleep(0.05)
        if self.stop:
            return
        try:
            with self._in_ns():
                self._loop(idx, rnd)
        except netns.SetnsError:
            if netns.ready(self.ns):
                raise

    def get(self, timeout):
        """One request from the calling thread."""
        with self._in_ns():
            return pslib.http_get(self.port, host=self.host, timeout=timeout)

    def tcp_retrans(self):
        """The client side's TCP RetransSegs: with ns, the segments the
        guest did not acknowledge in time (None with user networking,
        where QEMU's own TCP talks to the guest)."""
        if not self.ns:
            return None
        with self._in_ns():
            # /proc/net follows the process; thread-self this thread.
            with open("/proc/thread-self/net/snmp") as f:
                rows = [l.split() for l in f if l.startswith("Tcp:")]
        return int(rows[1][rows[0].index("RetransSegs")])

    def _loop(self, idx, rnd):
        while not self.stop:
            mode = self.mode
            if mode == "off" or (mode == "pump" and idx >= 2) or \
                    (mode == "solo" and idx >= 1):
                time.sleep(0.02)
                continue
            if mode == "noise" and idx >= 2:
                self._connect()
                continue
            if mode in ("pump", "solo"):
                # Client 0 sends at random offsets of up to gap_ms after
                # its last answer; client 1 four times as rarely, so that
                # some requests overlap another one's wake.
                hi = self.gap * (1 if idx == 0 else 4)
                if mode == "solo" and rnd.random() < 0.75:
                    # Aimed at the guest's next nap entry: napd starts
                    # one within a few tens of ms of its last answer.
                    hi = self.gap / 5
                time.sleep(rnd.uniform(0, hi))
                if self.mode != mode:
                    continue
            with self.lock:
                self.inflight += 1
            section, t0 = self.section, time.time()
            body, took = pslib.http_get(self.port, host=self.host,
                                        timeout=self.timeout)
            ok = body is not None and b"pseudosleep guest" in body
            with self.lock:
                self.inflight -= 1
                self.records.append((section, mode, t0, took, ok))

    def _connect(self):
        s = socket.socket()
        s.settimeout(0.5)
        try:
            s.connect((self.host, self.noise_port))
            with self.lock:
                self.connects += 1
        except OSError:
            time.sleep(0.01)
        finally:
            s.close()
        time.sleep(0.005)

    def set(self, mode, section=None):
        if section is not None:
            self.section = section
        self.mode = mode

    def quiesce(self, limit=300):
        """Stop sending and wait for the requests in flight."""
        self.mode = "off"
        end = time.monotonic() + limit
        time.sleep(0.05)
        while self.inflight and time.monotonic() < end:
            time.sleep(0.05)
        return self.inflight == 0

    def close(self):
        self.quiesce()
        self.stop = True
        for t in self.threads:
            t.join(timeout=self.timeout + 5)


def parse_trace(path, nic):
    """Walk the guest's trace: returns (hits, ended) where hits[phase] is
    the number of (attempt, phase) pairs in which at least one armed NIC
    interrupt arrived, and ended[i] the phase of the first armed interrupt
    of attempt i from the moment it read wakeup_count, if any.

    With nic None, the trace is the worknaps section's: the work is the
    activation of napd's watch (wakeup_source_activate), and napd writes
    no markers, so an attempt ends where its tasks are thawed, and
    "awake" covers napd's whole handshake (napd's own counters split it,
    WORKNAPS-STATS)."""
    hits = {}
    ended = {}
    seen = set()
    it, phase = 0, "awake"
    events = 0
    try:
        f = open(path, errors="replace")
    except OSError:
        return None, None, 0
    with f:
        for line in f:
            m = TRACE_RE.match(line)
            if not m:
                continue
            events += 1
            ev, rest = m.group(5), m.group(6)
            if ev == "tracing_mark_write":
                mm = re.match(r"PS (\d+) (\w+)", rest)
                if not mm:
                    continue
                n, what = int(mm.group(1)), mm.group(2)
                if nic is None:
                    continue
                if what == "read":
                    it, phase = n, "handshake"
                elif what in ("write", "mem"):
                    it, phase = n, "count->mem"
                elif what == "ret":
                    it, phase = n + 1, "awake"
            elif ev == "suspend_resume":
                mm = re.match(r"(\w+)\[\d+\] (begin|end)", rest)
                if mm:
                    phase = mm.group(1) if mm.group(2) == "begin" else \
                        "after " + mm.group(1)
                    if phase == "after suspend_enter":
                        phase = "after freeze_processes"
                    if nic is None and phase == "after thaw_processes":
                        it, phase = it + 1, "awake"
            elif ev in ("irq_handler_entry", "wakeup_source_activate"):
                mm = re.match(r"irq=(\d+)", rest)
                if nic is None and ev == "irq_handler_entry" or \
                        nic is not None and (not mm or
                                             int(mm.group(1)) not in nic):
                    continue
                if (it, phase) not in seen:
                    seen.add((it, phase))
                    hits[phase] = hits.get(phase, 0) + 1
                if phase != "awake" and it not in ended:
                    ended[it] = phase
    return hits, ended, events


class Boot:
    """One guest boot running stress.sh SECTIONS, driven from the host."""

    def __init__(self, label, sections, smp=2, append="", seed=1,
                 timeout=3600, gap_ms=400, logdir=None, pcap=None,
                 net="user", vm_args=()):
        self.pcap, self.net, self.vm_args = pcap, net, list(vm_args)
        self.label, self.sections, self.smp = label, sections, smp
        self.append, self.seed, self.timeout = append, seed, timeout
        self.gap_ms, self.logdir = gap_ms, logdir
        self.failures = []
        self.info = {}
        self.naps = []       # dicts per nap attempt
        self.totals = []     # NAPS-TOTAL dicts
        self.requests = []
        self.phase_hits = {}
        self.phase_ended = {}
        self.fuzz = {}
        self.work = {"sources": {}, "stats": None, "napd": []}
        self.clocks = {}     # tag -> {"start"|"end": (host, boot, mono)}
        self.console = ""
        self.duration = 0
        self.nic = None

    def fail(self, msg):
        self.failures.append(msg)

    def run(self):
        t0 = time.monotonic()
        if self.net == "bridge":
            port, noise_port = 80, 81
        else:
            port = pslib.free_port()
            noise_port = pslib.free_port()
            while noise_port == port:
                noise_port = pslib.free_port()
        tmp = tempfile.mkdtemp(prefix="ps-stress.")
        fuzz_bin = os.path.join(tmp, "stress-fuzz")
        build_fuzzer(fuzz_bin)
        cmd = "sh %s %s" % (GUEST, " ".join(self.sections))
        extra = ["--mem", "1024M"] + self.vm_args
        if self.pcap:
            # The frames between QEMU's network backend and the NIC.
            extra += ["--qemu-arg=-object", "--qemu-arg=filter-dump,id=fd0,"
                      "netdev=n0,file=%s" % self.pcap]
        # Guest port 81 is closed: the guest's kernel answers with a RST.
        fwd = [] if self.net == "bridge" else ["%d:80" % port,
                                                "%d:81" % noise_port]
        g = pslib.Guest(cmd, fwd=fwd, append=self.append, net=self.net,
                        smp=self.smp, timeout=self.timeout, extra=extra)
        shutil.copy(fuzz_bin, os.path.join(g.share, "stress-fuzz"))
        shutil.rmtree(tmp, ignore_errors=True)
        longest = max([int(s.split(":")[1]) for s in self.sections
                       if s.startswith(("noise:", "longnap:"))] + [0])
        pump = Pump(port, self.seed, self.gap_ms, timeout=60 + longest,
                    noise_port=noise_port,
                    host=netns.GUEST_IP if g.netns else "127.0.0.1",
                    ns=g.netns)
        self.pump = pump
        state = {"section": None}
        try:
            self._drive(g, pump, state)
        finally:
            pump.close()
            rc = g.finish(timeout=120)
            self.console = g.console()
            self.output = list(g.output)
            trace = os.path.join(g.share, "trace.txt")
            self._trace(trace)
            if self.logdir:
                os.makedirs(self.logdir, exist_ok=True)
                if os.path.exists(trace):
                    shutil.copy(trace, os.path.join(
                        self.logdir, self.label + "-trace.txt"))
                with open(os.path.join(self.logdir, self.label +
                                       "-output.txt"), "w") as f:
                    f.write("\n".join(self.output) + "\n")
                g.cleanup(os.path.join(self.logdir, self.label +
                                       "-console.log"))
            else:
                g.cleanup()
        self.requests = pump.records
        self.rc = rc
        self.duration = time.monotonic() - t0
        self._check()
        return not self.failures

    def _drive(self, g, pump, state):
        nic = None
        retrans = None
        pending = {}

        def on_line(line):
            self._line(line, pending)

        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            m = g.wait_line(r"^(SECTION-END|SECTION|STRESS-DONE|NIC-IRQS|"
                            r"NOISE-NAPPING|LONG-NAPPING|LONG-WOKE|"
                            r"POLLIST-TRAFFIC|POLLIST-IDLE-DONE|"
                            r"POLLIST-IDLE)(?: (.*))?$",
                            timeout=max(1, deadline - time.monotonic()),
                            on_line=on_line)
            if not m:
                self.fail("guest output stopped (last section %s)"
                          % state["section"])
                return
            what, rest = m.group(1), m.group(2) or ""
            if what == "NIC-IRQS":
                nic = self.nic = irq_set(rest)
                self.info["nic_irqs"] = rest
            elif what == "SECTION":
                name = rest.split()[0]
                state["section"] = name
                if not pump.quiesce():
                    self.fail("requests still unanswered before %s" % name)
                pump.set("off", name)
                if name in ("naps", "hotplug", "fuzz", "worknaps"):
                    if "service_ms" not in self.info:
                        self._pace(pump)
                    pump.set("solo" if name == "worknaps" else "pump")
                g.signal("go-" + name)
            elif what == "NOISE-NAPPING":
                time.sleep(0.5)
                pump.set("noise")
            elif what == "LONG-NAPPING":
                self.info["long_host_start"] = time.time()
                self.info["long_guest_start"] = rest
            elif what == "LONG-WOKE":
                self.info["long_host_end"] = time.time()
                self.info["long_woke"] = rest
            elif what == "POLLIST-TRAFFIC":
                retrans = pump.tcp_retrans()
                pump.set("flood")
            elif what == "POLLIST-IDLE":
                # 10 s without traffic; the next section's requests
                # check that the NIC still answers afterwards.
                pump.quiesce()
                if retrans is not None:
                    self.info.setdefault("POLLIST", []).append(
                        "host TCP retransmissions during the flood: %d" %
                        (pump.tcp_retrans() - retrans))
            elif what == "SECTION-END":
                name, src = rest.split()[0], rest.split()[-1]
                pump.quiesce()
                if src != "0":
                    self.fail("section %s exited %s" % (name, src))
            elif what == "STRESS-DONE":
                self.info["done"] = rest
                self.nic = nic
                return
        self.fail("timeout after %d s in section %s" % (
            self.timeout, state["section"]))

    def _pace(self, pump):
        """Scale the pump's gaps to the server's speed.  The gaps are
        tuned for the test kernel; a sanitizer kernel serves a request
        several times slower, and at the same gaps the server would be
        busy so often that almost every nap attempt is refused or aborted.
        The median of a few requests to the awake guest sets the gap to at
        least PACE times the service time."""
        took = []
        for _ in range(5):
            body, t = pump.get(30)
            if body is not None:
                took.append(t)
        if not took:
            return
        service = median(took)
        pump.gap = max(self.gap_ms / 1000.0, PACE * service)
        self.info["service_ms"] = round(service * 1e3, 1)
        self.info["gap_ms"] = round(pump.gap * 1e3)
        print("stress: %s: awake requests take %.0f ms, pump gaps up to "
              "%.0f ms" % (self.label, service * 1e3, pump.gap * 1e3),
              flush=True)

    def _line(self, line, pending):
        sec = self.pump.section if hasattr(self, "pump") else ""
        m = re.match(r"^N (\d+) (ok|ab|rf)(?: (\d+) (\d+) (\d+))?$", line)
        if m:
            self.naps.append({
                "section": sec, "attempt": int(m.group(1)),
                "result": m.group(2),
                "wake_irq": int(m.group(3)) if m.group(3) else None,
                "latency_ns": int(m.group(4)) if m.group(4) else None,
                "spurious": int(m.group(5)) if m.group(5) else None})
            return
        m = re.match(r"^CLOCK (\S+) (start|end) ([\d.]+) ?([\d.]*)\s*$", line)
        if m:
            self.clocks.setdefault(m.group(1), {})[m.group(2)] = (
                time.monotonic(), float(m.group(3)),
                float(m.group(4)) if m.group(4) else None)
            return
        m = re.match(r"^WORKNAP (\S+)$", line)
        if m:
            src = self.work["sources"]
            src[m.group(1)] = src.get(m.group(1), 0) + 1
            return
        if line.startswith("WORKNAPS-STATS "):
            try:
                self.work["stats"] = json.loads(line.split(" ", 1)[1])
            except ValueError:
                self.fail("worknaps: napd printed no totals: %s" % line[:120])
            return
        if line.startswith("WORKNAPS-NAPD "):
            self.work["napd"].append(line.split(" ", 1)[1])
            return
        m = re.match(r"^NAPS-TOTAL (\S+) (.*)$", line)
        if m:
            d = dict(kv.split("=") for kv in m.group(2).split())
            d = {k: int(v) for k, v in d.items()}
            d["tag"] = m.group(1)
            self.totals.append(d)
            return
        for key in ("NOISE", "HOTPLUG", "FUZZ", "FUZZ-RACE", "POLLIST",
                    "TRACE-LOST", "TIMER-FIRED", "FUZZ-TARGETS", "CPUS",
                    "IDLE-DRIVER", "RTC-IRQ"):
            if line.startswith(key + " "):
                self.info.setdefault(key, []).append(line[len(key) + 1:])
        if line.startswith(("FUZZ-VIOLATION", "STRESS-ERROR", "HOTPLUG-ERROR",
                            "FUZZ-ERROR")):
            self.fail(line[:200])

    def _is_work(self):
        return any(s.startswith("worknaps:") for s in self.sections)

    def _trace(self, path):
        nic = getattr(self, "nic", None)
        if self._is_work():
            nic = None
        elif not nic:
            return
        if not os.path.exists(path):
            return
        hits, ended, events = parse_trace(path, nic)
        self.phase_hits = hits or {}
        self.phase_ended = {}
        for ph in (ended or {}).values():
            self.phase_ended[ph] = self.phase_ended.get(ph, 0) + 1
        self.info["trace_events"] = events

    def _kv(self, text):
        return dict(kv.split("=", 1) for kv in text.split() if "=" in kv)

    def _check(self):
        if self.rc != 0:
            self.fail("vm-run exited %d" % self.rc)
        if self.info.get("done", "").strip() != "0":
            self.fail("guest suite ended with %r" % self.info.get("done"))
        bad = pslib.bad_dmesg_lines(self.console)
        self.info["warnings"] = len(bad)
        if bad:
            self.fail("kernel complained: %s" % bad[0].strip()[:160])
        lost = [r for r in self.requests if not r[4]]
        if lost:
            self.fail("%d of %d requests lost (first in section %s)" % (
                len(lost), len(self.requests), lost[0][0]))
        nic = getattr(self, "nic", None) or set()
        wrong = [n for n in self.naps if n["result"] == "ok" and
                 n["wake_irq"] not in nic]
        if wrong:
            self.fail("%d naps ended by a non-NIC IRQ (first: IRQ %s)" % (
                len(wrong), wrong[0]["wake_irq"]))
        for t in self.totals:
            # While the fuzzer writes power/nosleep, mem_sleep or pm_test
            # (each under system_transition_mutex), "echo mem" can fail
            # with -EBUSY at enter_state()'s mutex_trylock(), before any
            # nap begins: a failure the kernel rightly does not count as
            # an aborted nap.  Naps must still match exactly.
            if t["tag"] == "fuzz-race":
                aborted_ok = t["kaborted"] <= t["aborted"]
            else:
                aborted_ok = t["kaborted"] == t["aborted"]
            if t["knaps"] != t["ok"] or not aborted_ok:
                self.fail("%s: kernel counted %d naps, %d aborted; the loop "
                          "%d and %d" % (t["tag"], t["knaps"], t["kaborted"],
                                         t["ok"], t["aborted"]))
        for s in self.sections:
            name = s.split(":")[0]
            if name == "naps" and not any(t["tag"] == "naps"
                                          for t in self.totals):
                self.fail("naps: no total")
        self._check_work()
        self._check_clocks()
        self._check_noise()
        self._check_long()
        self._check_fuzz()
        for line in self.info.get("TRACE-LOST", []):
            if line.strip() != "0":
                self.info["trace_overrun"] = line.strip()

    def _check_noise(self):
        for line in self.info.get("NOISE", []):
            d = self._kv(line)
            if d.get("r") != "ok" or d.get("wake_irq") != d.get("rtc"):
                self.fail("noise: nap %s, ended by IRQ %s, not the RTC's %s"
                          % (d.get("r"), d.get("wake_irq"), d.get("rtc")))
            elif d.get("naps") != "1":
                self.fail("noise: %s naps instead of 1" % d.get("naps"))
            elif int(d["nic_irqs"]) <= 0:
                self.fail("noise: the NIC raised no interrupt")
            elif not 0 < int(d["spurious"]) <= int(d["all_irqs"]) + \
                    int(d["timer_irqs"]) + 1000 * self.smp:
                # Every halt exit needs an interrupt: the spurious count
                # is bounded by the interrupts counted over the window
                # (device IRQs, local timer) plus IPIs (not counted here,
                # bounded generously by 1000 per CPU).
                self.fail("noise: spurious=%s does not fit %s device and "
                          "%s timer interrupts" % (d["spurious"],
                                                   d["all_irqs"],
                                                   d["timer_irqs"]))
        if any(s.startswith("noise:") for s in self.sections) and \
                not self.info.get("NOISE"):
            self.fail("noise: no result")

    def _check_clocks(self):
        """Across each section's naps, the guest's CLOCK_MONOTONIC and
        boot clock moved as the host's did.  A nap that lost or gained
        time (the tick or timekeeping stopped while kept devices' timers
        ran, or a suspend's offset added) would show as a difference
        that grows with the naps.  The bound, 2 % or 1 s, is far above
        the host's delay in reading the guest's line."""
        for tag, c in sorted(self.clocks.items()):
            if "start" not in c or "end" not in c:
                continue
            (h0, b0, m0), (h1, b1, m1) = c["start"], c["end"]
            host = h1 - h0
            limit = max(1.0, 0.02 * host)
            text = "%s: host %.1f s, guest boot clock %+.2f s" % (
                tag, host, (b1 - b0) - host)
            if m0 is not None and m1 is not None:
                text += ", CLOCK_MONOTONIC %+.2f s" % ((m1 - m0) - host)
            self.info.setdefault("CLOCK", []).append(text)
            for what, d in (("boot clock", b1 - b0), ("CLOCK_MONOTONIC",
                            None if m0 is None or m1 is None else m1 - m0)):
                if d is not None and abs(d - host) > limit:
                    self.fail("%s: the guest's %s moved %.2f s while the "
                              "host's moved %.2f s" % (tag, what, d, host))

    def _check_work(self):
        """Every nap of the worknaps section ended by napd's watch, as
        many as napd and the kernel counted; napd said nothing wrong."""
        if not self._is_work():
            return
        st, src = self.work["stats"], self.work["sources"]
        if not st:
            self.fail("worknaps: no totals from napd")
            return
        other = {k: v for k, v in src.items() if k != WORK_SOURCE}
        if other:
            self.fail("worknaps: naps ended by %s, not napd's watch %s" % (
                other, WORK_SOURCE))
        if sum(src.values()) != st["naps"]:
            self.fail("worknaps: napd logged %d naps, counted %d" % (
                sum(src.values()), st["naps"]))
        for line in self.work["napd"]:
            self.fail("worknaps: napd: %s" % line[:160])

    def _check_long(self):
        secs = [int(s.split(":")[1]) for s in self.sections
                if s.startswith("longnap:")]
        if not secs:
            return
        if "long_woke" not in self.info:
            self.fail("longnap: no wake reported")
            return
        want = secs[0]
        d = self._kv(self.info["long_woke"])
        start = self.info["long_guest_start"].split()
        g_real0, g_mono0 = int(start[0]), float(start[1])
        g_real1, g_mono1 = int(d["real"]), float(d["mono"])
        host = self.info["long_host_end"] - self.info["long_host_start"]
        nap = int(d["nap_ns"]) / 1e9
        self.info["long"] = ("nap %.1f s (alarm %d s), guest monotonic "
                             "+%.1f s, realtime +%d s, host +%.1f s, guest "
                             "realtime - host %+.1f s, %s spurious" % (
                                 nap, want, g_mono1 - g_mono0,
                                 g_real1 - g_real0, host,
                                 g_real1 - self.info["long_host_end"],
                                 d["spurious"]))
        if d["r"] != "ok" or d["wake_irq"] != d["rtc"]:
            self.fail("longnap: %s, ended by IRQ %s, not the RTC" % (
                d["r"], d["wake_irq"]))
        # Correctness, not timing: a clock that stood still during the nap
        # would be behind by the whole nap.  Bounds are half the nap.
        if nap < want * 0.5:
            self.fail("longnap: only %.1f s of a %d s alarm" % (nap, want))
        if abs((g_mono1 - g_mono0) - host) > want * 0.5:
            self.fail("longnap: monotonic +%.1f s vs host +%.1f s" % (
                g_mono1 - g_mono0, host))
        if abs(g_real1 - self.info["long_host_end"]) > max(5, want * 0.5):
            self.fail("longnap: guest realtime off the host's by %+.1f s" % (
                g_real1 - self.info["long_host_end"]))
        fired = self.info.get("TIMER-FIRED")
        if not fired:
            self.fail("longnap: the timer due during the nap never fired")
        elif float(fired[0]) < g_mono0 + want / 2 - 1:
            self.fail("longnap: timer fired early at %s" % fired[0])

    def _check_fuzz(self):
        if not any(s.startswith("fuzz:") for s in self.sections):
            return
        lines = self.info.get("FUZZ", [])
        tot = [self._kv(line) for line in lines if "violations=" in line]
        if not tot:
            self.fail("fuzz: no verdict")
            return
        d = tot[-1]
        race = self._kv((self.info.get("FUZZ-RACE") or [""])[-1])
        self.fuzz = {"writes": int(d["writes"]),
                     "accepted": int(d["accepted"]),
                     "rejected": int(d["rejected"]),
                     "violations": int(d["violations"]),
                     "race_writes": int(race.get("writes", 0))}
        if self.fuzz["violations"]:
            self.fail("fuzz: %d violations" % self.fuzz["violations"])

    # -- reporting ---------------------------------------------------------
    def required(self):
        return REQUIRED_WORK if self._is_work() else REQUIRED

    def summary(self):
        ok = [n for n in self.naps if n["result"] == "ok"]
        lat = [n["latency_ns"] / 1e6 for n in ok if n["latency_ns"]]
        http = [r[3] * 1e3 for r in self.requests if r[4]]
        st = self.work["stats"] or {}
        req = self.required()
        return {
            "label": self.label, "smp": self.smp,
            "naps": len(ok) + st.get("naps", 0),
            "aborted": sum(1 for n in self.naps if n["result"] == "ab") +
            st.get("aborted", 0),
            "refused": sum(1 for n in self.naps if n["result"] == "rf") +
            st.get("handshake_refused", 0),
            "requests": len(self.requests),
            "lost": sum(1 for r in self.requests if not r[4]),
            "warnings": self.info.get("warnings", 0),
            "wake_p50_ms": pct(lat, 50), "wake_p90_ms": pct(lat, 90),
            "wake_p99_ms": pct(lat, 99), "wake_max_ms": max(lat or [0]),
            "http_p50_ms": pct(http, 50), "http_p99_ms": pct(http, 99),
            "phases_hit": sum(1 for p in req if self.phase_hits.get(p)),
            "phases_missed": " ".join(p for p in req
                                      if not self.phase_hits.get(p)),
            "fuzz_writes": self.fuzz.get("writes", 0) +
            self.fuzz.get("race_writes", 0),
            "duration_s": round(self.duration),
            "result": "ok" if not self.failures else "FAILED",
        }

    def write_csv(self, outdir):
        os.makedirs(outdir, exist_ok=True)
        with open(os.path.join(outdir, self.label + "-naps.csv"), "w",
                  newline="") as f:
            w = csv.writer(f)
            w.writerow(["section", "attempt", "result", "wake_irq",
                        "wake_latency_ns", "spurious"])
            for n in self.naps:
                w.writerow([n["section"], n["attempt"], n["result"],
                            n["wake_irq"], n["latency_ns"], n["spurious"]])
        with open(os.path.join(outdir, self.label + "-requests.csv"), "w",
                  newline="") as f:
            w = csv.writer(f)
            w.writerow(["section", "mode", "unix_time", "seconds",
                        "answered"])
            for r in self.requests:
                w.writerow([r[0], r[1], "%.3f" % r[2], "%.4f" % r[3],
                            int(r[4])])
        with open(os.path.join(outdir, self.label + "-phases.csv"), "w",
                  newline="") as f:
            w = csv.writer(f)
            w.writerow(["phase", "description", "hits",
                        "first_armed_irq_of_attempt", "required"])
            for key, desc in PHASES:
                w.writerow([key, desc, self.phase_hits.get(key, 0),
                            self.phase_ended.get(key, 0),
                            int(key in self.required())])
            # The worknaps section's handshake, as napd counted it.
            held = self.work_held()
            for key, desc in WORK_HELD if held else []:
                w.writerow(["napd " + key, desc, held[key], "", 1])

    def work_held(self):
        """napd's counts of WORK_HELD, or None without a worknaps total."""
        st = self.work["stats"]
        if not st:
            return None
        held = dict(st.get("held_back", {}))
        held["aborted"] = st.get("aborted", 0)
        return {k: held.get(k, 0) for k, _ in WORK_HELD}


def fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return ("%%.%df" % nd) % v
    return str(v)


def print_summary(boots, out=print):
    cols = ["label", "smp", "naps", "aborted", "refused", "requests", "lost",
            "warnings", "wake_p50_ms", "wake_p99_ms", "http_p50_ms",
            "http_p99_ms", "phases_hit", "fuzz_writes", "duration_s",
            "result"]
    rows = [[fmt(b.summary()[c]) for c in cols] for b in boots]
    width = [max(len(c), *(len(r[i]) for r in rows)) for i, c in
             enumerate(cols)]
    out("  ".join(c.rjust(width[i]) for i, c in enumerate(cols)))
    for r in rows:
        out("  ".join(v.rjust(width[i]) for i, v in enumerate(r)))
    for b in boots:
        if b.phase_hits:
            out("phases hit by %s (%s): %s" % (
                "napd's watch" if b._is_work() else "an armed NIC interrupt",
                b.label, ", ".join("%s %d" % (k, b.phase_hits.get(k, 0))
                                   for k, _ in PHASES)))
            missed = b.summary()["phases_missed"]
            if missed:
                out("  not hit in this run: %s" % missed)
        held = b.work_held()
        if held:
            out("%s napd's handshake met work: %s; naps ended by %s" % (
                b.label, ", ".join("%s %d" % kv for kv in held.items()),
                b.work["sources"]))
        for key in ("NOISE", "HOTPLUG", "FUZZ", "FUZZ-RACE", "POLLIST",
                    "CLOCK"):
            for line in b.info.get(key, []):
                out("%s %s: %s" % (b.label, key.lower(), line))
        if "long" in b.info:
            out("%s long nap: %s" % (b.label, b.info["long"]))
        if "trace_overrun" in b.info:
            out("%s trace: %s events overrun" % (b.label,
                                                 b.info["trace_overrun"]))
        for f in b.failures:
            out("%s FAILED: %s" % (b.label, f))


def write_summary_csv(boots, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        rows = [b.summary() for b in boots]
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow(r)


def plan(naps, smps, short):
    """The boots of a run: [(label, sections, smp, append, net, vm_args)].

    The polling list's boot polls it from acpi_idle's polling state
    (vm-run --cstates gives the TCG guest one) and resizes the receive ring under a flood, and
    a resize drops what the ring holds, as virtio-net does without the
    poller too.  TCP retransmits such a packet; QEMU's user-mode network
    (slirp) has been seen not to, leaving a connection stuck for good, so
    that boot uses the bridged network, where the host kernel's TCP
    talks to the guest's, when it can (root and /dev/net/tun)."""
    pol = "cpuidle_pollist.enable=1"
    cst = ("--cstates",)
    pol_net = "bridge" if netns.bridge_usable()[0] else "user"
    if short:
        return [("smp2", ["naps:%d" % naps, "noise:5", "longnap:20",
                          "hotplug:10", "fuzz:400:3"], 2, "", "user", ()),
                ("pollist", ["pollist:2", "naps:20"], 2, pol, pol_net, cst),
                ("work", ["worknaps:%d" % naps], 2, "", "user", ())]
    boots = []
    for smp in smps:
        boots.append(("smp%d" % smp,
                      ["naps:%d" % naps, "noise:10", "longnap:120",
                       "hotplug:%d" % max(20, naps // 50),
                       "fuzz:10000:4"], smp, "", "user", ()))
    boots.append(("pollist", ["pollist:20", "naps:%d" % max(50, naps // 10)],
                  max(smps), pol, pol_net, cst))
    # Wake on work: napd's handshake and the kernel's entry, aimed at by
    # the host's requests, with no IRQ armed (guest/stress.sh worknaps).
    boots.append(("work", ["worknaps:%d" % naps], min(smps), "", "user", ()))
    return boots


def t_stress_short():
    """HOST_TESTS entry: the short form (150 naps, every check)."""
    boots = []
    for label, sections, smp, append, net, vm_args in plan(150, [2], True):
        b = Boot(label, sections, smp=smp, append=append, seed=7,
                 timeout=1500, net=net, vm_args=vm_args)
        b.run()
        boots.append(b)
    lines = []
    print_summary(boots, lines.append)
    fails = [f for b in boots for f in b.failures]
    s = [b.summary() for b in boots]
    detail = "%d naps, %d requests, %d lost, %d/%d phases hit, %d fuzz " \
        "writes, %d s" % (sum(x["naps"] for x in s),
                          sum(x["requests"] for x in s),
                          sum(x["lost"] for x in s), s[0]["phases_hit"],
                          len(REQUIRED), sum(x["fuzz_writes"] for x in s),
                          sum(x["duration_s"] for x in s))
    console = "\n".join(b.console for b in boots)
    if fails:
        return "failed", fails[0] + "; " + detail, console
    return "passed", detail, console
