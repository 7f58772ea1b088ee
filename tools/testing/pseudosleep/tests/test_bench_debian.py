# SPDX-License-Identifier: GPL-2.0
"""bench --only debian's report without a guest (benchlib/debian.py), and
the agent's protocol that debian_guest.py shares with it: synthetic rows
in, the section and results/README.md's generated block out."""

import json
import os
import socket

import debian_guest
from benchlib import debian

ORDER = 0


def rows():
    out = []
    for run in range(2):
        for client in debian.CLIENTS:
            for i in range(4):
                out.append({"mode": "awake", "client": client, "run": run,
                            "i": i, "ms": 10.0 + i, "lost": 0,
                            "naps_since_last": 0})
                met = 1 if i else 0
                r = {"mode": "napping", "client": client, "run": run,
                     "i": i, "ms": 20.0 + i, "lost": 0,
                     "naps_since_last": met}
                if met:
                    r.update(entry_ms=3.0, exit_ms=1.0, wake_latency_ms=0.5,
                             sync_ms=2.0, thaw_ms=0.25 * i)
                out.append(r)
    return out


def test_bench_debian_summary_and_section():
    """Medians by mode and client, naps met counted, the section's
    comparison row says +N % of the met-a-nap median over awake."""
    rs = rows()
    spans = [{"mode": m, "client": c, "run": 0, "seconds": 10.0,
              "asleep_pct": 0.0 if m == "awake" else 80.0}
             for m in debian.MODES for c in debian.CLIENTS]
    sm = debian.summarize(rs, spans, 2)
    aw = debian._row(sm, "awake", "apache")
    met = debian._row(sm, "napping, met a nap", "apache")
    assert (aw["requests"], aw["met_nap"], aw["ms_median"]) == (8, 0, 11.5)
    assert (met["requests"], met["ms_median"]) == (6, 22.0)
    assert met["entry_ms"] == 3.0 and met["asleep_pct"] == 80.0
    text = debian.section_md({"summary": sm, "rows": rs, "runs": 2,
                              "requests": 4, "cond": {}, "boot_s": 1.0})
    assert "| Apache GET | 11.5 ms" in text
    assert "| +91 % |" in text
    assert "sync 2.00, freeze -" in text and "thaw 0.50 |" in text
    assert "3.00 / 1.00 ms" in text
    assert "| apache 0/8 / memcached 0/8 | apache 0/8 / memcached 0/8 |" \
        in text


class Ctx:
    def __init__(self, out):
        self.out = out

    def path(self, name):
        return os.path.join(self.out, name)


def test_bench_debian_report_only(tmp_path):
    """--report-only writes the CSVs, the plot (with matplotlib) and the
    sections again from debian.json alone."""
    (tmp_path / "debian").mkdir()
    (tmp_path / "README.md").write_text("# r\n")
    spans = [{"mode": m, "client": c, "run": 0, "seconds": 10.0,
              "asleep_pct": 50.0} for m in debian.MODES
             for c in debian.CLIENTS]
    (tmp_path / "debian" / "debian.json").write_text(json.dumps({
        "name": "debian", "rows": rows(), "spans": spans, "runs": 2,
        "requests": 4, "cond": {"commit": "abc1234"}, "notes": ["n"]}))
    debian.report_only(Ctx(str(tmp_path)))
    for f in ("debian.csv", "debian_summary.csv", "debian_asleep.csv",
              "README.md"):
        assert (tmp_path / "debian" / f).exists(), f
    assert "at commit abc1234" in (tmp_path / "README.md").read_text()


def test_bench_debian_readme_block(tmp_path):
    """The generated section replaces the one between the markers, and
    goes before "## Reliability" the first time."""
    p = tmp_path / "README.md"
    p.write_text("# r\n\n## Results\n\nold\n\n## Reliability\n\nx\n")
    assert debian.update_readme(str(p), "## 8. one\n")
    assert debian.update_readme(str(p), "## 8. two\n")
    text = p.read_text()
    assert debian.update_readme(str(p), "## 8. two\n")
    assert p.read_text() == text
    assert debian.END + "\n\n## Reliability" in text
    assert text.count(debian.BEGIN) == 1 and "one" not in text
    assert text.index("## 8. two") < text.index("## Reliability")
    assert "old\n" in text and text.endswith("x\n")


def test_debian_agent_protocol():
    """recv_all reads to the peer's shutdown; split_status takes the
    agent's status line off an answer."""
    a, b = socket.socketpair()
    with a, b:
        a.sendall(b"out\n" + debian_guest.agent.status(3))
        a.shutdown(socket.SHUT_WR)
        got = debian_guest.recv_all(b).decode()
    assert debian_guest.agent.split_status(got) == (3, "out\n")
    assert debian_guest.agent.split_status("no status") is None


def test_bench_debian_devices_and_health_sections():
    """The per-device table lists the costliest devices first and counts
    those with callbacks; the health-check table gives the median and
    range of the windows per mode and the requests lost."""
    devs = [{"policy": "default", "device": "d%d" % i, "driver": "pci",
             "suspend_ms": float(i), "resume_ms": 1.0,
             "callbacks_per_nap": 0.0 if i == 0 else 6.0, "naps": 4}
            for i in range(3)]
    health = [{"mode": m, "run": r, "seconds": 30.0,
               "asleep_pct": (0.0 if m == "awake" else 96.0 + r),
               "naps": 0, "naps_per_min": 0.0, "checks": 15,
               "check_ms_median": 1.0, "check_ms_max": 2, "down": 0,
               "after_ms": 10.0 + r, "after_lost": r == 1 and m == "awake"}
              for m in debian.MODES for r in range(3)]
    text = "\n".join(debian.devices_md({"devices": devs, "traced_naps": 4})
                     + debian.health_md({"health": health}))
    assert "3 devices were traced, 2 of them had suspend or resume" in text
    assert "All devices together: 6.00 ms per nap" in text
    assert text.index("| d2 |") < text.index("| d1 |") < text.index("| d0 |")
    assert "| share of time asleep, % | 0.0 [0.0..0.0] | " \
        "97.0 [96.0..98.0] |" in text
    assert "| requests lost | 1/3 | 0/3 |" in text
    assert debian.devices_md({}) == [] and debian.health_md({}) == []
