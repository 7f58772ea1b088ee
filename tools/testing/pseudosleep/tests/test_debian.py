# SPDX-License-Identifier: GPL-2.0
"""The Debian 12 server guest napping under napd (issue 30): one boot of
make rootfs's image (napd installed from its package and enabled, the
e1000e its wake device) shared by every test here, in this order.  The
host drives it through guest/debian-agent.py (debian_guest.py); real
clients (curl, memcached's memccp and memccat) reach it from the
namespace of its bridge.  Each PASSED line says what was measured.

This boot is the only one of the Debian guest in make test: it also holds
the checks of the former host test "debian:" (multi-user.target, running,
Apache over the bridge, dmesg clean).  DEBIAN_KERNEL=1 boots the image
made with Debian's own kernel on that kernel instead, to check the image
apart from ours: napd is masked there (no pseudo mode) and the tests that
need naps skip."""

import hashlib
import json
import os
import re
import shutil
import tempfile
import time

import pytest

import debian_guest
import pslib
import stats

ORDER = 5

# Requests of each series, and the quiet time before each: napd naps after
# 50 ms of quiet (its default), a nap's entry takes about 50 ms under TCG;
# 0.5 s leaves room for a slow host.
REQUESTS = 100
GAP_S = 0.5
# The transient timers (systemd-run --on-active; the second with
# WakeSystem=yes) and how long the host stays quiet after starting them.
TIMER_S = 5
ALARM_S = 7
QUIET_S = 10


@pytest.fixture(scope="module")
def guest(debian_vm):
    """The booted guest (conftest's debian_vm)."""
    return debian_vm


def naps(guest):
    return guest.stat("naps") if guest.napping else 0


def needs_naps(guest):
    if not guest.napping:
        pytest.skip("DEBIAN_KERNEL=1: Debian's kernel does not nap")


def median_ms(values):
    return 1000 * (stats.median(values) or 0)


def check_naps_met(n_naps, n_req, what):
    """At least one nap per four requests: the series ran against a
    napping guest.  Each quiet gap is 10 times napd's idle time, and 70 to
    87 of 100 requests met a nap in our runs; a loaded host makes the
    guest slower to go quiet, hence the margin."""
    if n_naps < n_req // 4:
        pytest.fail("%s: only %d naps during %d requests" % (
            what, n_naps, n_req), pytrace=False)


def test_boot(guest, record_property):
    """multi-user.target active, systemctl is-system-running says running,
    no failed unit, napd active (masked on Debian's own kernel)."""
    m = re.search(r"@@debian-booted@@ state=(\S*) uptime=([\d.]+)",
                  guest.console())
    multi = guest.out("systemctl is-active multi-user.target || "
                      "true").strip()
    state = guest.out("systemctl is-system-running || true").strip()
    failed = guest.out("systemctl --failed --no-legend --plain "
                       "--no-pager").split()
    napd = guest.out("systemctl is-active napd || true").strip()
    kernel = guest.out("uname -r").strip()
    want_napd = "active" if guest.napping else "inactive"
    if multi != "active" or state != "running" or failed or \
            napd != want_napd:
        pytest.fail("debian boot: multi-user.target %s, %s, failed units: "
                    "%s, napd %s" % (multi, state, " ".join(failed) or
                                     "none", napd), pytrace=False)
    record_property("detail", "kernel %s: multi-user.target active, "
                    "running, no failed unit, napd %s; booted in %s s of "
                    "guest uptime, agent up after %.0f s" % (
                        kernel, napd, m.group(2) if m else "?",
                        guest.boot_s))


def test_kernel_from_package(guest, record_property):
    """The running kernel is the one its linux-image package installed:
    dpkg has the package installed, owns /boot/vmlinuz-$(uname -r), and
    that file is the one QEMU booted (the image's, copied out by make
    rootfs)."""
    rel = guest.out("uname -r").strip()
    vmlinuz = "/boot/vmlinuz-" + rel
    owner = guest.out("dpkg -S %s 2>&1 || true" % vmlinuz).strip()
    pkg = owner.split(":")[0] if owner.endswith(": " + vmlinuz) else None
    status = guest.out("dpkg-query -W -f='${Version} ${Status}' %s 2>&1 "
                       "|| true" % pkg).strip() if pkg else ""
    inside = guest.out("sha256sum %s 2>&1 || true" % vmlinuz).split()[0]
    with open(guest.rootfs + "-vmlinuz", "rb") as f:
        booted = hashlib.sha256(f.read()).hexdigest()
    if not pkg or not status.endswith(" install ok installed") or \
            inside != booted:
        pytest.fail("debian: kernel %s: %s owned by %r (%s); sha256 %s in "
                    "the image, %s booted" % (rel, vmlinuz, owner, status,
                                              inside[:16], booted[:16]),
                    pytrace=False)
    record_property("detail", "%s %s installed by apt, owns %s, the file "
                    "QEMU booted (sha256 %s)" % (pkg, status.split()[0],
                                                 vmlinuz, booted[:16]))


def test_napd_naps(guest, record_property):
    """napd naps under its unit's defaults: the kernel's nap counter and
    napd's journal both grow over a quiet time, and napd chose wake on
    work (--wake-on auto) with the capabilities its unit grants."""
    needs_naps(guest)
    status = json.loads(guest.out("napd --status"))
    n0 = naps(guest)
    time.sleep(3)
    n1 = naps(guest)
    log = guest.out("journalctl -u napd -b --no-pager -o cat | "
                    "grep -c '^nap [0-9]* slept' || true").strip()
    # --wake-on auto: wake on work where the kernel and the unit's
    # capabilities allow it, as they do here; else the line says why not.
    wake = guest.out("journalctl -u napd -b --no-pager -o cat | "
                     "grep -m1 '^naps end on' || true").strip()
    # Units with WatchdogSec= as systemd reports them (systemctl show):
    # journald, logind and udevd have one in Debian 12.
    # napd asks once a minute; a first systemctl show that timed out
    # under TCG is logged as a warning and asked again.
    def watchdog_line():
        return guest.out("journalctl -u napd -b --no-pager -o cat | "
                         "grep 'shortest WatchdogSec=' | tail -1").strip()
    end = time.monotonic() + 70
    dog = watchdog_line()
    while not dog and time.monotonic() < end:
        time.sleep(5)
        dog = watchdog_line()
    m = re.search(r"shortest WatchdogSec= .+? \((\S+)\)", dog)
    unit_dog = guest.out("systemctl show -P WatchdogUSec %s" % m.group(1)
                         ).strip() if m else ""
    # Its unit lets it make the trace instance that times each device.
    trace = guest.out("journalctl -u napd -b --no-pager -o cat | "
                      "grep -m1 'trace instance' || true").strip()
    asleep = guest.stat("total_nap_ns") / 1e9
    if trace:
        pytest.fail("napd under its unit: %r" % trace, pytrace=False)
    if not m or unit_dog in ("", "0", "infinity"):
        head = guest.out("journalctl -u napd -b --no-pager -o cat | "
                         "head -20")
        pytest.fail("napd did not find the units with WatchdogSec= through "
                    "systemctl show: %r (the unit's WatchdogUSec: %r); its "
                    "journal: %s" % (dog, unit_dog, head), pytrace=False)
    if n1 <= n0 or not log.isdigit() or int(log) == 0:
        pytest.fail("napd: naps %d -> %d over 3 quiet s, %s nap lines in "
                    "its journal" % (n0, n1, log), pytrace=False)
    if "wake on task" not in wake:
        pytest.fail("napd under its unit did not choose wake on work: %r"
                    % wake, pytrace=False)
    record_property("detail", "idle_ms %s (default), %d naps over 3 quiet "
                    "s, %s nap lines in journalctl -u napd, %.1f s asleep "
                    "since boot; %s; %s" % (status.get("idle_ms"), n1 - n0,
                                            log, asleep, wake[:90], dog))


def answered_during_naps(guest, record_property, what, argv, want):
    """REQUESTS runs of the client argv in the bridge's namespace, each
    after GAP_S of quiet: each must exit 0 with the output want (a
    trailing newline aside), and the series must meet naps."""
    def ask(i):
        rc, out = guest.netns_cmd(argv, timeout=40)
        return None if rc == 0 and out.rstrip("\n") == want.rstrip("\n") \
            else "%s exit %d: %r" % (argv[0], rc, out[:80])
    n0 = naps(guest)
    rows = debian_guest.spaced(REQUESTS, GAP_S, ask)
    n = naps(guest) - n0
    bad = [r for r in rows if r["why"]]
    if bad:
        pytest.fail("%s: %d/%d lost, first #%d: %s" % (
            what, len(bad), REQUESTS, bad[0]["i"], bad[0]["why"]),
            pytrace=False)
    if guest.napping:
        check_naps_met(n, REQUESTS, what)
    took = [r["s"] for r in rows]
    record_property("detail", "%d requests, 0 lost, %d naps, median %.0f "
                    "ms, max %.0f ms (%s, process included)" % (
                        REQUESTS, n, median_ms(took), 1000 * max(took),
                        argv[0]))


def test_apache_during_naps(guest, record_property):
    """curl GETs from the host, each after a quiet gap: all answered."""
    want = open(os.path.join(pslib.HERE, "debian", "overlay", "var", "www",
                             "html", "index.html"), "rb").read().decode()
    answered_during_naps(guest, record_property, "Apache", [
        "curl", "-sS", "-m", "30", "http://10.0.2.15/"], want)


def test_memcached_during_naps(guest, record_property):
    """memccat gets from the host, each after a quiet gap, of a value
    memccp stored: all answered with the value."""
    tmp = tempfile.mkdtemp(prefix="ps-memc.")
    key = "ps-debian-key"
    value = "pseudosleep %d" % os.getpid()
    with open(os.path.join(tmp, key), "w") as f:
        f.write(value)
    servers = "--servers=10.0.2.15"
    try:
        rc, out = guest.netns_cmd(["memccp", servers,
                                   os.path.join(tmp, key)])
    finally:
        os.unlink(os.path.join(tmp, key))
        os.rmdir(tmp)
    if rc:
        pytest.fail("memcached: memccp exit %d: %s" % (rc, out.strip()),
                    pytrace=False)
    # memccat ends the value with a newline of its own.
    answered_during_naps(guest, record_property, "memcached",
                         ["memccat", servers, key], value)


def load_burst(guest, argv, want_ops):
    """One load generator's burst on a napping guest: (None, detail) when
    it exited 0 having done want_ops operations with no failure, else
    (why, None).  ab prints "Complete requests" and "Failed requests",
    memcaslap "Ops: N" (and exits 1 when a server does not answer)."""
    rc, out = guest.netns_cmd(argv, timeout=120)
    if argv[0] == "ab":
        done = re.search(r"^Complete requests:\s+(\d+)", out, re.M)
        failed = re.search(r"^Failed requests:\s+(\d+)", out, re.M)
        non2xx = re.search(r"^Non-2xx responses:\s+(\d+)", out, re.M)
        longest = re.search(r"^\s+100%\s+(\d+)", out, re.M)
        ok = done and failed and int(done.group(1)) == want_ops and \
            failed.group(1) == "0" and not non2xx
        detail = longest and int(longest.group(1))
    else:
        done = re.search(r"^Run time: \S+ Ops: (\d+)", out, re.M)
        ok = done and int(done.group(1)) == want_ops and \
            re.search(r"^get_misses: 0$", out, re.M)
        detail = None
    if rc or not ok:
        return "%s exit %d: %s" % (argv[0], rc,
                                   " | ".join(out.splitlines()[-4:])), None
    return None, detail


def test_load_generators_after_naps(guest, record_property):
    """ApacheBench and memcaslap (memaslap), 4 connections at once, each
    burst after a quiet gap in which the guest naps: every request and
    operation of every burst done, none failed."""
    needs_naps(guest)
    rounds, n_ab, n_mc = 5, 40, 200
    n0 = naps(guest)
    longest = []
    for i in range(rounds):
        for argv, want in (
                (["ab", "-q", "-s", "30", "-n", str(n_ab), "-c", "4",
                  "http://10.0.2.15/"], n_ab),
                (["memcaslap", "-s", "10.0.2.15:11211", "-x", str(n_mc),
                  "-c", "4", "-T", "1"], n_mc)):
            time.sleep(1.5)
            why, detail = load_burst(guest, argv, want)
            if why:
                pytest.fail("burst %d of %d: %s" % (i + 1, rounds, why),
                            pytrace=False)
            if detail is not None:
                longest.append(detail)
    n = naps(guest) - n0
    if n < rounds:	# 2 * rounds quiet gaps, 10 naps in our runs
        pytest.fail("ab and memcaslap bursts: only %d naps in %d quiet "
                    "gaps" % (n, 2 * rounds), pytrace=False)
    record_property("detail", "%d bursts of ab -n %d -c 4 and %d of "
                    "memcaslap -x %d -c 4, each after 1.5 s of quiet: "
                    "all done, 0 failed, %d naps; ab's longest request "
                    "per burst %s ms" % (rounds, n_ab, rounds, n_mc, n,
                                         "/".join(map(str, longest))))


def test_nvme_after_nap(guest, record_property):
    """A file written and synced before a nap reads back the same from the
    NVMe root after it (page cache dropped, so the read is the disk's)."""
    needs_naps(guest)
    path = "/var/tmp/ps-nvme-check"
    before = guest.out("head -c 1048576 /dev/urandom > %s && sync && "
                       "sha256sum < %s" % (path, path)).split()[0]
    n0 = naps(guest)
    time.sleep(3)
    n1 = naps(guest)
    out = guest.out("sync; echo 3 > /proc/sys/vm/drop_caches; "
                    "s=$(date +%%s%%N); h=$(sha256sum < %s); "
                    "e=$(date +%%s%%N); echo $h $(( (e - s) / 1000 )); "
                    "rm %s; sync" % (path, path)).split()
    after, read_us = out[0], int(out[-1])
    if n1 <= n0:
        pytest.fail("NVMe: no nap between the write and the read",
                    pytrace=False)
    if after != before:
        pytest.fail("NVMe: read back %s, wrote %s" % (after[:16],
                                                      before[:16]),
                    pytrace=False)
    record_property("detail", "1 MiB read back intact after %d naps, "
                    "read and sha256sum took %.1f ms" % (n1 - n0,
                                                         read_us / 1000))


def fired_at(guest, unit):
    """The guest's uptime that UNIT's command wrote to /run/UNIT, waiting
    up to 60 s for it (each look wakes a napping guest), or None."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        rc, out = guest.run("cat /run/%s 2>/dev/null" % unit)
        if rc == 0 and out.strip():
            return float(out.split()[0])
        time.sleep(0.2)
    return None


def test_timer_during_nap(guest, record_property):
    """Two systemd-run timers started just before the host goes quiet for
    QUIET_S both fire; how late each ran is measured, not bounded.  A nap
    ends only on the NIC or on a wakeup that ends a suspend to idle, so a
    plain timer (--on-active=TIMER_S) due during a nap runs at the next
    wake.  The other, due ALARM_S after its start, has WakeSystem=yes (an
    alarm timer): its alarm ends the nap (Documentation/pseudosleep.rst,
    "System wakeup events"), before the host's next connection."""
    needs_naps(guest)
    # AccuracySec=1us: systemd's default (1 min) lets a timer run up to a
    # minute late to coalesce wakeups.  The guest's uptime before and after
    # each systemd-run: a timer is due its time after a moment between.
    run = "systemd-run --quiet --unit=%s --on-active=%d " \
          "--timer-property=AccuracySec=1us %s sh -c " \
          "'cut -d\" \" -f1 /proc/uptime > /run/%s'"
    up = "cut -d' ' -f1 /proc/uptime"
    out = guest.out("; ".join([
        up, run % ("ps-timer", TIMER_S, "", "ps-timer"), up,
        run % ("ps-alarm", ALARM_S, "--timer-property=WakeSystem=yes",
               "ps-alarm"), up])).split()
    t = [float(x) for x in out]
    due = {"ps-timer": (t[0] + TIMER_S, t[1] + TIMER_S),
           "ps-alarm": (t[1] + ALARM_S, t[2] + ALARM_S)}
    n0 = naps(guest)
    time.sleep(QUIET_S)
    # The first connection after the quiet time ends the nap.
    woke = float(guest.out(up))
    n1 = naps(guest)
    late = {}
    for unit, (lo, hi) in due.items():
        at = fired_at(guest, unit)
        if at is None:
            pytest.fail("timer: /run/%s not written 60 s after %d s quiet"
                        % (unit, QUIET_S), pytrace=False)
        if at < lo:
            pytest.fail("timer: %s ran %.2f s early" % (unit, lo - at),
                        pytrace=False)
        late[unit] = "%.2f-%.2f s" % (max(at - hi, 0), at - lo)
    if n1 <= n0:
        pytest.fail("timer: no nap during the %d quiet s" % QUIET_S,
                    pytrace=False)
    record_property("detail", "%d naps in %d quiet s; the plain %d s timer "
                    "ran %s late, the WakeSystem=yes %d s timer %s late; "
                    "the host's connection woke the guest %.2f s after the "
                    "plain timer's due time" % (
                        n1 - n0, QUIET_S, TIMER_S, late["ps-timer"],
                        ALARM_S, late["ps-alarm"],
                        woke - due["ps-timer"][1]))


# Holding naps off (issue 32): a logind sleep inhibitor, held by
# systemd-inhibit in a transient unit, and napd's own pause.  Each is held
# HOLD_S; the host checks that no nap came over QUIET_HELD_S of quiet
# while it is held, and that naps came back QUIET_AFTER_S after it ended.
HOLD_S = 8
QUIET_HELD_S = 4
QUIET_AFTER_S = 3


def pause_left(guest):
    """napd --status's pause: None when not paused, else the ms left (-1
    for until napctl resume)."""
    p = json.loads(guest.out("napd --status")).get("paused")
    if p is None:
        return None
    return -1 if p.get("left_ms") is None else p["left_ms"]


def wait_for(what, cond, limit):
    """Poll cond() every 0.2 s (each poll is a request: it ends a nap)
    until it is true; fails the test after limit s."""
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            pytest.fail(what, pytrace=False)
        time.sleep(0.2)


def test_naps_held_off(guest, record_property):
    """systemd-inhibit --what=sleep and napctl pause each hold napd's
    naps off while they last, and naps come back once they end."""
    needs_naps(guest)
    holders = (
        ("systemd-inhibit --what=sleep",
         "systemd-run --quiet --unit=ps-inhibit systemd-inhibit "
         "--what=sleep --who=pytest --why=test sleep %d" % HOLD_S,
         lambda: guest.run("systemd-inhibit --list --no-pager | "
                           "grep -q pytest")[0] == 0),
        ("napctl pause", "napctl pause %ds" % HOLD_S,
         lambda: pause_left(guest) not in (None, 0)))
    detail = []
    for what, start, held in holders:
        guest.out(start)
        # Held once logind lists it, or napd says it is paused.
        wait_for("%s: not held %d s after it started" % (what, HOLD_S),
                 held, HOLD_S)
        n0 = naps(guest)
        time.sleep(QUIET_HELD_S)
        n1 = naps(guest)
        wait_for("%s: still held %d s after it started" % (what,
                                                         3 * HOLD_S),
                 lambda: not held(), 3 * HOLD_S)
        time.sleep(QUIET_AFTER_S)
        n2 = naps(guest)
        if n1 != n0:
            pytest.fail("%s: %d naps while it was held (%d quiet s)"
                        % (what, n1 - n0, QUIET_HELD_S), pytrace=False)
        if n2 <= n1:
            pytest.fail("%s: no nap in %d quiet s after it ended"
                        % (what, QUIET_AFTER_S), pytrace=False)
        detail.append("%s: 0 naps in %d quiet s held, %d in the %d s after"
                      % (what, QUIET_HELD_S, n2 - n1, QUIET_AFTER_S))
    record_property("detail", "; ".join(detail))


LB_QUIET_S = 20


def napd_blocked(guest):
    return json.loads(guest.out("napd --status"))


@pytest.mark.skipif(not shutil.which("haproxy"), reason="no haproxy "
                    "(make deps)")
def test_haproxy_keepalive(guest, record_property):
    """A request through HAProxy (keep-alive to Apache, TCP checks every
    2 s) is answered; over LB_QUIET_S s without requests the share of
    time asleep, the naps and what held naps back are measured: napd
    counts an ESTABLISHED connection on a served port as busy, and
    Apache keeps HAProxy's idle connection for its KeepAliveTimeout."""
    needs_naps(guest)
    where = tempfile.mkdtemp(prefix="ps-haproxy.")
    lb = debian_guest.haproxy_start(guest, where)
    try:
        row = debian_guest.haproxy_up(lb, where)
        if not row:
            pytest.fail("HAProxy: backend %s (haproxy %s)" % (
                debian_guest.haproxy_server(where).get("status", "?"),
                lb.poll()), pytrace=False)
        rc, out = guest.netns_cmd(["curl", "-sS", "-m", "30",
                                   debian_guest.HAPROXY_URL], timeout=40)
        if rc or "pseudosleep debian guest" not in out:
            pytest.fail("HAProxy: curl exit %d: %r" % (rc, out[:80]),
                        pytrace=False)
        held = guest.out("ss -Htn state established '( sport = :80 )' "
                         "| wc -l").strip()
        st0 = napd_blocked(guest)
        ns0 = guest.stat("total_nap_ns")
        chk0 = int(row.get("chkdown") or 0)
        t0 = time.monotonic()
        time.sleep(LB_QUIET_S)
        ns1 = guest.stat("total_nap_ns")
        span = time.monotonic() - t0
        st1 = napd_blocked(guest)
        after = guest.out("ss -Htn state established '( sport = :80 )' "
                          "| wc -l").strip()
        woke = guest.out("echo $(cat /sys/power/pseudosleep/"
                         "last_wake_source) irq $(cat /sys/power/"
                         "pseudosleep/last_wake_irq)").strip()
        row = debian_guest.haproxy_server(where)
        rc, out = guest.netns_cmd(["curl", "-sS", "-m", "30",
                                   debian_guest.HAPROXY_URL], timeout=40)
    finally:
        lb.terminate()
        lb.wait(timeout=30)
        shutil.rmtree(where, ignore_errors=True)
    if rc or "pseudosleep debian guest" not in out:
        pytest.fail("HAProxy: after the quiet time, curl exit %d: %r" % (
            rc, out[:80]), pytrace=False)
    naps_n = st1["naps"] - st0["naps"]
    blocked = {k: st1["blocked"][k] - st0["blocked"].get(k, 0)
               for k in st1["blocked"]
               if st1["blocked"][k] != st0["blocked"].get(k, 0)}
    record_property("detail", "answered through HAProxy, %s connection(s) "
                    "to :80 open after it, %s after %.0f s of health checks "
                    "only: %d naps, %.0f %% of the time asleep (last woken by %s), "
                    "backend %s (last check %s in %s ms), %d times down; "
                    "naps held back by %s" % (
                        held, after, span, naps_n,
                        100 * (ns1 - ns0) / 1e9 / span, woke,
                        row.get("status"), row.get("check_status"),
                        row.get("check_duration"),
                        int(row.get("chkdown") or 0) - chk0,
                        json.dumps(blocked)))


def test_still_running(guest, record_property):
    """After the naps above, systemctl is-system-running still says running
    and no unit logged at error priority or worse (the kernel's messages
    are the dmesg test's)."""
    total = naps(guest)
    aborted = guest.stat("aborted_naps") if guest.napping else 0
    state = guest.out("systemctl is-system-running || true").strip()
    failed = guest.out("systemctl --failed --no-legend --plain "
                       "--no-pager").split()
    errors = []
    for line in guest.out("journalctl -b -p err -o json --no-pager "
                          "|| true").splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("_TRANSPORT") != "kernel":
            errors.append("%s: %s" % (e.get("_SYSTEMD_UNIT") or
                                      e.get("SYSLOG_IDENTIFIER"),
                                      e.get("MESSAGE")))
    if state != "running" or failed or errors:
        pytest.fail("after %d naps: %s, failed units: %s, %d errors%s" % (
            total, state, " ".join(failed) or "none", len(errors),
            (", first: " + str(errors[0])[:200]) if errors else ""),
            pytrace=False)
    record_property("detail", "running after %d naps (%d aborted), no "
                    "failed unit, no error in the journal" % (total,
                                                              aborted))


# The NVMe driver's suspend (nvme_dev_disable) starts freezing its queues
# in one work item and unfreezes them in another; with the debug kernel's
# lockdep that is reported on the first nap as a leaked lock and a
# possible circular dependency, and lockdep turns itself off.  The kernel
# side (not ours to change here) is blk_freeze_queue_start_non_owner() in
# nvme_start_freeze(); until then that report is expected, and any other
# kernel complaint still fails.
# The second report is the resume's work item, which releases the locks
# the suspend's took ("lock=2->0").  Each pattern is searched in a whole
# report, from its first line to the next report's.
NVME_FREEZE = (re.compile(r"at: nvme_start_freeze"),
               re.compile(r"(?s)workqueue leaked atomic, lock or RCU.*"
                          r"lock=\d+->0 RCU=0->0 workfn=async_run_entry_fn"))


def splats(dmesg):
    """The kernel's complaints, as reports from a BAD_DMESG line to the
    next WARNING:, BUG: or end trace line; returns the first lines of the
    known NVMe ones and of the others."""
    lines = dmesg.splitlines()
    known, other, i = [], [], 0
    while i < len(lines):
        if not pslib.BAD_DMESG.search(lines[i]) or \
                "Call Trace:" in lines[i]:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not re.search(
                r"WARNING:|BUG:|end trace", lines[j]):
            j += 1
        block = "\n".join(lines[i:j])
        nvme = any(rx.search(block) for rx in NVME_FREEZE)
        (known if nvme else other).append(lines[i].strip())
        i = j
    return known, other


def test_dmesg_clean(guest, record_property):
    """No WARN, BUG, lockdep or RCU-stall report in the kernel log: the
    guest's dmesg, whose lines nothing interleaves, or the console's copy
    if the ring buffer lost the boot's first lines."""
    dmesg = guest.out("dmesg")
    if not dmesg.startswith("[    0.000000]"):
        dmesg = guest.console()
    known, other = splats(dmesg)
    if other:
        keep = "/tmp/ps-debian-console.log"
        with open(keep, "w") as f:
            f.write(dmesg)
        pytest.fail("dmesg: %d reports, first: %s (console in %s)" % (
            len(other), other[0][:160], keep), pytrace=False)
    if known:
        pytest.xfail("the NVMe queue-freeze lockdep report on the first "
                     "nap (%d lines; lockdep is off after it): %s" % (
                         len(known), known[0][:100]))
    record_property("detail", "no report in %d lines" %
                    len(dmesg.splitlines()))
