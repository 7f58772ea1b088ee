# SPDX-License-Identifier: GPL-2.0
"""The submitted series (make patchset) is what make builds: the map's
checks on made-up input, `make check-series-quick` on the real series
(git am on pristine, the tree compared with patches/series + overlay,
checkpatch --strict against patches/patchset/checkpatch-known, kernel-doc
-Wall and sparse with 0 findings in our new kernel files), and the
comparison catching a series whose new file differs.  No kernel build
(sparse checks our few objects in make kernel's build), no guest: about a
minute each on 2 cores."""

import os
import shutil
import subprocess

import pytest

import patchset as ps
import pslib

ORDER = 0
T = os.path.join(pslib.TOP, "tools", "testing", "pseudosleep")
PATCHSET = os.path.join(pslib.BUILD, "patchset")
TREES = ["kernel", "drivers", "arch", "net", "include", "Documentation",
         "tools"]


def write_map(tmp_path, text):
    path = tmp_path / "map"
    path.write_text(text)
    return str(path)


HOOKS = [("0001-a.patch", "PM: a"), ("0002-b.patch", "PM: b")]
FILES = ["kernel/power/x.c", "tools/power/napd/napd.c",
         "tools/testing/pseudosleep/vm-run"]
GOOD = """series one
patch PM: b
patch PM: a
file kernel/power/x.c
new napd
file tools/power/napd/
outside tools/testing/pseudosleep/ the harness
"""


def errors_of(tmp_path, text, hooks=HOOKS, files=FILES):
    series, outside = ps.parse_map(write_map(tmp_path, text))
    return ps.assign(series, outside, hooks, files), series


def test_map_assigns_every_file(tmp_path):
    """patchset map: a good map puts each file in its patch, in map order"""
    errors, series = errors_of(tmp_path, GOOD)
    assert errors == []
    items = series[0].items
    assert [it.patch for it in items] == ["0002-b.patch", "0001-a.patch",
                                          None]
    assert items[1].files == ["kernel/power/x.c"]
    assert items[2].files == ["tools/power/napd/napd.c"]


@pytest.mark.parametrize("text, hooks, files, expect", [
    (GOOD, HOOKS, FILES + ["kernel/power/y.c"],
     "kernel/power/y.c: in no series of the map"),
    (GOOD.replace("patch PM: a\n", ""), HOOKS, FILES,
     "0001-a.patch ('PM: a') is in no series"),
    (GOOD + "patch PM: c\n", HOOKS, FILES,
     "map:8: no patch in patches/series with the subject 'PM: c'"),
    (GOOD + "patch PM: a\n", HOOKS, FILES, "map:8: 'PM: a' is already"),
    (GOOD + "file kernel/power/z.c\n", HOOKS, FILES,
     "map:8: 'kernel/power/z.c' matches no overlay file"),
    (GOOD + "file kernel/power/\n", HOOKS, FILES,
     "kernel/power/x.c: matched by"),
], ids=["file missing", "hook patch missing", "unknown subject",
        "patch twice", "stale file line", "file in two patches"])
def test_map_errors(tmp_path, text, hooks, files, expect):
    """patchset map: each inconsistency is an error naming its line"""
    errors, _ = errors_of(tmp_path, text, hooks, files)
    assert any(expect in e for e in errors), errors


@pytest.mark.parametrize("text, expect", [
    ("patch PM: a\n", "map:1: 'patch' before any 'series' line"),
    ("series one\nfile x\n", "map:2: 'file' before any"),
    ("series one\nfrobnicate x\n", "map:2: unknown line 'frobnicate'"),
    ("series one\noutside x/\n", "map:2: 'outside x/' needs a reason"),
    ("series One\n", "map:1: series name 'One'"),
], ids=["patch before series", "file before patch", "unknown word",
        "outside without reason", "bad series name"])
def test_map_syntax(tmp_path, text, expect):
    """patchset map: a malformed line is an error naming FILE:LINE"""
    with pytest.raises(ps.MapError) as e:
        ps.parse_map(write_map(tmp_path, text))
    assert expect in str(e.value)


@pytest.mark.seq(1)
def test_series_is_what_make_builds(record_property):
    """patchset: make check-series-quick (git am, same tree, checkpatch,
    kernel-doc, sparse)"""
    p = subprocess.run(["make", "-s", "-C", pslib.TOP, "check-series-quick",
                        "BUILD_DIR=" + pslib.BUILD], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    out = p.stdout.decode(errors="replace")
    if p.returncode:
        pytest.fail("make check-series-quick exit %d:\n%s"
                    % (p.returncode, out[-3000:]), pytrace=False)
    lines = [line.strip() for line in out.splitlines()
             if line.strip().startswith(("GIT AM", "SAME", "CHECKPATCH",
                                         "KERNEL-DOC", "SPARSE"))]
    assert len(lines) == 5, out
    record_property("detail", "; ".join(lines))


def tamper(src, dst):
    """Copy the series to dst with one line of one new file changed; that
    file's name."""
    shutil.copytree(src, dst)
    with open(os.path.join(dst, "series")) as f:
        patches = [x.strip() for x in f if x.strip() and x[0] != "#"]
    for p in patches:
        path = os.path.join(dst, p)
        with open(path) as f:
            lines = f.readlines()
        for i, line in enumerate(lines):
            if line.startswith("new file mode") and \
                    lines[i - 1].startswith("diff --git a/"):
                name = lines[i - 1].split()[2][2:]
                j = next(k for k in range(i, len(lines))
                         if lines[k].startswith("@@"))
                lines[j + 1] = lines[j + 1].rstrip("\n") + " \n"
                with open(path, "w") as f:
                    f.writelines(lines)
                return name
    pytest.fail("no new file in the series at %s" % src, pytrace=False)


@pytest.mark.seq(2)
def test_check_finds_a_changed_file(tmp_path):
    """patchset: check-patchset names a file the series has otherwise"""
    if not os.path.isfile(os.path.join(PATCHSET, "series")):
        pytest.fail("%s/series missing: the test before writes it"
                    % PATCHSET, pytrace=False)
    out = str(tmp_path / "patchset")
    name = tamper(PATCHSET, out)
    p = subprocess.run([os.path.join(T, "check-patchset"), pslib.TOP,
                        os.path.join(pslib.BUILD, "linux"), out] + TREES,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = p.stdout.decode(errors="replace")
    assert p.returncode == 1, text
    assert "%s: differs between the series and the tree make builds" \
        % name in text, text


MAINT_HEAD = "Intro\n\nMaintainers List\n----------------\n\n"


def maint_entry(name, f):
    return "%s\nM:\tSomeone <a@b.c>\nS:\tMaintained\nF:\t%s\n\n" % (name, f)


def test_maintainers_entries(tmp_path):
    """Our MAINTAINERS entries go in their sorted place even past a
    misordered entry (as 6.12's LPC32XX one), with only the F: lines of
    files that exist; again changes nothing; a gone file's line goes."""
    import maintainers
    (tmp_path / "MAINTAINERS").write_text(
        MAINT_HEAD + maint_entry("ARM/LPC32XX SOC SUPPORT", "arch/lpc/") +
        maint_entry("LPC32XX DMAMUX SUPPORT", "drivers/dma/lpc.c") +
        maint_entry("CPUIDLE DRIVER - ARM", "drivers/cpuidle/arm.c") +
        maint_entry("CPUIDLE DRIVER - RISC-V SBI", "drivers/cpuidle/sbi.c") +
        maint_entry("ZZZ", "zzz"))
    (tmp_path / "drivers" / "cpuidle").mkdir(parents=True)
    (tmp_path / "drivers" / "cpuidle" / "cpuidle-pollist.c").write_text("")
    ours = [("CPUIDLE DRIVER - POLLIST", ["M:\tUs <u@s>", "S:\tMaintained",
                                          "F:\tDocumentation/pollist.rst",
                                          "F:\tdrivers/cpuidle/cpuidle-pollist*"])]
    assert maintainers.update(str(tmp_path), ours)
    text = (tmp_path / "MAINTAINERS").read_text()
    names = [ln for ln in text.split("\n") if ln.isupper() or
             ln.startswith(("CPUIDLE", "ARM", "LPC", "ZZZ"))]
    assert names.index("CPUIDLE DRIVER - POLLIST") == \
        names.index("CPUIDLE DRIVER - ARM") + 1
    assert "F:\tDocumentation/pollist.rst" not in text
    assert not maintainers.update(str(tmp_path), ours)
    os.remove(tmp_path / "drivers" / "cpuidle" / "cpuidle-pollist.c")
    assert maintainers.update(str(tmp_path), ours)
    assert "POLLIST" not in (tmp_path / "MAINTAINERS").read_text()
