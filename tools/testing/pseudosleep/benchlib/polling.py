# SPDX-License-Identifier: GPL-2.0
"""3. Polling idle driver: request latency and host CPU cost, and
throughput to show no regression, for

  hlt      the default idle loop (HLT; no cpuidle driver in this guest)
  poll     booted with idle=poll
  acpi     acpi_idle with POLL, C1 and C2 (vm-run --cstates), menu
  pollist  acpi_idle, eth0's NAPI on the polling list, polled from its
           POLL state (POLLIST_APPEND): the platform's states are kept;
           "missing" when this kernel does not have it
  napi     HLT + NAPI deferral: napi_defer_hard_irqs=2,
           gro_flush_timeout=20000 ns on eth0
  coal     HLT + NIC interrupt coalescing (ethtool -C eth0 rx-usecs 50
           rx-frames 16); virtio-net accepts it only with
           VIRTIO_NET_F_NOTF_COAL, which QEMU 7.2 does not offer, so it is
           normally reported as not supported

Latency: ab -n N -c 1 on a small page; N sequential memcached gets of a
100-byte value (Python client); ping is not possible (QEMU user
networking does not forward ICMP from the host to the guest).
Throughput: iperf3 host -> guest, and memcached gets of a 1 KB value on
4 connections.
"""


from . import common as C
from . import load as L

MODES = ("hlt", "poll", "acpi", "pollist", "napi", "coal")
APPEND = {"poll": "idle=poll", "pollist": C.POLLIST_APPEND}
VM_ARGS = {"acpi": C.POLLIST_VM_ARGS, "pollist": C.POLLIST_VM_ARGS}
NAPI_DEFER, GRO_FLUSH_NS = 2, 20000


def guest_script(mode):
    s = r"""
httpd -p 80 -h /www
memcached -u root -d -p 11211 -U 0 -I 2m -m 256 -t 2
iperf3 -s -D -p 5201 >/dev/null 2>&1
"""
    if mode == "pollist":
        s += C.POLLIST_CHECK
    elif mode == "acpi":
        s += C.driver_check(C.POLLIST_DRIVER, False)
    elif mode == "napi":
        s += r"""
echo %d > /sys/class/net/eth0/napi_defer_hard_irqs || { echo "MISSING napi_defer_hard_irqs not writable"; exec sleep 1000000; }
echo %d > /sys/class/net/eth0/gro_flush_timeout || { echo "MISSING gro_flush_timeout not writable"; exec sleep 1000000; }
""" % (NAPI_DEFER, GRO_FLUSH_NS)
    elif mode == "coal":
        s += r"""
if ! msg=$(ethtool -C eth0 rx-usecs 50 rx-frames 16 2>&1); then
	echo "MISSING not supported: ethtool -C eth0 rx-usecs 50: $msg" | tr '\n' ' '; echo
	exec sleep 1000000
fi
"""
    s += "echo READY\nexec sleep 1000000\n"
    return s


OTHER = []


def measure(bg, fn):
    """Run fn(); (result, wall seconds, QEMU CPU seconds)."""
    m = C.CpuMeter(bg)
    r = fn()
    c = m.stop()
    if "other_pct" in c:
        OTHER.append(c["other_pct"])
    return r, c["wall_s"], c.get("cpu_s")


def guest_count(port, cgi):
    """The number a counting CGI of GUEST_LIB prints, or None."""
    body, _ = C.http_get(port, "/cgi-bin/" + cgi, timeout=10)
    try:
        return int(body.decode().strip())
    except (AttributeError, ValueError):
        return None


def run_mode(ctx, mode, run, p):
    row = {"mode": mode, "run": run, "status": "ok"}
    del OTHER[:]
    bg = C.BenchGuest("polling-%s-%d" % (mode, run), guest_script(mode),
                      ports=(80, 11211, 5201), append=APPEND.get(mode, ""),
                      logdir=ctx.logdir, vm_args=VM_ARGS.get(mode, ()))
    try:
        m = bg.wait(r"^(READY|MISSING.*)$", 180)
        if not m:
            row["status"] = "failed: guest did not start"
            C.broken("polling %s run %d: guest did not start" % (mode, run),
                     bg)
            return row
        ctx.note_guest(bg)
        if m.group(1).startswith("MISSING"):
            row["note"] = m.group(1)[len("MISSING "):].strip()
            row["status"] = "not supported" if row["note"].startswith(
                "not supported") else "missing"
            return row
        row["driver"] = bg.info.get("driver")
        hp, mp, ip = bg.port[80], bg.port[11211], bg.port[5201]
        mc = L.memcached_connect(mp)
        mc.set("k", b"x" * 100)
        mc.set("v1k", b"y" * 1024)
        mc.close()
        for _ in range(5):
            C.http_get(hp, "/")
        # HTTP latency, ab -c 1.  The hits include those of the two
        # counting GETs between h0 and h1 (of 200 requests).
        h0, i0 = guest_count(hp, "pollhits"), guest_count(hp, "irq")
        r, wall, cpu = measure(bg, lambda: L.ab(hp, "/", n=p["ab_n"], c=1))
        i1, h1 = guest_count(hp, "irq"), guest_count(hp, "pollhits")
        if "error" in r:
            row["note"] = "ab: " + r["error"]
        else:
            row.update({"http_n": r.get("complete"),
                        "http_failed": r.get("failed"),
                        "http_mean_ms": r.get("mean_ms"),
                        "http_p50_ms": r.get("p50"),
                        "http_p90_ms": r.get("p90"),
                        "http_p99_ms": r.get("p99"),
                        "http_max_ms": r.get("max"),
                        "http_rps": r.get("rps")})
            if cpu is not None and r.get("complete"):
                row["http_cpu_ms_per_req"] = 1e3 * cpu / r["complete"]
                row["http_cpu_pct"] = 100.0 * cpu / wall
            if None not in (i0, i1) and r.get("complete"):
                row["http_irqs_per_req"] = (i1 - i0) / r["complete"]
            if None not in (h0, h1) and r.get("complete"):
                row["http_hits_per_req"] = (h1 - h0) / r["complete"]
        # memcached get latency, one connection, sequential.
        h0 = guest_count(hp, "pollhits")
        lat, wall, cpu = measure(bg, lambda: L.memcached_latency(
            mp, "k", p["mc_n"]))
        h1 = guest_count(hp, "pollhits")
        if None not in (h0, h1) and lat:
            # the CGI's own GET before it counts too: not subtracted
            row["mc_hits_per_get"] = (h1 - h0) / len(lat)
        s = C.summary([x * 1e3 for x in lat])
        row.update({"mc_n": s["n"], "mc_p50_ms": s["median"],
                    "mc_p90_ms": s["p90"], "mc_p99_ms": s["p99"],
                    "mc_max_ms": s["max"]})
        if cpu is not None and lat:
            row["mc_cpu_ms_per_get"] = 1e3 * cpu / len(lat)
            row["mc_cpu_pct"] = 100.0 * cpu / wall
        # iperf3, host -> guest.
        r, wall, cpu = measure(bg, lambda: L.iperf3(ip, p["iperf_s"]))
        if "error" in r:
            row["note"] = (row.get("note", "") + " iperf3: "
                           + str(r["error"])).strip()
        else:
            row["iperf_mbps"] = r["recv_mbps"]
            if cpu is not None:
                row["iperf_cpu_pct"] = 100.0 * cpu / wall
        # memcached throughput, 1 KB values on 4 connections.
        (gets, nbytes, errs), wall, cpu = measure(bg, lambda: L.memcached_load(
            mp, "v1k", p["mc_s"], conns=4))
        row["mc_tput_gets_s"] = gets / wall
        row["mc_tput_kbs"] = nbytes / 1024.0 / wall
        row["mc_tput_errors"] = errs
        if cpu is not None:
            row["mc_tput_cpu_pct"] = 100.0 * cpu / wall
            if cpu > 0:
                row["mc_tput_kb_per_cpu_s"] = nbytes / 1024.0 / cpu
    except Exception as e:  # noqa: BLE001 - a mode that breaks is reported
        row["status"] = "failed: %s" % e
    finally:
        bg.stop()
    if OTHER:
        row["other_cpu_pct"] = sum(OTHER) / len(OTHER)
    return row


FIELDS = ["mode", "run", "status", "driver", "http_n", "http_failed",
          "http_mean_ms", "http_p50_ms", "http_p90_ms", "http_p99_ms",
          "http_max_ms", "http_rps", "http_cpu_ms_per_req", "http_cpu_pct",
          "http_irqs_per_req", "http_hits_per_req", "mc_n", "mc_p50_ms", "mc_p90_ms", "mc_p99_ms",
          "mc_max_ms", "mc_cpu_ms_per_get", "mc_cpu_pct", "mc_hits_per_get",
          "iperf_mbps",
          "iperf_cpu_pct", "mc_tput_gets_s", "mc_tput_kbs",
          "mc_tput_errors", "mc_tput_cpu_pct", "mc_tput_kb_per_cpu_s",
          "other_cpu_pct", "note"]
SUMMARISED = ["http_mean_ms", "http_p50_ms", "http_p90_ms", "http_p99_ms",
              "http_cpu_ms_per_req", "http_cpu_pct", "http_irqs_per_req",
              "http_hits_per_req", "mc_hits_per_get", "mc_p50_ms", "mc_p90_ms", "mc_p99_ms", "mc_cpu_ms_per_get",
              "mc_cpu_pct", "iperf_mbps", "iperf_cpu_pct", "mc_tput_kbs",
              "mc_tput_cpu_pct", "mc_tput_kb_per_cpu_s", "other_cpu_pct"]


def run(ctx):
    modes = ("acpi", "pollist", "coal") if ctx.quick else MODES
    modes = ctx.modes(modes, MODES)
    p = ({"ab_n": 30, "mc_n": 50, "iperf_s": 2, "mc_s": 2} if ctx.quick else
         {"ab_n": 200, "mc_n": 500, "iperf_s": 5, "mc_s": 5})
    C.say("== 3. polling list: ab -n %d -c 1, %d memcached gets, iperf3 "
          "-t %d, memcached 1 KB gets %d s x 4 conns; modes %s, %d run(s); "
          "ping skipped (user networking forwards no ICMP)" % (
              p["ab_n"], p["mc_n"], p["iperf_s"], p["mc_s"],
              ", ".join(modes), ctx.runs))

    def say(run, mode, r):
        C.say("  run %d %-8s %s  http mean %s ms p99 %s, CPU %s ms/req; "
              "memcached p50 %s ms p99 %s; iperf3 %s Mbit/s; memcached "
              "%s KB/s%s" % (
                  run, mode, r["status"], C.fmt(r.get("http_mean_ms")),
                  C.fmt(r.get("http_p99_ms"), 0),
                  C.fmt(r.get("http_cpu_ms_per_req")),
                  C.fmt(r.get("mc_p50_ms"), 2),
                  C.fmt(r.get("mc_p99_ms"), 2),
                  C.fmt(r.get("iperf_mbps")),
                  C.fmt(r.get("mc_tput_kbs")),
                  ("  " + r["note"]) if r.get("note") else ""))

    rows = ctx.each_mode(
        modes, lambda mode, run: run_mode(ctx, mode, run, p), say)
    C.write_csv(ctx.path("polling.csv"), rows, FIELDS)
    summary = []
    for mode in modes:
        r = [x for x in rows if x["mode"] == mode]
        ok = [x for x in r if x["status"] == "ok"]
        row = {"mode": mode, "runs": len(ok),
               "status": "ok" if ok else (r[0]["status"] if r else "not run"),
               "note": "; ".join(sorted(set(x.get("note", "") for x in r
                                            if x.get("note"))))}
        for k in SUMMARISED:
            s = C.summary([x.get(k) for x in ok])
            row[k], row[k + "_min"], row[k + "_max"] = (s["median"], s["min"],
                                                        s["max"])
        summary.append(row)
    C.write_csv(ctx.path("polling_summary.csv"), summary)
    C.say("  %-8s %-8s %16s %12s %16s %14s %14s" % (
        "mode", "status", "http mean ms", "CPU ms/req", "memcached p50 ms",
        "iperf3 Mbit/s", "memcached KB/s"))
    for s in summary:
        C.say("  %-8s %-8s %16s %12s %16s %14s %14s" % (
            s["mode"], s["status"][:8], C.fmt(s["http_mean_ms"]),
            C.fmt(s["http_cpu_ms_per_req"]), C.fmt(s["mc_p50_ms"], 2),
            C.fmt(s["iperf_mbps"]), C.fmt(s["mc_tput_kbs"])))
    return {"name": "polling", "rows": rows, "summary": summary,
            "modes": modes, "params": p, "runs": ctx.runs}
