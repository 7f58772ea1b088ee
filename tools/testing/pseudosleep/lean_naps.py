# SPDX-License-Identifier: GPL-2.0
"""Lean naps on the server-shaped Debian guest (issue 35): one boot, napd
run in phases (lean-naps-guest.sh), GETs from the host over the bridge,
and the PM core's per-device trace events read back.  Shared by
tests/test_lean_naps.py and lean-naps-bench."""

import json
import os
import re
import shutil
import subprocess
import time

import hosttests
import netns
import pslib

HERE = os.path.dirname(os.path.abspath(__file__))
GUEST_SCRIPT = os.path.join(HERE, "lean-naps-guest.sh")
NAPD_DIR = os.path.join(pslib.TOP, "tools", "power", "napd")
ROOTFS = hosttests.DEBIAN_ROOTFS

# PCI classes (base class and subclass) the lean policy keeps.
USB_HOST, SATA, NVME = 0x0c03, 0x0106, 0x0108
# PCI-to-PCI, CardBus and semi-transparent bridges: devices below them.
PCI_BRIDGES = (0x0604, 0x0607, 0x0609)

# Driver errors a nap must not cause (issue 35).
DRIVER_ERRORS = re.compile(
    r"error in resume|Check power mode failed|root hub lost power|"
    r"nvme\S* .*(reset|timeout|abort)|ata\d+.*(hard resetting|"
    r"SATA link down|link is slow)|xhci.*(died|HC died)", re.I)

TRACE_EV = re.compile(
    r"\s(\d+\.\d+): (device_pm_callback_start|device_pm_callback_end|"
    r"suspend_resume): (.*)$")


def skip_reason():
    """Why the lean-naps guest cannot run here, or None."""
    if hosttests.DEBIAN_OWN_KERNEL:
        return "DEBIAN_KERNEL=1: Debian's kernel does not nap"
    rootfs, why = hosttests.debian_rootfs()	# up to date with the kernel
    if not rootfs:
        return "no Debian image: " + why
    if not netns.bridge_usable():
        return "no bridge networking (root and /dev/net/tun)"
    if not os.path.exists(os.path.join(pslib.BUILD, "obj", ".config")):
        return "no kernel build in %s" % pslib.BUILD
    for opt in ("BLK_DEV_NVME", "USB_XHCI_HCD", "SATA_AHCI", "E1000E",
                "FTRACE", "PM_PSEUDOSLEEP"):
        if pslib.kernel_config(opt) != "y":
            return "the kernel lacks CONFIG_%s" % opt
    return None


def build_napd():
    """napd, static, from this tree: (path, None) or (None, why)."""
    p = subprocess.run(["make", "-s", "-C", NAPD_DIR, "napd"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode:
        return None, p.stdout.decode(errors="replace")[-300:]
    return os.path.join(NAPD_DIR, "napd"), None


class Session:
    """One boot of the Debian guest running lean-naps-guest.sh."""

    def __init__(self, timeout=900, append=""):
        napd, why = build_napd()
        if not napd:
            raise RuntimeError("cannot build napd: " + why)
        self.g = pslib.Guest(
            "while [ ! -e /mnt/add/go ]; do sleep 0.2; done; "
            "sh /mnt/add/lean-naps-guest.sh",
            nic="e1000e", net="bridge", timeout=timeout, append=append,
            extra=["--rootfs", ROOTFS, "--mem", "2G"])
        shutil.copy(napd, os.path.join(self.g.share, "napd"))
        shutil.copy(GUEST_SCRIPT, self.g.share)
        shutil.copy(os.path.join(HERE, "guest", "keep-harness.sh"),
                    self.g.share)
        self.g.signal("go")
        self.lines = []
        self.phase = 0
        self.info = {}

    def wait(self, pattern, timeout):
        return self.g.wait_line(pattern, timeout, on_line=self.lines.append)

    def ready(self, timeout=600):
        ok = self.wait("^READY", timeout)
        self.info = guest_info(self.lines)
        return bool(ok)

    def get(self, timeout=10):
        """One GET to Apache: (answered, seconds)."""
        with netns.inside(self.g.netns):
            body, took = pslib.http_get(80, host=netns.GUEST_IP,
                                        timeout=timeout)
        return bool(body and b"pseudosleep debian guest" in body), took

    def gets(self, n, gap):
        """n GETs, each after a pause of gap s: (answered times, lost)."""
        times, lost = [], 0
        for _ in range(n):
            time.sleep(gap)
            ok, took = self.get()
            if ok:
                times.append(took)
            else:
                lost += 1
        return times, lost

    def run_phase(self, args, n, gap):
        """napd with ARGS while n GETs are sent gap s apart.  Returns a
        dict: times, lost, exit, restored, stats, list, trace, out."""
        k = self.phase
        self.phase += 1
        with open(os.path.join(self.g.share, "phase-%d" % k), "w") as f:
            f.write(args + "\n")
        if not self.wait("^PHASE-%d-STARTED" % k, 120):
            raise RuntimeError("phase %d (%s): napd did not start" % (k, args))
        time.sleep(1.0)
        times, lost = self.gets(n, gap)
        self.g.signal("stop-%d" % k)
        # napd may be napping: GETs wake it until the phase is over.
        end = time.monotonic() + 120
        done = None
        while time.monotonic() < end and not done:
            self.get(timeout=2)
            done = self.wait("^PHASE-%d-DONE" % k, 0.5)
        res = {"times": times, "lost": lost, "done": bool(done)}
        for line in self.lines:
            m = re.match(r"PHASE-%d-EXIT (\d+)" % k, line)
            if m:
                res["exit"] = int(m.group(1))
            m = re.match(r"RESTORED-%d (\w+)" % k, line)
            if m:
                res["restored"] = m.group(1) == "yes"
        res["out"] = self.read("napd-%d.out" % k)
        res["stats"] = napd_stats(res["out"])
        res["list"] = self.read("list-%d.txt" % k)
        res["trace"] = self.read("trace-%d.txt" % k)
        return res

    def read(self, name):
        try:
            with open(os.path.join(self.g.share, name),
                      errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def finish(self):
        """End the run: (dmesg text, console)."""
        self.g.signal("done")
        self.wait("^FINISHED", 60)
        try:
            self.g.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            # SIGTERM: vm-run stops QEMU and removes its namespace.
            self.g.proc.terminate()
        self.g.finish(timeout=60)
        dmesg, console = self.read("dmesg.txt"), self.g.console()
        # What the guest left, for a look after a failure.
        keep = os.path.join(pslib.BUILD, "lean-naps-last")
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(self.g.share, keep, ignore=shutil.ignore_patterns(
            "napd", "*.sock"))
        with open(os.path.join(keep, "output.txt"), "w") as f:
            f.write("\n".join(self.g.output) + "\n")
        self.g.cleanup()
        return dmesg, console


def guest_info(lines):
    """The guest's NIC, PCI devices (address -> (class, driver)) and USB
    root hubs (name -> host controller's address)."""
    info = {"nic": None, "pci": {}, "usb": {}}
    for line in lines:
        w = line.split()
        if w[:1] == ["NIC"] and len(w) > 1:
            info["nic"] = w[1]
        elif w[:1] == ["PCI"] and len(w) == 4:
            info["pci"][w[1]] = (int(w[2], 16), w[3])
        elif w[:1] == ["USB"] and len(w) == 3:
            info["usb"][w[1]] = w[2]
    return info


def kept_devices(info):
    """The devices the lean policy must keep out of naps: {name: what}
    for the USB host controllers, their root hubs, NVMe and SATA
    controllers with a driver, and the PCI functions without a driver
    on bus 00, q35's root bus, that are not bridges (on q35 those have
    no device below them)."""
    kept = {}
    for addr, (cls, drv) in info["pci"].items():
        what = {USB_HOST: "USB host", NVME: "NVMe", SATA: "SATA"}.get(
            cls >> 8)
        if what and drv != "-":
            kept[addr] = "%s controller (%s)" % (what, drv)
        elif drv == "-" and cls >> 8 not in PCI_BRIDGES and \
                addr.split(":")[1] == "00":
            kept[addr] = "PCI function without a driver (class %06x)" % cls
    for hub, host in info["usb"].items():
        kept[hub] = "USB root hub of %s" % host
    return kept


def napd_stats(out):
    for line in out.splitlines():
        if line.startswith('{"naps"'):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return {}


def parse_trace(text):
    """The naps in a trace of the lean instance: a list of dicts with
    'dev' {device: [suspend ms, resume ms, driver]}, 'cb' {device: number
    of its suspend and resume callbacks (prepare and complete left out)},
    'phases'
    {suspend_resume name: ms} and 'entry_ms', 'exit_ms': entry from
    dpm_prepare's start to machine_suspend's, exit from machine_suspend's
    end to dpm_complete's."""
    naps, cur, open_cb, marks = [], None, {}, {}
    for line in text.splitlines():
        m = TRACE_EV.search(line)
        if not m:
            continue
        ts, ev, rest = float(m.group(1)), m.group(2), m.group(3)
        if ev == "suspend_resume":
            sm = re.match(r"(\w+)\[\d+\] (begin|end)", rest)
            if not sm:
                continue
            name, edge = sm.groups()
            if name == "dpm_prepare" and edge == "begin":
                cur = {"dev": {}, "cb": {}, "phases": {}, "t": {}}
                naps.append(cur)
            if cur is None:
                continue
            if edge == "begin":
                marks[name] = ts
            elif name in marks:
                cur["phases"][name] = cur["phases"].get(name, 0.0) + \
                    (ts - marks.pop(name)) * 1e3
            cur["t"]["%s %s" % (name, edge)] = ts
            continue
        if cur is None:
            continue
        if ev == "device_pm_callback_start":
            cm = re.match(r"(\S*) (\S+), parent: \S+, (.*)\[(\w+)\]$",
                          rest)
            if cm:
                open_cb[cm.group(2)] = (ts, cm.group(4) == "resume",
                                        cm.group(1))
                # prepare and complete carry no ops name: the PM core
                # traces them for kept devices too and then calls nothing.
                if cm.group(3).strip():
                    cur["cb"][cm.group(2)] = cur["cb"].get(cm.group(2),
                                                           0) + 1
            continue
        cm = re.match(r"(\S*) (\S+), err=", rest)
        if not cm or cm.group(2) not in open_cb:
            continue
        t0, resume, drv = open_cb.pop(cm.group(2))
        d = cur["dev"].setdefault(cm.group(2), [0.0, 0.0, drv])
        d[1 if resume else 0] += (ts - t0) * 1e3
    for nap in naps:
        t = nap.pop("t")
        nap["entry_ms"] = span(t, "dpm_prepare begin",
                               "machine_suspend begin")
        nap["exit_ms"] = span(t, "machine_suspend end", "dpm_complete end")
    return [n for n in naps if n["entry_ms"] is not None and
            n["exit_ms"] is not None]


def device_rows(naps, policy):
    """Per device that the PM core traced in some nap: mean suspend and
    resume ms per nap (prepare and complete included; 0 in the naps it
    was not traced) and its suspend and resume callbacks per nap
    (prepare and complete left out: 0 for a kept device)."""
    rows = {}
    for nap in naps:
        for dev, (sus, res, drv) in nap["dev"].items():
            r = rows.setdefault(dev, [0.0, 0.0, drv, 0])
            r[0] += sus
            r[1] += res
            r[3] += nap["cb"].get(dev, 0)
    n = max(len(naps), 1)
    return [{"policy": policy, "device": dev, "driver": drv or "-",
             "suspend_ms": round(s / n, 3), "resume_ms": round(r / n, 3),
             "callbacks_per_nap": round(c / n, 2), "naps": len(naps)}
            for dev, (s, r, drv, c) in rows.items()]


def span(t, a, b):
    if a in t and b in t and t[b] >= t[a]:
        return (t[b] - t[a]) * 1e3
    return None


def driver_errors(dmesg):
    """Kernel log lines after the run's start mark that are driver errors
    a nap caused, or generic kernel complaints."""
    start = dmesg.find("lean-naps: start")
    tail = dmesg[start:] if start >= 0 else dmesg
    return [l for l in tail.splitlines()
            if DRIVER_ERRORS.search(l) or pslib.BAD_DMESG.search(l)]


def phase_log(dmesg, k):
    """The kernel log of phase k: from its mark to the next phase's (or
    the end mark)."""
    start = dmesg.find("lean-naps: phase %d:" % k)
    if start < 0:
        return ""
    ends = [i for i in (dmesg.find("lean-naps: phase %d:" % (k + 1)),
                        dmesg.find("lean-naps: end")) if i > start]
    return dmesg[start:min(ends)] if ends else dmesg[start:]
