# SPDX-License-Identifier: GPL-2.0
"""Host-side tests: tests/test_host.py makes each HOST_TESTS entry a pytest
item.  Each returns (status, detail, console) where console is the guest's
console text (checked for kernel warnings by its "dmesg clean" item) or
None when no guest ran to completion worth checking."""

import contextlib
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import netns
import pslib
from stats import median


def vm_run(args, timeout=300, env=None, quiet=True):
    p = subprocess.run([pslib.VM_RUN] + (["--quiet"] if quiet else []) + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout + 60,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout.decode(errors="replace"), \
        p.stderr.decode(errors="replace")


def drop_kept_log(stderr):
    """vm-run keeps the console log of a failed guest in /tmp and names it;
    tests that fail guests on purpose remove it."""
    m = re.search(r"console log (/tmp/vm-run-console\.\w+\.log)\)", stderr)
    if m and os.path.exists(m.group(1)):
        os.unlink(m.group(1))


def t_version():
    log = "/tmp/ps-version-console.log"
    rc, out, err = vm_run(["--log", log, "--", "cat", "/proc/version"])
    text = open(log, errors="replace").read()
    if rc != 0:
        return "failed", "exit %d: %s" % (rc, err.strip()[-200:]), text
    if "-pseudosleep" not in out:
        return "failed", "not our kernel: %s" % out.strip(), text
    return "passed", out.split()[2], text


def t_false():
    log = "/tmp/ps-false-console.log"
    rc, out, err = vm_run(["--log", log, "--", "false"])
    text = open(log, errors="replace").read()
    return ("passed" if rc == 1 else "failed"), "exit %d" % rc, text


def t_exit_status():
    rc, out, err = vm_run(["--", "sh", "-c", "echo hello; exit 7"])
    ok = rc == 7 and out.strip() == "hello"
    return ("passed" if ok else "failed"), "exit %d, output %r" % (rc, out), \
        None


def t_panic():
    t0 = time.monotonic()
    rc, out, err = vm_run(["--timeout", "240", "--", "sh", "-c",
                           "echo c > /proc/sysrq-trigger; sleep 600"],
                          timeout=240)
    took = time.monotonic() - t0
    drop_kept_log(err)
    # 125: vm-run saw the guest die; 124 would mean it only timed out.
    ok = rc == 125 and "panic" in err
    return ("passed" if ok else "failed"), \
        "exit %d after %.0f s: %s" % (rc, took, err.strip().splitlines()[0]
                                      if err.strip() else ""), None


def t_bad_options():
    bad = [["--smp", "0", "--", "true"], ["--fwd", "80", "--", "true"],
           ["--nic", "rtl", "--", "true"], ["--timeout", "-1", "--", "true"],
           ["--kernel", "/nonexistent", "--", "true"],
           ["--nics", "3", "--", "true"], ["--fwd1", "8080:80", "--", "true"],
           ["--nics", "2", "--fwd1", "x", "--", "true"],
           ["--nics", "2", "--nic", "none", "--", "true"], []]
    for args in bad:
        rc, out, err = vm_run(args)
        if rc != 2 or "usage" not in err:
            return "failed", "%r: exit %d %r" % (args, rc, err[-100:]), None
    return "passed", "%d bad invocations rejected" % len(bad), None


def t_accel_probe_fails():
    """A KVM probe that fails (injected) means TCG, and vm-run says why."""
    env = {"VM_RUN_KVM_PROBE": "fail", "VM_RUN_ACCEL": ""}
    rc, out, err = vm_run(["--", "sh", "-c", "echo hi; exit 3"], env=env,
                          quiet=False)
    m = re.search(r"vm-run: accel (\S+) \((.*)\)", err)
    ok = rc == 3 and out.strip() == "hi" and m and m.group(1) == "tcg" \
        and "injected" in m.group(2)
    return ("passed" if ok else "failed"), "exit %d, %s" % (
        rc, m.group(0) if m else err.strip()[-160:]), None


def t_accel_kvm_silent():
    """A KVM guest that prints nothing (vCPUs held with -S, probe passed
    by injection) is stopped and the command runs under TCG, once."""
    env = {"VM_RUN_KVM_PROBE": "pass", "VM_RUN_KVM_STALL": "1",
           "VM_RUN_KVM_SILENT_S": "3", "VM_RUN_ACCEL": ""}
    t0 = time.monotonic()
    rc, out, err = vm_run(["--", "sh", "-c", "echo once; exit 5"], env=env,
                          quiet=False)
    took = time.monotonic() - t0
    retried = "retrying under TCG" in err
    ok = rc == 5 and out.strip() == "once" and retried
    return ("passed" if ok else "failed"), "exit %d after %.0f s, %s" % (
        rc, took, "retried under TCG" if retried else err.strip()[-160:]), \
        None


def t_no_boot_fails_fast():
    """A guest that never reaches init (vCPUs held with -S) is stopped at
    --boot-timeout with exit 125, not at --timeout."""
    t0 = time.monotonic()
    rc, out, err = vm_run(["--accel", "tcg", "--boot-timeout", "5",
                           "--qemu-arg=-S", "--", "true"])
    took = time.monotonic() - t0
    drop_kept_log(err)
    ok = rc == 125 and "did not boot" in err and "console stayed empty" in err
    return ("passed" if ok else "failed"), "exit %d after %.0f s: %s" % (
        rc, took, (err.strip().splitlines() or [""])[0]), None


def t_reset_named():
    """A guest reset ends QEMU with status 0 under -no-reboot; vm-run
    names it, before init (busybox reboots as PID 1) and after (sysrq b),
    instead of a bare "no exit status".  reboot=t: by a triple fault."""
    cases = (("ended before its init",
              ["--append", "reboot=t rdinit=/bin/busybox -- reboot -f",
               "--", "true"]),
             ("stopped without an exit status",
              ["--append", "reboot=t", "--", "sh", "-c",
               "echo b > /proc/sysrq-trigger; sleep 60"]))
    said = []
    for want, args in cases:
        # TCG: QEMU logs a triple fault only there, and a KVM guest that
        # ends before init would be taken for KVM failing to boot ours.
        rc, out, err = vm_run(["--accel", "tcg", "--timeout", "120"] + args,
                              timeout=120)
        drop_kept_log(err)
        line = next((l for l in err.splitlines() if want in l), "")
        if rc != 125 or "QEMU exited 0: the guest triple-faulted" not in line:
            return "failed", "exit %d, wanted %r: %s" % (
                rc, want, err.strip()[-200:]), None
        said.append(line.split(" (console log")[0].replace("vm-run: ", ""))
    return "passed", "; ".join(said), None


def t_status_through_console_flood():
    """The exit status arrives while the kernel writes to the console at
    full speed (it has a virtio-serial port of its own)."""
    cmd = ("dmesg -n 8; (while :; do echo flood > /dev/kmsg; done) & "
           "sleep 1; exit 9")
    rc, out, err = vm_run(["--", "sh", "-c", cmd])
    return ("passed" if rc == 9 else "failed"), "exit %d" % rc, None


def qemus_under(tmp):
    """PIDs of the processes whose command line names the directory tmp
    (vm-run's QEMU: its files are in vm-run's TMPDIR)."""
    found = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if tmp.encode() in f.read():
                    found.append(d)
        except OSError:
            pass
    return found


def vm_run_signalled(signum, grace):
    """vm-run running a guest, then signum: (guest was ready, exit status,
    QEMUs left grace s after vm-run's exit, TMPDIR's entries left)."""
    tmp = tempfile.mkdtemp(prefix="ps-signal.")
    p = subprocess.Popen([pslib.VM_RUN, "--quiet", "--", "sh", "-c",
                          "echo READY; sleep 600"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, TMPDIR=tmp))
    try:
        ready = p.stdout.readline().decode().strip() == "READY"
        p.send_signal(signum)
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    end = time.monotonic() + grace
    while qemus_under(tmp) and time.monotonic() < end:
        time.sleep(0.2)
    qemus = qemus_under(tmp)
    for pid in qemus:	# do not leave one behind if the test fails
        with contextlib.suppress(OSError):
            os.kill(int(pid), signal.SIGKILL)
    left = os.listdir(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    return ready, rc, qemus, left


def t_sigterm_cleans_up():
    """SIGTERM to vm-run kills QEMU and removes vm-run's temporary files."""
    # No grace: vm-run itself stops QEMU before it exits.
    ready, rc, qemus, left = vm_run_signalled(signal.SIGTERM, 0)
    ok = ready and rc == 128 + signal.SIGTERM and not qemus and not left
    return ("passed" if ok else "failed"), \
        "exit %d, QEMU left: %d, temporary files left: %s" % (
            rc, len(qemus), left or "none"), None


def t_sigkill_leaves_no_qemu():
    """SIGKILL to vm-run (no clean-up possible) still ends its QEMU: the
    kernel kills it when vm-run dies (PR_SET_PDEATHSIG)."""
    ready, rc, qemus, left = vm_run_signalled(signal.SIGKILL, 10)
    ok = ready and rc == -signal.SIGKILL and not qemus
    return ("passed" if ok else "failed"), \
        "exit %d, QEMU left: %d (temporary files left as vm-run died: %d)" \
        % (rc, len(qemus), len(left)), None


def t_nic_and_fwd():
    port = pslib.free_port()
    g = pslib.Guest("httpd -p 80 -h /www; grep -E 'virtio[0-9]+-input' "
                    "/proc/interrupts | head -1; echo READY; "
                    "while [ ! -e /mnt/add/done ]; do sleep 0.1; done",
                    fwd=["%d:80" % port])
    try:
        irq = g.wait_line(r"^\s*(\d+):.*virtio", 120)
        ready = g.wait_line("READY", 60)
        body, _ = pslib.http_get(port) if ready else (None, 0)
    finally:
        g.signal("done")
        rc, console = g.close()
    if not irq:
        return "failed", "no virtio NIC IRQ in /proc/interrupts", console
    if body is None or b"pseudosleep guest" not in body:
        return "failed", "forwarded port did not reach guest httpd", console
    return ("passed" if rc == 0 else "failed"), \
        "NIC IRQ %s, HTTP answered, exit %d" % (irq.group(1), rc), console


def nap_with_requests(arm, port, g, max_wait=60):
    """Send a GET every second once the guest naps, until the nap ends.
    Returns (nap match, list of (body, seconds))."""
    answers = []
    if not g.wait_line(r"^NAPPING 1", 120):
        return None, answers
    time.sleep(1.0)
    end = time.monotonic() + max_wait
    nap = None
    while time.monotonic() < end and nap is None:
        answers.append(pslib.http_get(port, timeout=15))
        nap = g.wait_line(r"^NAP 1 (\S+) wake_irq=(\S+).*latency_ns=(\d+)",
                          1.0)
    return nap, answers


def t_pseudo_http_wakes():
    port = pslib.free_port()
    g = pslib.Guest("/usr/share/pseudosleep/nap-setup.sh nic && "
                    "/usr/share/pseudosleep/nap-once.sh 1",
                    fwd=["%d:80" % port])
    try:
        irqs = g.wait_line(r"^NIC-IRQS (\S+)", 120)
        nap, answers = nap_with_requests("nic", port, g)
        g.wait_line("NAPS-DONE", 60)
    finally:
        rc, console = g.close()
    if not irqs or not nap:
        return "failed", "no nap reported (exit %d)" % rc, console
    nic = set()
    for part in irqs.group(1).split(","):
        nic.add(part)
    lost = [a for a in answers if a[0] is None]
    if nap.group(1) != "ok":
        return "failed", "nap %s" % nap.group(1), console
    if nap.group(2) not in nic:
        return "failed", "woken by IRQ %s, NIC has %s" % (
            nap.group(2), irqs.group(1)), console
    if lost or not answers:
        return "failed", "%d of %d requests lost" % (len(lost), len(answers)), \
            console
    return "passed", "woken by NIC IRQ %s, %d requests answered, wake " \
        "latency %.3f ms" % (nap.group(2), len(answers),
                             int(nap.group(3)) / 1e6), console


def t_rearm_after_rebind():
    """Arm the NIC, then unbind and bind its driver (it frees its IRQs and
    requests new ones, as a vector reallocation does): the stale arms
    leave wake_irq and are counted, and the NIC's new IRQs, armed again,
    end a nap on a request."""
    port = pslib.free_port()
    g = pslib.Guest("s=/usr/share/pseudosleep; $s/nap-setup.sh nic && "
                    "$s/nic-rebind.sh && $s/nap-setup.sh nic && "
                    "$s/nap-once.sh 1", fwd=["%d:80" % port])
    try:
        before = g.wait_line(r"^NIC-IRQS (\S+)", 120)
        unbound = g.wait_line(r"^UNBOUND wake_irq=(\S*) dropped=(\d+)", 60)
        after = g.wait_line(r"^NIC-IRQS (\S+)", 60)
        nap, answers = nap_with_requests("nic", port, g)
        g.wait_line("NAPS-DONE", 60)
    finally:
        rc, console = g.close()
    if not before or not unbound or not after:
        return "failed", "setup or rebind did not finish (exit %d)" % rc, \
            console
    armed = before.group(1).split(",")
    if unbound.group(1):
        return "failed", "wake_irq still lists %s after the unbind" % \
            unbound.group(1), console
    if int(unbound.group(2)) != len(armed):
        return "failed", "wake_irq_dropped is %s, %d IRQs were armed" % (
            unbound.group(2), len(armed)), console
    if "wake-handled mark dropped" not in console:
        return "failed", "no log line for the dropped arms", console
    if not nap or nap.group(1) != "ok":
        return "failed", "no nap after re-arming", console
    if nap.group(2) not in after.group(1).split(","):
        return "failed", "woken by IRQ %s, the NIC now has %s" % (
            nap.group(2), after.group(1)), console
    lost = [a for a in answers if a[0] is None]
    if lost or not answers:
        return "failed", "%d of %d requests lost" % (len(lost), len(answers)), \
            console
    return "passed", "armed %s, %s dropped at unbind, re-armed %s, woken by " \
        "IRQ %s, %d requests answered" % (before.group(1), unbound.group(2),
                                          after.group(1), nap.group(2),
                                          len(answers)), console


def t_pseudo_unarmed_nic():
    """The NIC is awake but only the RTC is armed: a request during the nap
    is received by the NIC (its IRQ is served) but does not end the nap;
    the RTC alarm does, and then the request is answered."""
    port = pslib.free_port()
    g = pslib.Guest("/usr/share/pseudosleep/nap-setup.sh rtc && "
                    "echo 0 > /sys/class/rtc/rtc0/wakealarm && "
                    "echo +6 > /sys/class/rtc/rtc0/wakealarm && "
                    "grep -m1 -E 'virtio[0-9]+-input' /proc/interrupts && "
                    "/usr/share/pseudosleep/nap-once.sh 1 && "
                    "grep -m1 -E 'virtio[0-9]+-input' /proc/interrupts",
                    fwd=["%d:80" % port])
    try:
        rtc = g.wait_line(r"^RTC-IRQ (\d+)", 120)
        before = g.wait_line(r"^\s*\d+:\s+(\d+)\s+(\d+)", 30)
        if not g.wait_line(r"^NAPPING 1", 60):
            raise RuntimeError("guest did not nap")
        time.sleep(1.0)
        body, took = pslib.http_get(port, timeout=30)
        nap = g.wait_line(r"^NAP 1 (\S+) wake_irq=(\S+)", 60)
        after = g.wait_line(r"^\s*\d+:\s+(\d+)\s+(\d+)", 30)
        g.wait_line("NAPS-DONE", 30)
    finally:
        rc, console = g.close()
    if not (rtc and nap and before and after):
        return "failed", "guest output incomplete (exit %d)" % rc, console
    nic_irqs = sum(map(int, after.groups())) - sum(map(int, before.groups()))
    if nap.group(2) != rtc.group(1):
        return "failed", "woken by IRQ %s, not the RTC's %s" % (
            nap.group(2), rtc.group(1)), console
    if body is None:
        return "failed", "request lost", console
    if nic_irqs <= 0:
        return "failed", "NIC raised no interrupt during the nap", console
    return "passed", "woken by RTC IRQ %s after %d NIC interrupts; request " \
        "answered after the nap" % (rtc.group(1), nic_irqs), console


def t_mem_sleep_default():
    """mem_sleep_default=pseudo selects pseudo at boot, and survives the
    ACPI platform registering its suspend ops (which prefers deep)."""
    log = "/tmp/ps-memsleep-console.log"
    rc, out, err = vm_run(["--log", log, "--append",
                           "mem_sleep_default=pseudo", "--",
                           "cat", "/sys/power/mem_sleep"])
    text = open(log, errors="replace").read()
    ok = rc == 0 and "[pseudo]" in out and "deep" in out
    return ("passed" if ok else "failed"), out.strip(), text


def t_checkpatch():
    """scripts/checkpatch.pl --strict on our kernel C files and patches."""
    top = pslib.TOP
    kdir = os.path.join(pslib.BUILD, "linux")
    if not os.path.exists(os.path.join(kdir, "scripts/checkpatch.pl")):
        return "skipped", "no kernel tree at %s" % kdir, None
    p = subprocess.run([os.path.join(pslib.HERE, "run-checkpatch"), top, kdir],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = p.stdout.decode(errors="replace").splitlines()
    bad = [l for l in lines if not l.strip().startswith("CLEAN")]
    clean = len(lines) - len(bad)
    if p.returncode or bad:
        return "failed", "; ".join(bad[:3]), None
    return "passed", "%d files and patches clean" % clean, None


def long_nap(setup, append):
    """A 20 s nap ended by the RTC after the shell commands setup, booted
    with append: the console must stay clean (its dmesg item checks it for
    stall and lockup reports) and the nap must be ended by the RTC alarm,
    not by the ticks and IPIs it served meanwhile."""
    g = pslib.Guest(
        setup +
        "/usr/share/pseudosleep/nap-setup.sh rtc && "
        "echo 0 > /sys/class/rtc/rtc0/wakealarm && "
        "echo +20 > /sys/class/rtc/rtc0/wakealarm && "
        "/usr/share/pseudosleep/nap-once.sh 1",
        append=append, timeout=300)
    rtc = g.wait_line(r"^RTC-IRQ (\d+)", 120)
    nap = g.wait_line(r"^NAP 1 (\S+) wake_irq=(\S+).* nap_ns=(\d+) "
                      r"spurious=(\d+)", 200)
    rc, console = g.close()
    if not nap or nap.group(1) != "ok":
        return "failed", "no nap (exit %d)" % rc, console
    secs = int(nap.group(3)) / 1e9
    if not rtc or nap.group(2) != rtc.group(1):
        return "failed", "nap ended by IRQ %s after %.1f s, not by the RTC" % (
            nap.group(2), secs), console
    return "passed", "napped %.1f s, %s interrupts served without waking" % (
        secs, nap.group(4)), console


def t_long_nap():
    """A 20 s nap with the RCU stall (5 s), soft lockup (4 s) and hung
    task (5 s) detectors made sensitive."""
    return long_nap("echo 2 > /proc/sys/kernel/watchdog_thresh && "
                    "echo 5 > /proc/sys/kernel/hung_task_timeout_secs && ",
                    "rcupdate.rcu_cpu_stall_timeout=5")


def t_long_nap_rcu_stall_min():
    """A 20 s nap with the RCU CPU stall timeout at its minimum (3 s) and
    the lockup detectors as booted, so only the stall timeout caps the
    4 s timer deferral: a grace period waits for two deadlines, and the
    stall detector must not report it."""
    return long_nap("", "rcupdate.rcu_cpu_stall_timeout=3")


NOISE = os.path.join(pslib.HERE, "noise")


def noise(ns, rate, duration, kinds=None):
    """Run the noise generator in namespace ns; its JSON result or None."""
    argv = [NOISE, "--netns", ns, "--rate", str(rate), "--duration",
            str(duration)] + (["--kinds", kinds] if kinds else [])
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=duration + 60)
    try:
        return json.loads(p.stdout.decode())
    except ValueError:
        return None


def answered_all(res):
    """'' when the guest answered every ARP request for it, every ping and
    every SYN to a closed port; else what it missed."""
    if not res:
        return "noise generator failed"
    miss = []
    if res["arp_answered"] < res["arp_asked"]:
        miss.append("ARP %d/%d" % (res["arp_answered"], res["arp_asked"]))
    if res["ping_answered"] < res["ping_sent"]:
        miss.append("ping %d/%d" % (res["ping_answered"], res["ping_sent"]))
    if res["rst"] < res["sent"].get("syn", 0):
        miss.append("RST %d/%d" % (res["rst"], res["sent"]["syn"]))
    return ", ".join(miss)


def bridge_or_skip():
    ok, why = netns.bridge_usable()
    return None if ok else ("skipped", "bridged network " + why, None)


def t_bridge_network():
    """vm-run --net bridge: the host side reaches the guest's own TCP,
    ARP and ICMP inside a private namespace, which is gone afterwards."""
    skip = bridge_or_skip()
    if skip:
        return skip
    g = pslib.Guest("httpd -p 80 -h /www; echo READY; "
                    "while [ ! -e /mnt/add/done ]; do sleep 0.1; done",
                    net="bridge")
    try:
        ready = g.wait_line("^READY", 120)
        with netns.inside(g.netns):
            body, _ = pslib.http_get(80, host=netns.GUEST_IP)
        res = noise(g.netns, 20, 2) if ready else None
    finally:
        g.signal("done")
        rc, console = g.close()
    miss = answered_all(res)
    if body is None or b"pseudosleep guest" not in body:
        return "failed", "no HTTP answer from %s" % netns.GUEST_IP, console
    if miss:
        return "failed", "unanswered: " + miss, console
    if netns.exists(g.netns):
        return "failed", "namespace %s left behind" % g.netns, console
    return ("passed" if rc == 0 else "failed"), \
        "HTTP, %d ARP, %d pings (median %.2f ms), %d SYN->RST answered" % (
            res["arp_answered"], res["ping_answered"],
            res.get("ping_rtt_ms_median", 0), res["rst"]), console


def guest_neigh(ns):
    """The host's neighbour entry for the guest, as `ip neigh show` says."""
    return subprocess.run(netns.command(ns, [
        "ip", "neigh", "show", netns.GUEST_IP]),
        stdout=subprocess.PIPE).stdout.decode().strip()


def ping_guest(ns, count):
    """Ping the guest from the host's namespace; ping's exit status."""
    return subprocess.run(netns.command(ns, [
        "ping", "-c", str(count), "-W", "3", netns.GUEST_IP]),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode


def reresolve_guest(ns):
    """Forget the guest's address, then need it: only the guest's kernel
    can answer the ARP request that follows.  (ping status, entry)."""
    subprocess.run(netns.command(ns, ["ip", "neigh", "flush", "dev",
                                      netns.BRIDGE]))
    return ping_guest(ns, 2), guest_neigh(ns)


def t_nap_answers_noise():
    """During a nap armed on the RTC only, with the NIC kept awake, the
    napping kernel answers ARP, ping and SYNs to closed ports from a noisy
    LAN, the host's ARP entry for the guest is refreshed by it, and the nap
    is ended by the RTC alarm, not by the noise."""
    skip = bridge_or_skip()
    if skip:
        return skip
    g = pslib.Guest("/usr/share/pseudosleep/nap-setup.sh rtc && "
                    "echo 0 > /sys/class/rtc/rtc0/wakealarm && "
                    "echo +12 > /sys/class/rtc/rtc0/wakealarm && "
                    "/usr/share/pseudosleep/nap-once.sh 1", net="bridge")
    neigh = ""
    try:
        rtc = g.wait_line(r"^RTC-IRQ (\d+)", 120)
        napping = g.wait_line(r"^NAPPING 1", 60)
        time.sleep(1.0)
        ping, neigh = reresolve_guest(g.netns)
        res = noise(g.netns, 20, 3) if napping else None
        nap = g.wait_line(r"^NAP 1 (\S+) wake_irq=(\S+).* spurious=(\d+)",
                          60)
        g.wait_line("NAPS-DONE", 30)
    finally:
        rc, console = g.close()
    if not (rtc and nap):
        return "failed", "no nap reported (exit %d)" % rc, console
    if nap.group(2) != rtc.group(1):
        return "failed", "nap ended by IRQ %s, not the RTC's %s" % (
            nap.group(2), rtc.group(1)), console
    if ping:
        return "failed", "ping during the nap failed; neighbour %r" % neigh, \
            console
    miss = answered_all(res)
    if miss:
        return "failed", "unanswered during the nap: " + miss, console
    return "passed", "ARP re-resolved (%s), %d frames of noise, %d ARP and " \
        "%d pings answered while napping; woken by RTC IRQ %s" % (
            " ".join(neigh.split()[-1:]), res["frames"],
            res["arp_answered"], res["ping_answered"], rtc.group(1)), console


IRQ_JIFFIES = re.compile(r"\[(\d+)\]\s+\S+\s+([\d.]+): irq_jiffies: .*"
                         r" jiffies=(\d+)")


def jiffies_lag(path, hz):
    """Read a trace of the irq_jiffies event probe (monotonic time and the
    jiffies each handler saw) and return (events, worst lag in s): how
    much further behind the monotonic clock jiffies were than at the
    CPU's freshest event."""
    offs = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = IRQ_JIFFIES.search(line)
            if m:
                offs.setdefault(int(m.group(1)), []).append(
                    float(m.group(2)) - int(m.group(3)) / hz)
    n = sum(len(o) for o in offs.values())
    return n, max([max(o) - min(o) for o in offs.values()] or [0.0])


HRTIMER_START = re.compile(r"hrtimer_start: hrtimer=(\S+) function=(\S+) "
                           r"expires=\d+ softexpires=(\d+)")
HRTIMER_EXPIRE = re.compile(r"hrtimer_expire_entry: hrtimer=(\S+) "
                            r"function=(\S+) now=(\d+)")


def hrtimer_lateness(path):
    """Read the hrtimer_start and hrtimer_expire_entry events of a trace
    and return (expiries, worst lateness in s, its function): how long
    after its soft expiry time each hrtimer ran, in its own clock base."""
    soft, n, worst, fn = {}, 0, 0.0, "-"
    with open(path, errors="replace") as f:
        for line in f:
            m = HRTIMER_START.search(line)
            if m:
                soft[m.group(1)] = int(m.group(3))
                continue
            m = HRTIMER_EXPIRE.search(line)
            if m and m.group(1) in soft:
                late = (int(m.group(3)) - soft.pop(m.group(1))) / 1e9
                n += 1
                if late > worst:
                    worst, fn = late, m.group(2)
    return n, worst, fn


# A handler that runs when jiffies were last updated at most a tick or two
# ago (10 ms each) sees them that far behind, plus the time the host kept
# the vCPU from running between the update and the trace event.  A nap
# that deferred a CPU's running tick let them fall up to the 1 s between
# two pings behind.
JIFFIES_LAG_MAX = 0.5
# An hrtimer runs at its expiry, plus the time the host kept the vCPU from
# running; a nap that deferred the CPUs' timers let them run seconds late.
HRTIMER_LATE_MAX = 0.25


def t_jiffies_fresh_in_nap():
    """During naps armed on the RTC only, the host pings the guest once a
    second: every interrupt handler sees jiffies up to date, traced by an
    event probe that reads jiffies_64 in each irq_handler_entry event,
    stamped on the monotonic clock, and every hrtimer runs on time (a nap
    is a suspend to idle that keeps the tick: no timer is deferred)."""
    skip = bridge_or_skip()
    if skip:
        return skip
    hz = int(pslib.kernel_config("HZ") or 0)
    if not hz:
        return "failed", "no CONFIG_HZ in the kernel's .config", None
    g = pslib.Guest("/usr/share/pseudosleep/nap-jiffies.sh 3 8", net="bridge")
    ping = None
    try:
        ready = g.wait_line("^JIFFIES-READY", 120)
        if ready:
            ping = subprocess.Popen(
                netns.command(g.netns, ["ping", "-q", "-i", "1",
                                        netns.GUEST_IP]),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        done = g.wait_line("^JIFFIES-DONE", 120) if ready else None
        naps = [l for l in g.output if l.startswith("NAP ")]
        n = worst = None
        if done:
            trace = os.path.join(g.share, "irq-jiffies.txt")
            n, worst = jiffies_lag(trace, hz)
            nt, late, late_fn = hrtimer_lateness(trace)
    finally:
        if ping:
            ping.kill()
            ping.wait()
        rc, console = g.close()
    if not done:
        return "failed", "the naps did not finish (exit %d)" % rc, console
    bad = [l for l in naps if " ok " not in l]
    if len(naps) != 3 or bad:
        return "failed", "naps: %s" % "; ".join(naps), console
    if n < 10:
        return "failed", "only %d interrupts traced" % n, console
    if worst > JIFFIES_LAG_MAX:
        return "failed", "a handler saw jiffies %.3f s behind (of %d)" % (
            worst, n), console
    if nt < 10:
        return "failed", "only %d hrtimer expiries traced" % nt, console
    if late > HRTIMER_LATE_MAX:
        return "failed", "%s ran %.3f s late (of %d hrtimers)" % (
            late_fn, late, nt), console
    return "passed", "%d handlers in 3 naps of 8 s, jiffies at most " \
        "%.0f ms behind; %d hrtimers, at most %.1f ms late (%s)" % (
            n, worst * 1e3, nt, late * 1e3, late_fn), console



WG_NAP = re.compile(r"^NAP (\d+) (\S+) wake_irq=(\S+) freeze_ns=(\d+) "
                    r"ping_ms=([\d.]+) handshake=(\d+)")


def t_wireguard_keys_through_nap():
    """A WireGuard tunnel between two network namespaces of the guest
    keeps its session keys through naps (hook patch 0029): the traffic
    after each of 4 naps armed on the RTC needs no new handshake.
    Without the patch WireGuard clears every peer's keys before each nap,
    as before a rare suspend, and takes the RTNL and waits in
    rcu_barrier() while doing so."""
    if pslib.kernel_config("WIREGUARD") != "y":
        return "failed", "no CONFIG_WIREGUARD in the kernel's .config", None
    g = pslib.Guest("/usr/share/pseudosleep/nap-wireguard.sh 4")
    try:
        first = g.wait_line(r"^WG-HANDSHAKE (\d+)", 120)
        done = g.wait_line("^WG-DONE", 120) if first else None
        naps = [WG_NAP.match(l) for l in g.output if l.startswith("NAP ")]
    finally:
        rc, console = g.close()
    if not done:
        return "failed", "the tunnel or the naps failed (exit %d)" % rc, \
            console
    if len(naps) != 4 or not all(naps):
        return "failed", "naps: %d reported" % len(naps), console
    aborted = [m.group(1) for m in naps if m.group(2) != "ok"]
    if aborted:
        return "failed", "naps %s aborted" % ",".join(aborted), console
    t0 = first.group(1)
    if t0 == "0":
        return "failed", "no handshake before the naps", console
    freeze = sorted(int(m.group(4)) / 1e6 for m in naps)
    ping = sorted(float(m.group(5)) for m in naps)
    figures = "first ping after a nap %.1f ms, freeze phase %.1f ms " \
        "(medians)" % ((ping[1] + ping[2]) / 2, (freeze[1] + freeze[2]) / 2)
    new = [m.group(1) for m in naps if m.group(6) != t0]
    if new:
        return "failed", "a new handshake after naps %s: the keys were " \
            "dropped; %s" % (",".join(new), figures), console
    return "passed", "4 naps, no new handshake; " + figures, console

def wg_keypair():
    """(private, public) WireGuard keys from wg(8)."""
    priv = subprocess.run(["wg", "genkey"], stdout=subprocess.PIPE,
                          check=True).stdout.strip()
    pub = subprocess.run(["wg", "pubkey"], input=priv, stdout=subprocess.PIPE,
                         check=True).stdout.strip()
    return priv.decode(), pub.decode()


def host_wg_peer(ns, priv, guest_pub):
    """wireguard-go as the host's end of a tunnel to the guest, in
    namespace NS: interface wgh, 10.78.0.1/24, the guest's port 51820 as
    the endpoint.  Returns the process (foreground), or None."""
    env = dict(os.environ, WG_PROCESS_FOREGROUND="1")
    sock = "/var/run/wireguard/wgh.sock"
    if os.path.exists(sock):        # left by a killed run
        os.unlink(sock)
    p = subprocess.Popen(netns.command(ns, ["wireguard-go", "-f", "wgh"]),
                         env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    key = tempfile.NamedTemporaryFile("w", delete=False)
    key.write(priv + "\n")
    key.close()
    try:
        end = time.monotonic() + 20
        while not os.path.exists(sock):
            if time.monotonic() > end or p.poll() is not None:
                p.kill()
                return None
            time.sleep(0.1)
        for argv in (["wg", "set", "wgh", "private-key", key.name, "peer",
                      guest_pub, "endpoint", netns.GUEST_IP + ":51820",
                      "allowed-ips", "10.78.0.2/32"],
                     ["ip", "addr", "add", "10.78.0.1/24", "dev", "wgh"],
                     ["ip", "link", "set", "wgh", "up"]):
            subprocess.run(netns.command(ns, argv), check=True)
    finally:
        os.unlink(key.name)
    return p


def t_wireguard_handshake_ends_nap():
    """A WireGuard peer on the LAN (wireguard-go on the host) starts a
    session with the guest while it naps, armed on the RTC only (40 s
    away): the handshake packet is a wakeup event of the "wireguard"
    wakeup source, which ends the nap, and an HTTP request through the
    tunnel is answered.  Without the event the handshake waits on its
    frozen worker until the RTC alarm."""
    skip = bridge_or_skip()
    if skip:
        return skip
    if pslib.kernel_config("WIREGUARD") != "y":
        return "failed", "no CONFIG_WIREGUARD in the kernel's .config", None
    guest_priv, guest_pub = wg_keypair()
    host_priv, host_pub = wg_keypair()
    g = pslib.Guest("s=/usr/share/pseudosleep; $s/nap-setup.sh rtc && "
                    "$s/wg-peer.sh && "
                    "echo 0 > /sys/class/rtc/rtc0/wakealarm && "
                    "echo +40 > /sys/class/rtc/rtc0/wakealarm && "
                    "$s/nap-once.sh 1", net="bridge", timeout=400)
    with open(os.path.join(g.share, "wg-keys"), "w") as f:
        f.write("%s\n%s\n" % (guest_priv, host_pub))
    peer, body, took, nap = None, None, 0.0, None
    try:
        rtc = g.wait_line(r"^RTC-IRQ (\d+)", 120)
        if g.wait_line("^WG-READY", 60):
            peer = host_wg_peer(g.netns, host_priv, guest_pub)
        if peer and g.wait_line(r"^NAPPING 1", 60):
            time.sleep(3)
            with netns.inside(g.netns):
                body, took = pslib.http_get(80, host="10.78.0.2", timeout=30)
        nap = g.wait_line(r"^NAP 1 (\S+) wake_irq=(\S+).* source=(\S*)", 60)
    finally:
        if peer:
            peer.terminate()
            try:
                peer.wait(10)
            except subprocess.TimeoutExpired:
                peer.kill()
        console = g.close()[1]
    if not rtc or not peer:
        return "failed", "the tunnel was not set up", console
    if not nap:
        return "failed", "no nap reported", console
    if body is None or b"pseudosleep guest" not in body:
        return "failed", "the request through the tunnel was lost; nap %s" \
            % nap.group(0), console
    if nap.group(1) != "ok" or nap.group(3) != "wireguard":
        return "failed", "nap %s: not ended by the handshake" % \
            nap.group(0), console
    return "passed", "the handshake ended the nap (source %s, not RTC IRQ " \
        "%s); the request through the tunnel answered in %.0f ms" % (
            nap.group(3), rtc.group(1), took * 1e3), console


def t_arp_entry_through_long_nap():
    """Through a 30 s nap armed on the RTC only, with the halted CPUs'
    timers deferred (the default), the host's ARP entry for the guest
    stays usable: the host's neighbour timers are cut to 2 s, so the entry
    goes stale between pings and is confirmed again by a probe only the
    napping kernel can answer; every ping is answered, the entry never
    fails, and the RTC, not the traffic, ends the nap."""
    skip = bridge_or_skip()
    if skip:
        return skip
    g = pslib.Guest("/usr/share/pseudosleep/nap-setup.sh rtc && "
                    "echo 0 > /sys/class/rtc/rtc0/wakealarm && "
                    "echo +30 > /sys/class/rtc/rtc0/wakealarm && "
                    "/usr/share/pseudosleep/nap-once.sh 1", net="bridge")
    states, lost = [], 0
    try:
        rtc = g.wait_line(r"^RTC-IRQ (\d+)", 120)
        napping = g.wait_line(r"^NAPPING 1", 60)
        for key, val in (("base_reachable_time_ms", "2000"),
                         ("delay_first_probe_time", "1")):
            subprocess.run(netns.command(g.netns, [
                "sysctl", "-qw", "net.ipv4.neigh.%s.%s=%s" % (netns.BRIDGE,
                                                             key, val)]),
                check=True)
        for _ in range(6 if napping else 0):
            time.sleep(3.0)
            states.append(guest_neigh(g.netns).split()[-1:])
            lost += ping_guest(g.netns, 1) != 0
        nap = g.wait_line(r"^NAP 1 (\S+) wake_irq=(\S+)", 60)
        g.wait_line("NAPS-DONE", 30)
    finally:
        rc, console = g.close()
    seen = " ".join(x[0] if x else "none" for x in states)
    if not (rtc and nap):
        return "failed", "no nap reported (exit %d)" % rc, console
    if nap.group(2) != rtc.group(1):
        return "failed", "nap ended by IRQ %s, not the RTC's %s" % (
            nap.group(2), rtc.group(1)), console
    if lost or len(states) < 6 or any(x in seen for x in ("FAILED",
                                                          "INCOMPLETE")):
        return "failed", "%d of %d pings lost; host's entry: %s" % (
            lost, len(states), seen), console
    return "passed", "6 pings over %d s of nap answered; host's entry " \
        "before each: %s; woken by RTC IRQ %s" % (
            6 * 3, seen, rtc.group(1)), console


def t_virtio_mem_nap():
    """Drivers see a nap as suspend-to-idle: virtio-mem with plugged memory
    refuses every suspend but s2idle (it cannot keep its state through
    firmware suspend), so it must let a nap through."""
    g = pslib.Guest(
        "for i in $(seq 120); do "
        "ls /sys/devices/system/memory | grep -qE 'memory([89]|[1-9][0-9]+)$'"
        " && break; sleep 1; done; "
        "echo MEMBLOCKS $(ls /sys/devices/system/memory | grep -c memory); "
        "/usr/share/pseudosleep/nap-setup.sh rtc && "
        "echo 0 > /sys/class/rtc/rtc0/wakealarm && "
        "echo +3 > /sys/class/rtc/rtc0/wakealarm && "
        "/usr/share/pseudosleep/nap-once.sh 1",
        append="memhp_default_state=online", timeout=300,
        extra=("--mem=512M,maxmem=1G",
               "--qemu-arg=-object",
               "--qemu-arg=memory-backend-ram,id=vmem0,size=256M",
               "--qemu-arg=-device",
               "--qemu-arg=virtio-mem-pci,id=vmem,memdev=vmem0,"
               "requested-size=128M"))
    blocks = g.wait_line(r"^MEMBLOCKS (\d+)", 200)
    nap = g.wait_line(r"^NAP 1 (\S+)", 200)
    rc, console = g.close()
    if not blocks or not re.search(r"virtio_mem", console or ""):
        return "failed", "virtio-mem did not probe (exit %d)" % rc, console
    if not nap or nap.group(1) != "ok":
        bad = re.search(r".*virtio_mem.*(suspend|unplug).*", console or "")
        return "failed", "nap %s: %s" % (
            nap.group(1) if nap else "missing",
            bad.group(0).strip() if bad else "exit %d" % rc), console
    return "passed", "napped with %s memory blocks, virtio-mem plugged" % (
        blocks.group(1)), console


def t_quiet_naps():
    """Naps print nothing per nap on the console at the default log level:
    4 naps add fewer than 4 console lines (before: about a dozen each)."""
    naps = 4
    g = pslib.Guest(
        "/usr/share/pseudosleep/nap-setup.sh rtc >/dev/null && "
        "echo QUIET-START > /dev/kmsg && ok=0 && "
        "for i in $(seq %d); do "
        "echo 0 > /sys/class/rtc/rtc0/wakealarm; "
        "echo +3 > /sys/class/rtc/rtc0/wakealarm; "
        "echo mem > /sys/power/state && ok=$((ok + 1)); done; "
        "echo QUIET-END > /dev/kmsg; sleep 1; echo NAPS-OK $ok" % naps,
        timeout=300)
    res = g.wait_line(r"^NAPS-OK (\d+)", 200)
    rc = g.finish()
    console = g.console() or ""
    g.cleanup()
    if not res or int(res.group(1)) != naps:
        return "failed", "naps: %s (exit %d)" % (
            res.group(1) if res else "none", rc), console
    start, end = console.find("QUIET-START"), console.find("QUIET-END")
    if start < 0 or end < start:
        return "failed", "markers not on the console", console
    # Whole lines strictly between the two marker lines.
    lines = console[start:end].splitlines()[1:-1]
    lines = [l for l in lines if l.strip()]
    if len(lines) >= naps:
        return "failed", "%d naps added %d console lines, e.g. %s" % (
            naps, len(lines), lines[0].strip()[:80]), console
    return "passed", "%d naps added %d console lines" % (naps, len(lines)), \
        console


WORK_ROUNDS = 50          # requests of each kind: new TCP, kept-alive, UDP
WORK_NOISE_RATE = 100     # frames/s of LAN noise throughout
NAP_SOURCE = re.compile(r"napd: nap \d+ slept ([\d.]+) ms .*wake_irq=(\S+)"
                        r"(?:.* wake_source=(\S+))?")


def memcached_udp_get(key, timeout=5.0):
    """One memcached get over UDP from the current namespace to the
    guest: the answer's text, or None."""
    import socket
    req = b"\x00\x01\x00\x00\x00\x01\x00\x00get %s\r\n" % key
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    try:
        s.sendto(req, (netns.GUEST_IP, 11211))
        ans, _ = s.recvfrom(2048)
        return ans[8:]
    except OSError:
        return None
    finally:
        s.close()


def wake_sources(out, since):
    """What ended each nap napd logged after line index SINCE of its
    output: a Counter of wake sources, "alarm" for napd's own alarm."""
    import collections
    c = collections.Counter()
    for line in out[since:]:
        m = NAP_SOURCE.search(line)
        if m:
            c["alarm" if m.group(2) == "alarm" else m.group(3) or "-"] += 1
    return c


def t_wake_on_work():
    """napd --wake-on task arms no IRQ and watches the servers with
    EPOLLWAKEUP.  Under 100 frames/s of LAN noise (ARP, ping, broadcast,
    SYNs to closed ports), first with no request: every nap ends by napd's
    own alarm, none by the noise.  Then 50 requests of each kind, a new
    HTTP connection, an echo on a connection kept alive from before the
    naps and a memcached get over UDP: each is answered, none lost, and
    the naps they meet end by a watched server's wakeup source."""
    import random
    import socket
    skip = bridge_or_skip()
    if skip:
        return skip
    g = pslib.Guest("NAPD_LIVE=1 NAPD_ECHO_PORT=8080 NAPD_MEMCACHED=11211 "
                    "/usr/share/pseudosleep/napd-run.sh --wake-on task "
                    "--port 8080 --udp-port 11211 --max-nap 2s "
                    "--log --stats", net="bridge", timeout=1200)
    lost, answered, quiet, busy = {}, {}, None, None
    done = restored = conn = bg = None
    try:
        if not g.wait_line("^NAPD-STARTED", 180):
            raise RuntimeError("napd did not start")
        time.sleep(2)
        with netns.inside(g.netns):
            conn = socket.create_connection((netns.GUEST_IP, 8080),
                                            timeout=15)
        if pslib.echo_roundtrip(conn, b"hello\n") != b"hello\n":
            raise RuntimeError("no echo on the kept-alive connection")
        # The echo may come back before napd has logged the nap it ended.
        time.sleep(2)
        # Noise alone: only napd's alarm (--max-nap) may end a nap.
        mark = len(g.output)
        res = noise(g.netns, WORK_NOISE_RATE, 10)
        quiet = wake_sources(list(g.output), mark)
        miss = answered_all(res)
        # Noise on, requests of each kind in turn.
        bg = subprocess.Popen([NOISE, "--netns", g.netns, "--rate",
                               str(WORK_NOISE_RATE), "--duration", "3600"],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        mark = len(g.output)
        rnd = random.Random(31)
        for i in range(3 * WORK_ROUNDS):
            time.sleep(rnd.uniform(0.4, 0.9))
            kind = ("tcp", "keepalive", "udp")[i % 3]
            with netns.inside(g.netns):
                if kind == "tcp":
                    body, _ = pslib.http_get(80, host=netns.GUEST_IP,
                                             timeout=15)
                    ok = body is not None and b"pseudosleep guest" in body
                elif kind == "keepalive":
                    msg = b"request %d\n" % i
                    ok = pslib.echo_roundtrip(conn, msg) == msg
                else:
                    ok = memcached_udp_get(b"k%d" % i) == b"END\r\n"
            d = answered if ok else lost
            d[kind] = d.get(kind, 0) + 1
        busy = wake_sources(list(g.output), mark)
        bg.terminate()
        bg.wait(30)
        done, restored = napd_stop(g, lambda: pslib.echo_roundtrip(conn, b"stop\n"))
    finally:
        if bg and bg.poll() is None:
            bg.kill()
        if conn:
            conn.close()
        console = g.close()[1]
    if quiet is None or busy is None:
        return "failed", "the run did not get through (lost %s)" % lost, \
            console
    work = sum(n for k, n in busy.items() if k not in ("alarm", "-"))
    detail = "noise alone: naps ended by %s; with requests: %s answered, " \
        "%s lost, naps ended by %s" % (
            dict(quiet), answered, lost or 0, dict(busy))
    if miss:
        return "failed", detail + "; unanswered noise: " + miss, console
    if lost or any(answered.get(k, 0) != WORK_ROUNDS
                   for k in ("tcp", "keepalive", "udp")):
        return "failed", detail, console
    if not quiet or set(quiet) != {"alarm"}:
        return "failed", detail + "; noise ended a nap", console
    if work < WORK_ROUNDS:
        return "failed", detail + "; fewer than %d naps ended by work" % \
            WORK_ROUNDS, console
    return napd_passed(detail, done, restored, console)


def link_flap_during_nap(nic):
    """Arm the NIC (power/nosleep keeps it), nap, then set its link down
    and up again from QEMU's monitor (QMP set_link) while the guest naps,
    as a switch port that flaps would: the kept NIC goes on working
    through it, and the next request ends the nap and is answered.  Every
    vector of e1000e is armed (it has no receive-only names), so a link
    change already ends its nap; virtio-net's link change comes on its
    config vector, which is not armed, so that nap lasts until the
    request."""
    port = pslib.free_port()
    g = pslib.Guest("s=/usr/share/pseudosleep; $s/nap-setup.sh nic && "
                    "$s/nap-once.sh 1 && "
                    "while [ ! -e /mnt/add/flapped ]; do sleep 0.2; done; "
                    "i=0; while [ $(cat /sys/class/net/eth0/carrier) != 1 ] "
                    "&& [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; "
                    "echo CARRIER $(cat /sys/class/net/eth0/carrier)",
                    fwd=["%d:80" % port], nic=nic, qmp=True, timeout=400)
    answers, flapped = [], []
    try:
        irqs = g.wait_line(r"^NIC-IRQS (\S+)", 120)
        nap = None
        if irqs and g.wait_line(r"^NAPPING 1", 120):
            time.sleep(2)
            for up in (False, True):
                flapped.append(pslib.qmp(g.qmp_path, "set_link",
                                         arguments={"name": "n0", "up": up}))
                time.sleep(2)
            nap = poke_until(
                g, r"^NAP 1 (\S+) wake_irq=(\S+)",
                lambda: answers.append(pslib.http_get(port, timeout=15)), 1.0)
        g.signal("flapped")
        carrier = g.wait_line(r"^CARRIER (\d)", 60)
    finally:
        rc, console = g.close()
    if not irqs or not nap:
        return "failed", "no nap reported (exit %d)" % rc, console
    if len(flapped) != 2 or any('"return"' not in r for r in flapped):
        return "failed", "set_link failed: %s" % flapped, console
    lost = [a for a in answers if a[0] is None]
    if lost or not answers:
        return "failed", "%d of %d requests lost after the link came back" \
            % (len(lost), len(answers)), console
    if nap.group(1) != "ok" or nap.group(2) not in irqs.group(1).split(","):
        return "failed", "nap %s, ended by IRQ %s, not the NIC's (%s)" % (
            nap.group(1), nap.group(2), irqs.group(1)), console
    if not carrier or carrier.group(1) != "1":
        return "failed", "the link is down after the nap", console
    return "passed", "%s: link down and up during the nap; woken by IRQ %s;" \
        " %d requests, 0 lost, the last in %.0f ms" % (
            nic, nap.group(2), len(answers), answers[-1][1] * 1e3), console


def t_link_flap_virtio():
    return link_flap_during_nap("virtio")


def t_link_flap_e1000e():
    return link_flap_during_nap("e1000e")


def t_timer_threads_on_time():
    """Timers run on time during a nap: the timerlat tracer's kernel
    threads, one per CPU and not freezable, sleep on a 1 ms hrtimer (as
    a driver's usleep_range() thread would) through 5 s awake and then a
    5 s nap in the same boot.  A nap that deferred idle CPUs' timers (as
    the old hrtimer patch did, by up to 4 s) would leave the threads
    almost no wakeups; here the nap must keep at least half the awake
    rate.  Latencies are reported, not judged: QEMU TCG's are noisy."""
    g = pslib.Guest("s=/usr/share/pseudosleep; $s/timerlat-nap.sh 5 awake "
                    "&& $s/timerlat-nap.sh 5 nap", timeout=400)
    rx = r"^TIMERLAT (\S+) mode=%s secs=(\S+) cpus=(\d+) samples=(\d+) " \
         r"max_us=(-?\d+) median_us=(-?\d+)"
    try:
        awake = g.wait_line(rx % "awake", 200)
        nap = g.wait_line(rx % "nap", 200) if awake else None
    finally:
        rc, console = g.close()
    if not awake or not nap:
        return "failed", "no timerlat result (exit %d)" % rc, console
    if nap.group(1) != "ok":
        return "failed", "the nap was aborted", console
    rate = {}
    for name, m in (("awake", awake), ("nap", nap)):
        rate[name] = int(m.group(4)) / float(m.group(2))
    if rate["awake"] <= 0:
        return "failed", "no timerlat wakeups even awake", console
    ratio = rate["nap"] / rate["awake"]
    detail = "thread wakeups/s awake %.0f, nap %.0f (%.2f x); latency " \
        "median/max awake %s/%s us, nap %s/%s us" % (
            rate["awake"], rate["nap"], ratio, awake.group(6),
            awake.group(5), nap.group(6), nap.group(5))
    if ratio < 0.5:
        return "failed", "timers late in the nap: " + detail, console
    return "passed", detail, console


def t_power_button_ends_nap():
    """A power-button press (QMP system_powerdown) during a NIC-armed nap
    ends it through the ACPI SCI, armed for wakeup as in suspend to idle,
    and then acts as a press: KEY_POWER reaches user space.  A second press
    afterwards shows the SCI that genirq disabled for the wakeup was
    enabled again.  The RTC alarm, 60 s away, is only a backstop."""
    g = pslib.Guest("sh /usr/share/pseudosleep/button-nap.sh", qmp=True,
                    timeout=300)
    try:
        sci = g.wait_line(r"^SCI-IRQ (\d+)", 120)
        napping = g.wait_line(r"^(NAPPING|BUTTON-ERROR.*)$", 60)
        nap = keys1 = keys2 = count = None
        if napping and napping.group(1) == "NAPPING":
            # Past the entry, well inside the halt: then press.
            time.sleep(3)
            pslib.qmp(g.qmp_path, "system_powerdown")
            nap = g.wait_line(r"^NAP (\S+) wake_irq=(\d+) nap_ns=(\d+)", 120)
            keys1 = g.wait_line(r"^KEYS (\d+)", 60)
            if g.wait_line(r"^AWAKE", 30):
                pslib.qmp(g.qmp_path, "system_powerdown")
                keys2 = g.wait_line(r"^KEYS (\d+)", 60)
                count = g.wait_line(r"^SCI-COUNT (\d+) (\d+)", 30)
    finally:
        rc, console = g.close()
    if not sci or not napping or napping.group(1) != "NAPPING":
        return "failed", "no nap set up (%s, exit %d)" % (
            napping.group(1) if napping else "no output", rc), console
    if not nap:
        return "failed", "the nap did not end (exit %d)" % rc, console
    if nap.group(1) != "ok" or nap.group(2) != sci.group(1):
        return "failed", "nap %s, ended by IRQ %s, not the SCI (%s) after " \
            "%.1f s" % (nap.group(1), nap.group(2), sci.group(1),
                        int(nap.group(3)) / 1e9), console
    if not keys1 or keys1.group(1) != "1":
        return "failed", "the press that ended the nap was not reported " \
            "(KEY_POWER %s)" % (keys1.group(1) if keys1 else "none"), console
    if not keys2 or keys2.group(1) != "2" or not count or \
            int(count.group(2)) <= int(count.group(1)):
        return "failed", "a press after the nap was lost (KEY_POWER %s, " \
            "SCI %s): the SCI stayed disabled" % (
                keys2.group(1) if keys2 else "none",
                count.group(0) if count else "?"), console
    return "passed", "nap ended by the SCI (IRQ %s) after %.1f s, both " \
        "presses reported as KEY_POWER" % (sci.group(1),
                                           int(nap.group(3)) / 1e9), console


HOST_TESTS = [
    ("style: checkpatch --strict on our C files and hook patches",
     t_checkpatch),
    ("vm-run: cat /proc/version is the patched kernel", t_version),
    ("vm-run: false exits 1", t_false),
    ("vm-run: exit status and output pass through", t_exit_status),
    ("vm-run: guest panic is reported before the timeout", t_panic),
    ("vm-run: bad options are rejected with usage", t_bad_options),
    ("vm-run: a failing KVM probe falls back to TCG and says why",
     t_accel_probe_fails),
    ("vm-run: a silent KVM guest is retried under TCG", t_accel_kvm_silent),
    ("vm-run: a guest that does not boot fails at --boot-timeout",
     t_no_boot_fails_fast),
    ("vm-run: a guest reset is named as one, before and after init",
     t_reset_named),
    ("vm-run: exit status arrives through a console flood",
     t_status_through_console_flood),
    ("vm-run: SIGTERM stops QEMU and removes temporary files",
     t_sigterm_cleans_up),
    ("vm-run: SIGKILL to vm-run leaves no QEMU running",
     t_sigkill_leaves_no_qemu),
    ("harness: NIC IRQ visible and forwarded port reaches guest",
     t_nic_and_fwd),
    ("harness: bridged network reaches the guest's TCP, ARP and ICMP",
     t_bridge_network),
    ("pseudo: a napping kernel answers ARP, ping and SYN noise, RTC ends "
     "the nap", t_nap_answers_noise),
    ("pseudo: the host's ARP entry for the guest stays valid through a "
     "30 s nap", t_arp_entry_through_long_nap),
    ("pseudo: during naps interrupt handlers see jiffies up to date and "
     "hrtimers run on time", t_jiffies_fresh_in_nap),
    ("pseudo: a WireGuard tunnel keeps its session keys through naps",
     t_wireguard_keys_through_nap),
    ("pseudo: a WireGuard peer's handshake during a nap ends it; a request "
     "through the tunnel is answered", t_wireguard_handshake_ends_nap),
    ("napd --wake-on task: 100 frames/s of noise end no nap; new TCP, "
     "kept-alive and UDP requests end naps, none lost", t_wake_on_work),
    ("pseudo: mem_sleep_default=pseudo selects it at boot",
     t_mem_sleep_default),
    ("pseudo: HTTP request through the NIC wakes an armed nap",
     t_pseudo_http_wakes),
    ("pseudo: unarmed NIC IRQ is served without ending the nap",
     t_pseudo_unarmed_nic),
    ("pseudo: arms dropped with the NIC's IRQs at unbind, re-armed after "
     "bind, end a nap", t_rearm_after_rebind),
    ("pseudo: virtio-net's link down and up during a nap, then a request "
     "ends it", t_link_flap_virtio),
    ("pseudo: e1000e's link down and up during a nap, then a request "
     "ends it", t_link_flap_e1000e),
    ("pseudo: kernel threads sleeping on 1 ms timers wake on time in a "
     "nap", t_timer_threads_on_time),
    ("pseudo: a 20 s nap raises no RCU stall, soft lockup or hung task",
     t_long_nap),
    ("pseudo: a 20 s nap raises no RCU stall with the stall timeout at "
     "its 3 s minimum", t_long_nap_rcu_stall_min),
    ("pseudo: a power-button press ends a nap and is reported as a press",
     t_power_button_ends_nap),
    ("pseudo: drivers see a nap as s2idle (virtio-mem lets it through)",
     t_virtio_mem_nap),
    ("pseudo: naps are quiet on the console", t_quiet_naps),
]


def napd_stats(out):
    """napd's --stats JSON line among the guest's output lines, or {}."""
    stats = {}
    for line in out:
        if line.startswith('{"naps"'):
            try:
                stats = json.loads(line)
            except ValueError:
                pass
    return stats


def napd_stop(g, poke):
    """Have napd-run.sh stop napd (SIGTERM) and wait for it to exit while
    poke() keeps the NIC busy, as napd may be napping: (NAPD-EXIT match,
    RESTORED match), either None when it did not come."""
    g.signal("stop")
    done = poke_until(g, r"^NAPD-EXIT (\d+)", poke)
    return done, g.wait_line(r"^RESTORED (\w+)", 30)


def poke_until(g, pattern, poke, wait=0.3, secs=60):
    """The first output line matching pattern, None after secs: poke()
    before each wait of up to wait s.  napd may be napping, and what the
    guest's script waits for comes only after a request ends the nap."""
    end = time.monotonic() + secs
    while time.monotonic() < end:
        poke()
        line = g.wait_line(pattern, wait)
        if line:
            return line
    return None


def pages_answered(get, n, gap):
    """How many of n requests, gap s apart, came back with the guest's
    page: get() returns (body, seconds)."""
    answered = 0
    for _ in range(n):
        time.sleep(gap)
        body, _ = get()
        answered += bool(body and b"pseudosleep guest" in body)
    return answered


def napd_exit_verdict(done, restored):
    """None when napd exited 0 and put its settings back, else why not.
    done and restored are NAPD-EXIT and RESTORED matches or their
    values, None when the line did not come."""
    done, restored = (getattr(m, "group", lambda _: m)(1) or "none"
                      for m in (done, restored))
    if done == "0" and restored == "yes":
        return None
    return "napd exit %s, restored %s" % (done, restored)


def napd_passed(detail, done, restored, console, lost=0, naps=0, least=0):
    """The last step of every napd test's verdict, once its own checks
    passed: failed when a request was lost, when napd napped fewer than
    least times, or unless it exited 0 and put its settings back."""
    if lost:
        return "failed", detail, console
    if naps < least:
        return "failed", detail + "; fewer than %d naps" % least, console
    why = napd_exit_verdict(done, restored)
    if why:
        return "failed", detail + "; " + why, console
    return "passed", detail + "; settings restored", console


def guest_done(g):
    """Stop the guest and clean up: (console, output lines)."""
    g.finish()
    console = g.console()
    out = list(g.output)
    g.cleanup()
    return console, out


def napd_session(gaps, setup="", idle="--idle-ms 50"):
    """Boot a guest that serves HTTP under napd (guest/napd-run.sh with
    SETUP's environment and IDLE, "" for napd's default), send one request
    after each gap in GAPS (s), then stop napd.  Returns (answered, lost,
    response times in s, napd's --stats, napd's exit status or None,
    "yes"/"no"/None for the settings put back, console)."""
    port = pslib.free_port()
    g = pslib.Guest("%s/usr/share/pseudosleep/napd-run.sh %s "
                    "--log --stats" % (setup, idle), fwd=["%d:80" % port],
                    timeout=900)
    answered, lost, times = 0, 0, []
    try:
        if not g.wait_line("^NAPD-STARTED", 120):
            raise RuntimeError("napd did not start")
        time.sleep(0.5)
        for gap in gaps:
            time.sleep(gap)
            body, took = pslib.http_get(port, timeout=10)
            if body and b"pseudosleep guest" in body:
                answered += 1
                times.append(took)
            else:
                lost += 1
        done, restored = napd_stop(g, lambda: pslib.http_get(port, timeout=2))
    finally:
        console, out = guest_done(g)
    stats = napd_stats(out)
    return (answered, lost, times, stats,
            done.group(1) if done else None,
            restored.group(1) if restored else None, console)


def napd_verdict(n, res, what):
    """The common checks of a napd_session() result: (status, detail,
    console), the detail with the response times' median and maximum."""
    answered, lost, times, stats, status, restored, console = res
    times = times or [0.0]
    naps = stats.get("naps", 0)
    detail = "%d/%d answered, %d lost, %d naps, median %.1f ms, max " \
        "%.1f ms" % (answered, n, lost, naps,
                     median(times) * 1e3, max(times) * 1e3)
    return napd_passed(detail, status, restored, console,
                       lost or answered != n, naps, what)


def t_napd_requests():
    """napd naps the guest between 200 requests sent at random gaps of
    1-300 ms: every request is answered, napd napped, and SIGTERM puts
    back wake_irq, nosleep and mem_sleep."""
    import random
    rnd = random.Random(20261121)
    res = napd_session([rnd.uniform(0.001, 0.300) for _ in range(200)])
    return napd_verdict(200, res, 1)


def t_napd_default_idle():
    """The same 200 requests at random gaps of 1-300 ms under napd's
    default idle time (5 ms, docs/napd-idle-time.md): every request is
    answered, napd napped, settings put back."""
    import random
    rnd = random.Random(20261127)
    res = napd_session([rnd.uniform(0.001, 0.300) for _ in range(200)],
                       idle="")
    return napd_verdict(200, res, 1)


def t_napd_rearm_after_rebind():
    """napd runs; the NIC's driver is unbound and bound (it frees its IRQs
    and requests new ones, as ethtool -L or a link flap with e1000e does):
    napd sees the dropped arm, writes the NIC's IRQs again, and the
    requests after it end naps and are answered.  The NIC's IRQs are armed
    with --wake-on irq only: wake on work arms none."""
    port = pslib.free_port()
    g = pslib.Guest("/usr/share/pseudosleep/napd-run.sh --wake-on irq "
                    "--idle-ms 50 --log",
                    fwd=["%d:80" % port], timeout=600)
    before, after = [], []
    try:
        if not g.wait_line("^NAPD-STARTED", 120):
            raise RuntimeError("napd did not start")
        for _ in range(5):
            time.sleep(1.0)
            before.append(pslib.http_get(port, timeout=10)[0])
        g.signal("rebind")
        # napd may be napping: the requests end the naps, the loop rebinds.
        at = poke_until(g, r"^NAPS-AT-REBIND (\d+)",
                        lambda: pslib.http_get(port, timeout=2), 0.5)
        for _ in range(10):
            time.sleep(1.0)
            after.append(pslib.http_get(port, timeout=10)[0])
        g.signal("stop")
        done = poke_until(g, r"^NAPD-EXIT (\d+)",
                          lambda: pslib.http_get(port, timeout=2))
        total = g.wait_line(r"^NAPS-TOTAL (\d+)", 30)
    finally:
        g.finish()
        console = g.console()
        out = "\n".join(g.output)
        g.cleanup()
    if not at or not total:
        return "failed", "no rebind or no nap count", console
    lost = sum(1 for b in after if not b or b"pseudosleep guest" not in b)
    naps = int(total.group(1)) - int(at.group(1))
    detail = "%d/10 answered after the rebind, %d naps after it" % (
        10 - lost, naps)
    if lost:
        return "failed", detail, console
    if "re-armed" not in out:
        return "failed", detail + "; napd did not re-arm", console
    if naps < 5:
        return "failed", detail + "; fewer than 5 naps after it", console
    if not done or done.group(1) != "0":
        return "failed", detail + "; napd exit %s" % (
            done.group(1) if done else "none"), console
    return "passed", detail + "; napd re-armed", console


# NAPI deferral on the kept NIC, as servers are tuned: the NIC's interrupt
# stays masked while NAPI waits for gro_flush_timeout's hrtimer, which a nap
# must leave on time.  When a nap deferred the CPUs' timers a request came
# back seconds late.
NAPI_SETUP = "NAPD_NAPI_DEFER=2 NAPD_GRO_FLUSH_NS=200000 "
NAPI_PAIRS = 60
# None late by anything like a deferred timer (seconds).  How many take
# over 100 ms is reported, not checked: on a quiet host none (max 68 ms),
# but under TCG on a loaded host a request that meets a nap's entry waits
# for the entry and the exit (8 % to 44 % above 100 ms, max 331 ms, beside
# kernel builds and other guests), so a share limit failed without a
# code change.
NAPI_LATE_S = 0.1
NAPI_MAX_S = 1.0


def t_napd_napi_defer():
    """With napi_defer_hard_irqs=2 and gro_flush_timeout=200 us on the
    kept NIC and napd's defaults, requests sent right after a response and
    after a pause that lets napd nap are all answered, over at least 50
    naps, none after 1 s (how many after 100 ms is reported)."""
    gaps = [g for _ in range(NAPI_PAIRS) for g in (0.0, 0.4)]
    res = napd_session(gaps, NAPI_SETUP)
    status, detail, console = napd_verdict(len(gaps), res, 50)
    if status != "passed":
        return status, detail, console
    times = res[2]
    late = sum(1 for t in times if t > NAPI_LATE_S)
    detail += ", %d above %.0f ms" % (late, NAPI_LATE_S * 1e3)
    if max(times) > NAPI_MAX_S:
        return "failed", detail, console
    return "passed", detail, console


HOST_TESTS.append(("napd: 200 requests at random gaps, none lost, "
                   "settings restored", t_napd_requests))
HOST_TESTS.append(("napd: 200 requests at random gaps under the default "
                   "idle time, none lost", t_napd_default_idle))
HOST_TESTS.append(("napd: with NAPI deferral on the kept NIC, requests "
                   "after a response and after a nap answered on time",
                   t_napd_napi_defer))
HOST_TESTS.append(("napd: after the NIC's driver is rebound (new IRQs), "
                   "napd re-arms and requests end naps", t_napd_rearm_after_rebind))


def t_napd_ops():
    """napd's operator features in one boot (guest/napd-ops.sh): no nap
    while a CPU-bound job or a listed process runs, naps after; --status
    between naps; SIGHUP applies a changed idle-ms; settings restored."""
    port = pslib.free_port()
    g = pslib.Guest("/usr/share/pseudosleep/napd-ops.sh",
                    fwd=["%d:80" % port], timeout=900)
    lines = []
    done = None
    try:
        if not g.wait_line("^NAPD-STARTED", 180, on_line=lines.append):
            raise RuntimeError("napd did not start")
        # Until OPS-POKE napd must not nap; from then on keep waking it.
        if g.wait_line("^OPS-POKE", 300, on_line=lines.append):
            end = time.monotonic() + 400
            while time.monotonic() < end and not done:
                pslib.http_get(port, timeout=2)
                done = g.wait_line(r"^OPS-DONE failed=(\d+)", 0.3,
                                   on_line=lines.append)
    finally:
        console = g.close()[1]
    oks = [l for l in lines if l.startswith("ok - ")]
    bad = [l[len("not ok - "):] for l in lines if l.startswith("not ok - ")]
    cpu = [l for l in lines if l.startswith("NAPD-CPU ")]
    detail = "%d checks passed" % len(oks)
    if cpu:
        detail += "; napd used " + cpu[0][len("NAPD-CPU "):]
    if bad:
        return "failed", "failed: " + "; ".join(bad), console
    if not done:
        return "failed", detail + "; no OPS-DONE (%s)" % (
            lines[-1] if lines else "no output"), console
    if done.group(1) != "0" or len(oks) < 14:
        return "failed", detail + "; OPS-DONE failed=" + done.group(1), \
            console
    return "passed", detail, console


HOST_TESTS.append(("napd: no nap under CPU load or a listed process, "
                   "--status, SIGHUP reload", t_napd_ops))


# max-nap as issue 32 sets it: a nap ends by itself (napd's alarm timer),
# with no request to end it.  The upper bound is max-nap and a second for
# the nap's exit under TCG on a loaded host.
MAX_NAP_S = 2.0
MAX_NAP_SLACK_S = 1.0
NAP_LINE = re.compile(r"napd: nap \d+ slept ([\d.]+) ms .*wake_irq=(\S+)")



def napd_naps(out):
    """(seconds slept, wake_irq) of each nap napd --log reported among the
    guest's output lines."""
    return [(float(m.group(1)) / 1e3, m.group(2))
            for m in (NAP_LINE.search(l) for l in out) if m]


def t_napd_max_nap():
    """With --max-nap 2s and not one request, napd naps again and again,
    each nap ended by its alarm (wake_irq=alarm) within 2 s and a second,
    and SIGTERM stops it with nothing but the alarm to wake it; settings
    restored."""
    g = pslib.Guest("/usr/share/pseudosleep/napd-run.sh --idle-ms 50 "
                    "--log --stats --max-nap %gs" % MAX_NAP_S, timeout=600)
    done = restored = None
    try:
        if not g.wait_line("^NAPD-STARTED", 180):
            raise RuntimeError("napd did not start")
        time.sleep(12)
        g.signal("stop")
        # No request: only the alarm can end the nap napd is in.
        done = g.wait_line(r"^NAPD-EXIT (\d+)", 60)
        restored = g.wait_line(r"^RESTORED (\w+)", 30)
    finally:
        console, out = guest_done(g)
    detail, why = alarm_naps(out, done, MAX_NAP_S, "max-nap")
    if why:
        return "failed", detail + "; " + why, console
    return napd_passed(detail, done, restored, console)


def alarm_naps(out, done, bound, what):
    """The naps of a napd run that had no request, ended only by napd's
    alarm at bound s (what names it), until SIGTERM: (detail, why they
    failed or None)."""
    naps = napd_naps(out)
    alarm = [d for d, w in naps if w == "alarm"]
    detail = "%d naps, %d ended by the alarm, longest %.2f s" % (
        len(naps), len(alarm), max([d for d, _ in naps] or [0]))
    if not done:
        return detail, "napd did not exit on SIGTERM without a request"
    if len(alarm) < 3:
        return detail, "fewer than 3 naps ended by the alarm"
    if max(alarm) > bound + MAX_NAP_SLACK_S:
        return detail, "a nap outlasted " + what
    return detail, None


HOST_TESTS.append(("napd: --max-nap 2s ends naps by itself with no "
                   "request, settings restored", t_napd_max_nap))


# Back-off (issue 32): a task stuck in D state (napd-run.sh's NAPD_STUCK:
# a read from an NVMe disk that QEMU throttles to STUCK_BPS bytes/s) makes
# every freeze fail after 200 ms.  napd's disk check sees that read in
# flight and holds naps back by itself, so the test turns it off: the disk
# stands for storage whose I/O napd cannot see, NFS or FUSE, where a task
# waits in D state just the same.  Without a back-off napd would try again
# after each quiet time, about every half second: 40 entries in STUCK_S.
# With it, 3 in a row and then one after 1, 2, 4 and 8 s: 7 or 8.
# STUCK_MAX_ENTRIES leaves room for a slow guest but not for retrying
# without a back-off.
STUCK_S = 20
STUCK_MAX_ENTRIES = 15
STUCK_BPS = 2048
# The kernel's report of each failed freeze: upstream names the task
# that refused, with its stack (sched_show_task()).
FREEZE_FAILED = re.compile(r"Freezing user space processes failed after")


def without_stuck_task_dumps(console):
    """The console without the stacks of the stuck task that the kernel
    prints after each failed freeze, which the dmesg check would take
    for a splat.  Only a "task:dd" block right after the report goes."""
    out, skip = [], False
    for line in console.splitlines(keepends=True):
        if FREEZE_FAILED.search(line):
            skip = None
        elif skip is None and re.search(r"\btask:dd\b", line):
            skip = True
            continue
        if skip:
            if "</TASK>" in line:
                skip = False
            continue
        out.append(line)
    return "".join(out)


def t_napd_backoff():
    """A task stuck in D state makes every nap entry fail with EBUSY:
    napd backs off (one warning, at most STUCK_MAX_ENTRIES entries in
    STUCK_S), and once the task is released it naps again, says the
    back-off is over, answers a request and puts its settings back."""
    port = pslib.free_port()
    disk = tempfile.NamedTemporaryFile(prefix="ps-stuck.", suffix=".img")
    disk.truncate(1 << 20)
    g = pslib.Guest("NAPD_STUCK=1 NAPD_LIVE=1 /usr/share/pseudosleep/"
                    "napd-run.sh --idle-ms 50 --disk-check no --log "
                    "--stats", fwd=["%d:80" % port], timeout=600, qmp=True,
                    # The throttled read is not an NVMe timeout (30 s).
                    append="nvme_core.io_timeout=600",
                    extra=["--qemu-arg=-drive", "--qemu-arg=file=%s,if=none,"
                           "id=stuck,format=raw,throttling.bps-total=%d" %
                           (disk.name, STUCK_BPS), "--qemu-arg=-device",
                           "--qemu-arg=nvme,drive=stuck,serial=stuck,"
                           "id=stuckdisk"])
    warned = over = done = restored = None
    answered = False
    try:
        if not g.wait_line("^NAPD-STARTED", 180):
            raise RuntimeError("napd did not start")
        warned = g.wait_line(r"nap entries in a row aborted \((.*)\): "
                             r"backing off", STUCK_S)
        time.sleep(STUCK_S)
        reply = pslib.qmp(g.qmp_path, "block_set_io_throttle", arguments={
            "id": "stuckdisk", "bps": 0, "bps_rd": 0, "bps_wr": 0,
            "iops": 0, "iops_rd": 0, "iops_wr": 0})
        if '"error"' in reply:
            raise RuntimeError("QMP block_set_io_throttle: " + reply)
        if not g.wait_line("^STUCK-RELEASED", 30):
            raise RuntimeError("the stuck task was not released")
        # The hold-off in force (up to 16 s by now) runs out first.
        over = g.wait_line(r"back-off over: a nap worked after (\d+) "
                           r"aborted", 60)
        body, _ = pslib.http_get(port, timeout=10)
        answered = bool(body and b"pseudosleep guest" in body)
        done, restored = napd_stop(g, lambda: pslib.http_get(port, timeout=2))
    finally:
        console, out = guest_done(g)
        disk.close()
    stats = napd_stats(out)
    failed = len([l for l in console.splitlines()
                  if FREEZE_FAILED.search(l)])
    console = without_stuck_task_dumps(console)
    aborted = stats.get("aborted", 0)
    detail = "%d entries aborted (%d freezes failed), back-off %s; " \
        "%d naps" % (aborted, failed,
                     "over after %s" % over.group(1) if over else
                     "never over", stats.get("naps", 0))
    if not warned:
        return "failed", detail + "; napd gave no back-off warning", console
    if "busy" not in warned.group(1).lower():
        return "failed", detail + "; the entries failed with %s, not " \
            "EBUSY" % warned.group(1), console
    if not 3 <= failed <= STUCK_MAX_ENTRIES:
        return "failed", detail + "; expected 3 to %d failed freezes " \
            "while the task was stuck" % STUCK_MAX_ENTRIES, console
    if not over or not answered:
        return "failed", detail + "; no nap or no answer after the task " \
            "was released", console
    return napd_passed(detail + "; request answered", done, restored,
                       console)


# Two NICs (issue 32): eth1 is a second virtio-net NIC on its own user
# network, 10.0.3.0/24, with its own forwarded port (vm-run --nics 2).
# napd arms both NICs' receive IRQs (wake on irq); requests go to each in
# turn, one per nap.
TWO_NICS_REQUESTS = 12
# The guest lists each NIC's PCI function's MSI-X IRQs.
NIC_IRQS = re.compile(r"^NIC-IRQS (eth[01]) ([\d ]+)")


def nic_irqs_then_start(g, timeout):
    """{NIC: its IRQs} from napd-run.sh's NIC-IRQS lines, once napd has
    started."""
    irqs = {}
    for _ in range(2):
        m = g.wait_line(NIC_IRQS.pattern, timeout)
        if m:
            irqs[m.group(1)] = set(m.group(2).split())
    if not g.wait_line("^NAPD-STARTED", 60):
        raise RuntimeError("napd did not start")
    return irqs


def t_napd_two_nics():
    """napd with --wake-dev eth0 --wake-dev eth1 arms the receive IRQs of
    both NICs, and a request on either ends a nap and is answered: naps
    end on IRQs of each; settings restored."""
    ports = [pslib.free_port(), pslib.free_port()]
    g = pslib.Guest("NAPD_ETH1=10.0.3.15/24 NAPD_LIVE=1 /usr/share/"
                    "pseudosleep/napd-run.sh --wake-dev eth1 --wake-on irq "
                    "--idle-ms 50 --log --stats",
                    fwd=["%d:80" % ports[0]], timeout=600,
                    extra=["--nics", "2", "--fwd1", "%d:80" % ports[1]])
    irqs = {}
    answered = [0, 0]
    done = restored = None
    try:
        irqs = nic_irqs_then_start(g, 180)
        for i in range(TWO_NICS_REQUESTS):
            time.sleep(1.0)         # napd naps after 50 ms of quiet
            body, _ = pslib.http_get(ports[i % 2], timeout=10)
            answered[i % 2] += bool(body and b"pseudosleep guest" in body)
        done, restored = napd_stop(
            g, lambda: pslib.http_get(ports[0], timeout=2))
    finally:
        console, out = guest_done(g)
    woke = [w for _, w in napd_naps(out)]
    by_nic = {nic: sum(w in own for w in woke) for nic, own in irqs.items()}
    detail = "IRQs %s; %d naps, ended by eth0 %d, eth1 %d; answered " \
        "%d+%d of %d" % (
            ", ".join("%s %s" % (k, ",".join(sorted(v)))
                      for k, v in sorted(irqs.items())) or "none seen",
            len(woke), by_nic.get("eth0", 0), by_nic.get("eth1", 0),
            answered[0], answered[1], TWO_NICS_REQUESTS)
    if sorted(irqs) != ["eth0", "eth1"]:
        return "failed", detail + "; the guest did not list both NICs' " \
            "IRQs", console
    if sum(answered) != TWO_NICS_REQUESTS:
        return "failed", detail + "; requests lost", console
    if not by_nic["eth0"] or not by_nic["eth1"]:
        return "failed", detail + "; no nap ended by one of the NICs", \
            console
    return napd_passed(detail, done, restored, console)


HOST_TESTS.append(("napd: with two NICs a request on either ends the nap",
                   t_napd_two_nics))


# A bond (issue 32): eth0 and eth1 in an active-backup bond0, both on the
# harness's bridge (vm-run --nics 2 --net bridge), and napd --wake-dev
# bond0.  Requests reach the active member; then QMP takes eth0's link
# down, the bond fails over to eth1 (miimon 100 ms, a gratuitous ARP
# moves the bridge's entry) and requests reach eth1.
BOND_REQUESTS = 6


def get_in(ns, timeout):
    """GET / of the guest on the bridged network in namespace ns."""
    with netns.inside(ns):
        return pslib.http_get(80, host=netns.GUEST_IP, timeout=timeout)


def t_napd_bond():
    """napd --wake-dev bond0 (active-backup of eth0 and eth1) arms both
    members' receive IRQs: naps end on eth0's while it is active, and on
    eth1's after eth0's link goes down; every request answered, settings
    restored."""
    skip = bridge_or_skip()
    if skip:
        return skip
    g = pslib.Guest("NAPD_BOND=active-backup NAPD_LIVE=1 /usr/share/"
                    "pseudosleep/napd-run.sh --wake-on irq --idle-ms 50 "
                    "--log --stats", net="bridge", qmp=True, timeout=600,
                    extra=["--nics", "2"])
    irqs, answered, phase_naps = {}, 0, []
    bond = done = restored = None
    try:
        bond = g.wait_line(r"^BOND (\S+) \S+ active (\S*)", 180)
        irqs = nic_irqs_then_start(g, 30)
        for phase in range(2):
            if phase:
                reply = pslib.qmp(g.qmp_path, "set_link",
                                  arguments={"name": "n0", "up": False})
                if '"error"' in reply:
                    raise RuntimeError("QMP set_link: " + reply)
                # eth0's link change is not armed: the guest sees it at
                # the next wake, fails over, and its gratuitous ARP moves
                # the bridge's entry.  Uncounted requests until one is
                # answered through eth1.
                end = time.monotonic() + 60
                while time.monotonic() < end:
                    body, _ = get_in(g.netns, 5)
                    if body:
                        break
            phase_naps.append(len(g.output))
            # napd naps after 50 ms of quiet: each request meets a nap.
            answered += pages_answered(lambda: get_in(g.netns, 10),
                                       BOND_REQUESTS, 1.0)
        done, restored = napd_stop(g, lambda: get_in(g.netns, 2))
    finally:
        console, out = guest_done(g)
    # The naps of each phase, by the member whose IRQ ended them.
    ends = []
    for lo, hi in ((phase_naps[0] if phase_naps else len(out),
                    phase_naps[1] if len(phase_naps) > 1 else len(out)),
                   (phase_naps[1] if len(phase_naps) > 1 else len(out),
                    len(out))):
        woke = [w for _, w in napd_naps(out[lo:hi])]
        ends.append({nic: sum(w in own for w in woke)
                     for nic, own in irqs.items()})
    detail = "bond %s; before eth0's link went down naps ended by %s, " \
        "after by %s; answered %d of %d" % (
            "%s, active %s" % bond.groups() if bond else "not made",
            ends[0], ends[1], answered, 2 * BOND_REQUESTS)
    if sorted(irqs) != ["eth0", "eth1"] or not bond:
        return "failed", detail + "; no bond of eth0 and eth1", console
    if bond.group(2) != "eth0":
        return "failed", detail + "; eth0 was not the active member at " \
            "first", console
    if answered != 2 * BOND_REQUESTS:
        return "failed", detail + "; requests lost", console
    if not ends[0].get("eth0") or not ends[1].get("eth1"):
        return "failed", detail + "; no nap ended by the active member's " \
            "IRQ in one of the phases", console
    return napd_passed(detail, done, restored, console)


HOST_TESTS.append(("napd: with --wake-dev bond0 a request on either member "
                   "ends the nap", t_napd_bond))


HOST_TESTS.append(("napd: a task that will not freeze makes napd back "
                   "off, and naps come back once it is gone", t_napd_backoff))


# Units with WatchdogSec= (issue 32): a stand-in systemctl in the guest
# reports one with WatchdogSec=12s; napd has no max-nap of its own, so
# only the watchdog bound (a quarter, 3 s) ends its naps.  The unit pings
# every 6 s; systemd kills it if two pings are 12 s apart.  Expected:
# pings at most 6 + 3 s apart (and the exit), so 3 s of margin for TCG.
WATCHDOG_S = 12
WATCHDOG_RUN_S = 60


def t_napd_watchdog():
    """With a running unit that has WatchdogSec=12s and --max-nap 0, napd
    ends each nap after at most a quarter of it (its alarm, no request
    at all), so the unit's pings, every 6 s, are never 12 s apart; napd
    logs the bound; SIGTERM stops it with only the alarm to wake it;
    settings restored."""
    g = pslib.Guest("/usr/share/pseudosleep/napd-watchdog.sh %d --idle-ms 50 "
                    "--log --stats" % WATCHDOG_S, timeout=600)
    done = restored = gap = pings = None
    try:
        if not g.wait_line("^NAPD-STARTED", 180):
            raise RuntimeError("napd did not start")
        time.sleep(WATCHDOG_RUN_S)
        g.signal("stop")
        # No request: only the watchdog bound's alarm ends the nap.
        done = g.wait_line(r"^NAPD-EXIT (\d+)", 60)
        pings = g.wait_line(r"^PINGS (\d+)", 30)
        gap = g.wait_line(r"^PING-GAP-MAX ([\d.]+)", 30)
        restored = g.wait_line(r"^RESTORED (\w+)", 30)
    finally:
        console, out = guest_done(g)
    detail, why = alarm_naps(out, done, WATCHDOG_S / 4.0, "WatchdogSec/4")
    detail += "; %s pings, longest gap %s s (WatchdogSec=%d s)" % (
        pings.group(1) if pings else "?", gap.group(1) if gap else "?",
        WATCHDOG_S)
    if why:
        return "failed", detail + "; " + why, console
    if not any("shortest WatchdogSec= 12 s (pinger.service)" in l
               for l in out):
        return "failed", detail + "; napd did not log the unit's " \
            "watchdog", console
    if not gap or not pings or int(pings.group(1)) < 4:
        return "failed", detail + "; too few pings", console
    if float(gap.group(1)) >= WATCHDOG_S:
        return "failed", detail + "; systemd would have killed the unit", \
            console
    return napd_passed(detail, done, restored, console)


HOST_TESTS.append(("napd: a unit with WatchdogSec=12s keeps its pings "
                   "through naps with no max-nap and no request",
                   t_napd_watchdog))


# Crash safety and metrics on the real kernel (issue 32): the unit tests
# run both against a fake sysfs tree; here napd is killed for real and
# its metrics are checked against /sys/power/pseudosleep.
KILL9_REQUESTS = 12


def parse_metrics(text):
    """{(name, labels): value} from Prometheus text by the reference
    parser (python3-prometheus-client), or None without it; raises
    ValueError on text it does not take."""
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        return None
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def t_napd_kill9_metrics():
    """napd naps between requests and is killed with SIGKILL: its
    settings stay changed and saved in /run/napd; a second napd takes the
    saved values as the originals, naps between requests, and SIGTERM
    puts every setting back as it was before the first.  The second's
    metrics file parses with prometheus_client's parser, and its naps
    plus aborted entries are the kernel's (/sys/power/pseudosleep)."""
    port = pslib.free_port()
    g = pslib.Guest("/usr/share/pseudosleep/napd-kill9.sh --idle-ms 50 "
                    "--log", fwd=["%d:80" % port], timeout=900)
    answered = 0
    killed = started = done = restored = kernel = None
    try:
        if not g.wait_line("^NAPD-STARTED", 180):
            raise RuntimeError("napd did not start")
        get = functools.partial(pslib.http_get, port, timeout=10)
        poke = functools.partial(pslib.http_get, port, timeout=2)
        answered += pages_answered(get, KILL9_REQUESTS, 0.4)
        g.signal("kill")
        killed = poke_until(g, r"^KILLED changed=(\w+) saved=(\w+)", poke)
        started = g.wait_line(r"^NAPD-RESTARTED naps=(\d+) aborted=(\d+)",
                              30)
        time.sleep(1.0)
        answered += pages_answered(get, KILL9_REQUESTS, 0.4)
        g.signal("stop")
        done = poke_until(g, r"^NAPD-EXIT (\d+)", poke)
        kernel = g.wait_line(r"^PSEUDOSLEEP naps=(\d+) aborted=(\d+)", 30)
        g.wait_line("^METRICS-END", 30)
        restored = g.wait_line(r"^RESTORED (\w+)", 30)
    finally:
        console, out = guest_done(g)
    n = 2 * KILL9_REQUESTS
    detail = "%d/%d answered" % (answered, n)
    if answered != n:
        return "failed", detail, console
    if not killed or killed.groups() != ("yes", "yes"):
        return "failed", detail + "; after SIGKILL: %s" % (
            killed.group(0) if killed else "no KILLED line"), console
    detail += "; SIGKILL left the settings changed and saved"
    if not any("did not stop cleanly, are taken as the originals" in l
               for l in out):
        return "failed", detail + "; the second napd did not take the " \
            "saved originals", console
    why = napd_exit_verdict(done, restored)
    if why:
        return "failed", detail + "; " + why, console
    detail += ", restored by the second napd"
    try:
        text = "\n".join(out[out.index("METRICS-BEGIN") + 1:
                             out.index("METRICS-END")]) + "\n"
    except ValueError:
        return "failed", detail + "; no metrics file", console
    try:
        m = parse_metrics(text)
    except ValueError as e:
        return "failed", detail + "; the metrics do not parse: %s" % e, \
            console
    if m is None:
        return "skipped", detail + "; no python3-prometheus-client to " \
            "parse the metrics", console
    naps = m.get(("napd_naps_total", ()))
    aborted = m.get(("napd_aborted_naps_total", ()))
    if naps is None or aborted is None or not kernel or not started:
        return "failed", detail + "; no napd_naps_total, " \
            "napd_aborted_naps_total or kernel counters", console
    k_naps = int(kernel.group(1)) - int(started.group(1))
    k_aborted = int(kernel.group(2)) - int(started.group(2))
    detail += "; metrics parse: %d naps + %d aborted, kernel %d + %d" % (
        naps, aborted, k_naps, k_aborted)
    # The kernel counts a nap that a wakeup ended after the device
    # phases as aborted while mem returns 0 (a nap to napd): the sums
    # agree, the naps are at least the kernel's.
    if naps + aborted != k_naps + k_aborted or naps < k_naps:
        return "failed", detail + "; napd's counters are not the " \
            "kernel's", console
    if naps < 3:
        return "failed", detail + "; fewer than 3 naps", console
    return "passed", detail, console


HOST_TESTS.append(("napd: killed with SIGKILL, the next napd restores the "
                   "settings; its metrics parse and match the kernel's",
                   t_napd_kill9_metrics))


# Kept-alive connections (issue 32): 20 held open by the host, 100
# requests on them at random gaps.
KEEPALIVE_CONNS = 20
KEEPALIVE_REQUESTS = 100


def t_napd_keepalive():
    """20 kept-alive connections to an echo server in the guest stay open
    and quiet: napd naps anyway (a quiet one is idle, not busy), and 100
    requests on them at random gaps of 0.1-0.6 s, many meeting a nap, are
    all answered on their connection; settings restored."""
    import random
    import socket
    port = pslib.free_port()
    g = pslib.Guest("NAPD_ECHO_PORT=8080 /usr/share/pseudosleep/napd-run.sh "
                    "--port 8080 --idle-ms 50 --log --stats",
                    fwd=["%d:8080" % port], timeout=900)
    conns, times, answered, lost = [], [], 0, 0
    done = restored = None
    try:
        if not g.wait_line("^NAPD-STARTED", 180):
            raise RuntimeError("napd did not start")
        time.sleep(0.5)
        for i in range(KEEPALIVE_CONNS):
            c = socket.create_connection(("127.0.0.1", port), timeout=15)
            # one exchange: the guest side is up before the quiet part
            if pslib.echo_roundtrip(c, b"hello %d\n" % i) != b"hello %d\n" % i:
                raise RuntimeError("connection %d: no echo" % i)
            conns.append(c)
        time.sleep(2)
        rnd = random.Random(32)
        naps_from = time.monotonic()
        for i in range(KEEPALIVE_REQUESTS):
            time.sleep(rnd.uniform(0.1, 0.6))
            msg = b"request %d\n" % i
            t0 = time.monotonic()
            if pslib.echo_roundtrip(conns[rnd.randrange(len(conns))], msg) == msg:
                answered += 1
                times.append(time.monotonic() - t0)
            else:
                lost += 1
        naps_for = time.monotonic() - naps_from
        done, restored = napd_stop(
            g, lambda: pslib.echo_roundtrip(conns[0], b"stop\n"))
    finally:
        for c in conns:
            c.close()
        console, out = guest_done(g)
    stats = napd_stats(out)
    naps = stats.get("naps", 0)
    times = sorted(times) or [0.0]
    # napd's time asleep over its whole run, against the time of the
    # requests (most of that run).
    detail = "%d/%d answered on %d kept connections, %d lost, %d naps, " \
        "%.1f s asleep (napd's run; %.0f s of requests), median %.1f ms, " \
        "max %.1f ms" % (
            answered, KEEPALIVE_REQUESTS, KEEPALIVE_CONNS, lost, naps,
            stats.get("nap_ns", 0) / 1e9, naps_for,
            median(times) * 1e3, max(times) * 1e3)
    # Without the change not one nap: every connection counted as busy.
    return napd_passed(detail, done, restored, console,
                       lost or answered != KEEPALIVE_REQUESTS, naps,
                       KEEPALIVE_REQUESTS // 4)


HOST_TESTS.append(("napd: naps with 20 quiet kept-alive connections open; "
                   "100 requests on them, none lost", t_napd_keepalive))


SLOW_REQUESTS = 12


def t_napd_slow_answer():
    """A server answers each request a second after reading it, as one
    waiting on a backend, a disk or a timer would.  No nap may start
    while it owes an answer: a nap would freeze it with nothing to end the
    nap when its wait is over (--max-nap 0, so such a request waits for
    the next one and is lost).  Requests 0.5 s apart, every other one on
    a new connection (the request comes in the jiffy of the handshake),
    the others on one kept-alive connection (it comes after the last
    answer), all answered; naps between them; settings restored."""
    import socket
    port = pslib.free_port()
    g = pslib.Guest("NAPD_SLOW_PORT=8081 /usr/share/pseudosleep/napd-run.sh "
                    "--port 8081 --idle-ms 50 --max-nap 0 --log --stats",
                    fwd=["%d:8081" % port], timeout=900)
    times, lost = [], 0
    done = restored = None

    def ask(msg, timeout, c=None):
        """msg on the kept-alive connection c, or on a new one."""
        t0 = time.monotonic()
        try:
            with contextlib.nullcontext(c) if c else \
                    socket.create_connection(("127.0.0.1", port),
                                             timeout=timeout) as conn:
                conn.settimeout(timeout)
                ok = pslib.echo_roundtrip(conn, msg) == msg
        except OSError:
            ok = False
        return ok, time.monotonic() - t0
    kept = None
    try:
        if not g.wait_line("^NAPD-STARTED", 180):
            raise RuntimeError("napd did not start")
        time.sleep(1)
        kept = socket.create_connection(("127.0.0.1", port), timeout=20)
        for i in range(SLOW_REQUESTS):
            time.sleep(0.5)
            ok, took = ask(b"slow %d\n" % i, 20, kept if i % 2 else None)
            if ok:
                times.append(took)
            else:
                lost += 1
        done, restored = napd_stop(g, lambda: ask(b"stop\n", 5))
    finally:
        if kept:
            kept.close()
        console, out = guest_done(g)
    naps = napd_stats(out).get("naps", 0)
    answered = len(times)
    times = times or [0.0]
    detail = "%d/%d answered, %d lost (no answer in 20 s), %d naps, answer " \
        "median %.2f s, max %.2f s (the server takes 1 s)" % (
            answered, SLOW_REQUESTS, lost, naps, median(times), max(times))
    # The gaps between requests are ten times napd's quiet time.
    return napd_passed(detail, done, restored, console, lost, naps,
                       SLOW_REQUESTS // 4)


HOST_TESTS.append(("napd: no nap while a server owes an answer: 12 "
                   "requests answered a second late, none lost",
                   t_napd_slow_answer))


def t_stress_short():
    """make stress's short form: 150 naps ended by requests in every phase,
    noise on an unarmed NIC, a 20 s nap, CPU hotplug, 400 + racing fuzz
    writes, and the polling list under ethtool -G and hotplug; nothing
    lost, nothing on the console."""
    import stress_lib
    return stress_lib.t_stress_short()


HOST_TESTS.append(("stress: short form: 150 naps with requests in every "
                   "phase, noise, long nap, hotplug, fuzzing; none lost",
                   t_stress_short))


def t_nap_profile():
    """nap-profile: the per-function instruction profile of 5 naps (two
    -icount boots with the tbcount plugin) counts the functions only a
    nap runs, and bad options are refused with usage."""
    import csv
    tool = os.path.join(pslib.HERE, "nap-profile")
    p = subprocess.run([tool, "--naps", "0"], capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 2 or "usage" not in p.stderr:
        return "failed", "--naps 0: rc %d, %s" % (
            p.returncode, p.stderr.strip()[-200:]), None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "profile.csv")
        p = subprocess.run([tool, "--naps", "5", "--top", "5", "--csv", out],
                           capture_output=True, text=True, timeout=1200)
        if p.returncode:
            return "failed", "rc %d: %s" % (
                p.returncode, (p.stdout + p.stderr).strip()[-400:]), None
        with open(out) as f:
            prof = {r["function"]: float(r["insns_per_nap"])
                    for r in csv.DictReader(f)}
    want = ("pseudosleep_keep_mark", "dpm_prepare", "dpm_complete",
            "suspend_device_irqs", "freeze_processes")
    missing = [w for w in want if prof.get(w, 0) <= 0]
    if missing:
        return "failed", "no instructions per nap in " + \
            ", ".join(missing), None
    total = sum(v for v in prof.values() if v > 0)
    return "passed", "%.0f instructions per nap; dpm_prepare %.0f, " \
        "pseudosleep_keep_mark %.0f" % (total, prof["dpm_prepare"],
                                        prof["pseudosleep_keep_mark"]), None


HOST_TESTS.append(("nap-profile: an instruction profile of 5 naps counts "
                   "the PM core's phases", t_nap_profile))


# --- napd's Debian package (make -C tools/power/napd deb) -------------------
NAPD_DIR = os.path.join(pslib.TOP, "tools", "power", "napd")
# The exposure napd.service must keep (systemd-analyze security, 0..10);
# it scored 9.6 before its sandbox, 1.4 with it, 1.8 with CAP_WAKE_ALARM
# (no ProtectClock=), CAP_CHOWN and the chown calls (systemd 252).
NAPD_EXPOSURE_MAX = 5.0


def napd_deb_build(out):
    """Build napd's .deb into @out: (path, None) or (None, why)."""
    p = subprocess.run(["make", "-s", "-C", NAPD_DIR, "deb",
                        "DEB_DIR=" + out], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=600)
    debs = [f for f in os.listdir(out)
            if f.startswith("napd_") and f.endswith(".deb")]
    if p.returncode or len(debs) != 1:
        return None, "make deb: exit %d, %d .deb: %s" % (
            p.returncode, len(debs),
            p.stdout.decode(errors="replace").strip()[-400:])
    return os.path.join(out, debs[0]), None


def dpkg_root(root, args):
    """dpkg on the scratch root @root: (exit status, output)."""
    cmd = ["dpkg", "--root=" + root,
           # The host's /var/log/dpkg.log is not the scratch root's.
           "--log=/dev/null",
           # dpkg would chroot into @root to run the maintainer scripts,
           # and @root has no /bin/sh: run them on the host instead, where
           # DPKG_ROOT tells them to leave the host's systemd alone.
           "--force-script-chrootless"]
    if os.geteuid() != 0:
        # Only root may run dpkg otherwise; every file it writes is
        # under @root, which we own.
        cmd.append("--force-not-root")
    p = subprocess.run(cmd + args, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace")


def napd_deb_install(tmp):
    """Build the .deb and install it into a scratch root under @tmp:
    (root, deb, None) or (None, None, why)."""
    deb, why = napd_deb_build(tmp)
    if not deb:
        return None, None, why
    root = os.path.join(tmp, "root")
    # The least a dpkg database needs: info/, updates/ and a status file.
    for d in ("info", "updates"):
        os.makedirs(os.path.join(root, "var/lib/dpkg", d))
    open(os.path.join(root, "var/lib/dpkg/status"), "w").close()
    # --force-depends: the scratch root has no libc6 package to satisfy
    # the Depends that dpkg-shlibdeps wrote.
    rc, out = dpkg_root(root, ["--force-depends", "--install", deb])
    if rc:
        return None, None, "dpkg --install: exit %d: %s" % (rc, out[-400:])
    return root, deb, None


def dpkg_status(root):
    """napd's Status in the scratch root's database, or None."""
    p = subprocess.run(["dpkg-query", "--admindir=" +
                        os.path.join(root, "var/lib/dpkg"), "-W",
                        "-f=${Status}", "napd"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    return p.stdout.decode().strip() if p.returncode == 0 else None


def t_napd_deb():
    """make deb builds napd's package; dpkg installs it into a scratch
    root with the binary, unit, man page and conffile where they belong,
    enables and starts nothing; -r keeps the (edited) conffile, -P drops
    it and an operator's enablement link."""
    import gzip
    with tempfile.TemporaryDirectory(prefix="ps-napd-deb.") as tmp:
        root, deb, why = napd_deb_install(tmp)
        if not root:
            return "failed", why, None
        files = {
            "binary": "usr/sbin/napd",
            "unit": "lib/systemd/system/napd.service",
            "conffile": "etc/napd.conf",
            "man page": "usr/share/man/man8/napd.8.gz",
            "copyright": "usr/share/doc/napd/copyright",
        }
        missing = [k for k, f in files.items()
                   if not os.path.isfile(os.path.join(root, f))]
        if missing:
            return "failed", "not installed: " + ", ".join(
                "%s (/%s)" % (k, files[k]) for k in missing), None
        path = lambda k: os.path.join(root, files[k])  # noqa: E731
        p = subprocess.run([path("binary"), "--version"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        version = p.stdout.decode(errors="replace").strip()
        if p.returncode or not version.startswith("napd "):
            return "failed", "/usr/sbin/napd --version: exit %d, %r" % (
                p.returncode, version), None
        unit = open(path("unit")).read()
        if "ExecStart=/usr/sbin/napd " not in unit:
            return "failed", "the unit does not start /usr/sbin/napd", None
        with gzip.open(path("man page"), "rt") as f:
            if ".TH NAPD 8" not in f.read():
                return "failed", "napd.8.gz is not napd's man page", None
        depends = subprocess.run(["dpkg-deb", "-f", deb, "Depends"],
                                 stdout=subprocess.PIPE).stdout.decode()
        if "libc6" not in depends:
            return "failed", "Depends: %r, no libc6" % depends.strip(), None
        conffiles = open(os.path.join(
            root, "var/lib/dpkg/info/napd.conffiles")).read().split()
        if conffiles != ["/etc/napd.conf"]:
            return "failed", "conffiles: %r" % conffiles, None
        wants = os.path.join(root, "etc/systemd/system/"
                             "multi-user.target.wants/napd.service")
        if os.path.lexists(wants):
            return "failed", "the package enabled napd.service", None
        if dpkg_status(root) != "install ok installed":
            return "failed", "status after install: %r" % \
                dpkg_status(root), None

        # An operator sets napd up and enables it, then removes it.
        with open(path("conffile"), "a") as f:
            f.write("port = 80\nwake-dev = eth0\n")
        os.makedirs(os.path.dirname(wants))
        os.symlink("/lib/systemd/system/napd.service", wants)
        rc, out = dpkg_root(root, ["--remove", "napd"])
        if rc:
            return "failed", "dpkg --remove: exit %d: %s" % (
                rc, out[-400:]), None
        left = [k for k in ("binary", "unit", "man page")
                if os.path.exists(path(k))]
        if left:
            return "failed", "left after --remove: " + ", ".join(left), None
        if not os.path.isfile(path("conffile")) or \
                "port = 80" not in open(path("conffile")).read():
            return "failed", "--remove did not keep the edited " \
                "/etc/napd.conf", None
        status = dpkg_status(root)
        if status != "deinstall ok config-files":
            return "failed", "status after --remove: %r" % status, None

        rc, out = dpkg_root(root, ["--purge", "napd"])
        if rc:
            return "failed", "dpkg --purge: exit %d: %s" % (
                rc, out[-400:]), None
        if os.path.exists(path("conffile")):
            return "failed", "/etc/napd.conf left after --purge", None
        if os.path.lexists(wants):
            return "failed", "the enablement link is left after --purge", \
                None
        if dpkg_status(root) is not None:
            return "failed", "napd still known after --purge: %r" % \
                dpkg_status(root), None
    return "passed", "%s (%s, Depends: %s): installed, conffile kept by " \
        "--remove, gone with --purge" % (os.path.basename(deb), version,
                                         depends.strip()), None


HOST_TESTS.append(("napd deb: builds, installs with dpkg --root, --remove "
                   "keeps the conffile, --purge drops it", t_napd_deb))


def t_napd_unit_exposure():
    """systemd-analyze security --offline rates the installed napd.service
    at or below NAPD_EXPOSURE_MAX."""
    sa = shutil.which("systemd-analyze")
    if not sa:
        return "skipped", "no systemd-analyze (apt-get install systemd, " \
            "or make deps)", None
    with tempfile.TemporaryDirectory(prefix="ps-napd-unit.") as tmp:
        root, deb, why = napd_deb_install(tmp)
        if not root:
            return "failed", why, None
        # --root: the unit is looked up where the package installed it.
        # --threshold is on systemd's 0..100 scale, 10 times the score.
        p = subprocess.run([sa, "security", "--offline=true",
                            "--root=" + root, "--threshold=%d" %
                            round(NAPD_EXPOSURE_MAX * 10), "napd.service"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=120)
    out = p.stdout.decode(errors="replace")
    m = re.search(r"Overall exposure level for napd\.service: ([\d.]+) (\w+)",
                  out)
    if not m:
        if "offline" in out and ("unrecognized" in out or "Unknown" in out):
            return "skipped", "this systemd-analyze has no --offline", None
        return "failed", "no exposure level (exit %d): %s" % (
            p.returncode, out.strip()[-300:]), None
    score = float(m.group(1))
    detail = "exposure %.1f %s (at most %.1f)" % (score, m.group(2),
                                                   NAPD_EXPOSURE_MAX)
    if score > NAPD_EXPOSURE_MAX or p.returncode:
        return "failed", detail + ", exit %d" % p.returncode, None
    return "passed", detail, None


HOST_TESTS.append(("napd deb: systemd-analyze security rates the installed "
                   "napd.service at or below 5.0", t_napd_unit_exposure))


# --- the Debian 12 guest (issue 30) -------------------------------------------

DEBIAN_MKROOTFS = os.path.join(pslib.HERE, "debian", "mkrootfs.sh")
# DEBIAN_KERNEL=1 (as for make rootfs): the image with Debian's kernel,
# booted with that kernel and its initrd.
DEBIAN_OWN_KERNEL = os.environ.get("DEBIAN_KERNEL") == "1"
DEBIAN_ROOTFS = os.environ.get("ROOTFS") or \
    os.path.join(pslib.BUILD, "debian", "rootfs%s.qcow2" % (
        "-debkernel" if DEBIAN_OWN_KERNEL else ""))
DEBIAN_CONFIG = os.path.join(pslib.TOP, "configs", "debian-guest.config")


def debian_kernel_missing():
    """The options of configs/debian-guest.config that the kernel vm-run
    boots lacks (an empty list when it has them all)."""
    missing = []
    with open(DEBIAN_CONFIG) as f:
        for line in f:
            m = re.match(r"CONFIG_(\w+)=(\S+)", line)
            if m and pslib.kernel_config(m.group(1)) != m.group(2):
                missing.append(m.group(1))
    return missing


def debian_rootfs():
    """(path, None) once make rootfs's image is built (or up to date), else
    (None, why).  The image holds our kernel from its package (kernel-deb
    makes it when the kernel is newer), or with DEBIAN_KERNEL=1 Debian's."""
    if not shutil.which("mmdebstrap"):
        return None, "no mmdebstrap (make deps)"
    env = dict(os.environ)
    env.pop("KERNEL_DEB", None)
    steps = [("mkrootfs.sh", [DEBIAN_MKROOTFS, DEBIAN_ROOTFS])]
    if not DEBIAN_OWN_KERNEL:
        steps.insert(0, ("kernel-deb", [
            os.path.join(pslib.HERE, "kernel-deb"),
            os.path.join(pslib.BUILD, "linux"),
            os.path.join(pslib.BUILD, "obj")]))
    for name, argv in steps:
        try:
            p = subprocess.run(argv, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=1200,
                               env=env)
        except subprocess.TimeoutExpired:
            return None, "%s took more than 20 min" % name
        out = p.stdout.decode(errors="replace").strip().splitlines() or ["?"]
        if p.returncode:
            return None, "%s exited %d: %s" % (name, p.returncode,
                                               out[-1][:200])
        if name == "kernel-deb":
            env["KERNEL_DEB"] = out[-1]
    return DEBIAN_ROOTFS, None


# The Debian guest's checks (multi-user.target, running, Apache over the
# bridge, dmesg clean; DEBIAN_KERNEL=1 on Debian's own kernel) are
# tests/test_debian.py's, in its one boot.
