# SPDX-License-Identifier: GPL-2.0
"""The cases that the guest suites and napd's unit tests report, read from
their sources, so that pytest has one item per case before anything runs.

KUnit: the KUNIT_CASE*() entries of every kunit_suite in our kernel files;
kselftests: the TEST*() of each program, named as the kselftest harness
names them (fixture[.variant].test, "global" for TEST()); napd: the name
column of test_napd.c's tests[] table.  The kernel files and kselftests are
read from BUILD_DIR's kernel tree when it has them (what was built and
boots), else from ours.  A case the sources do not list but the run
reports fails the suite's "every case is collected" item, so nothing that
runs goes unreported.
"""

import os
import re

import pslib

SELFTESTS = os.path.join("tools", "testing", "selftests")


def _source(rel):
    """BUILD_DIR's copy of our file rel, if it has one, else ours."""
    built = os.path.join(pslib.BUILD, "linux", rel)
    return built if os.path.exists(built) else os.path.join(pslib.TOP, rel)


def _read(path):
    with open(path, errors="replace") as f:
        # Comments out: a TEST() in a comment is no test.
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
        return re.sub(r"//[^\n]*", "", text)


def kunit_cases():
    """[(suite, case)] of the KUnit suites in our kernel/ and drivers/."""
    out = []
    for top in ("kernel", "drivers"):
        for d, _, files in sorted(os.walk(os.path.join(pslib.TOP, top))):
            for f in sorted(files):
                if not f.endswith(".c"):
                    continue
                rel = os.path.relpath(os.path.join(d, f), pslib.TOP)
                text = _read(_source(rel))
                if "struct kunit_suite" not in text:
                    continue
                arrays = {}
                for m in re.finditer(r"struct kunit_case\s+(\w+)\s*\[\s*\]"
                                     r"\s*=\s*\{(.*?)\n\s*\}\s*;", text,
                                     re.S):
                    arrays[m.group(1)] = re.findall(
                        r"KUNIT_CASE\w*\(\s*(\w+)", m.group(2))
                for m in re.finditer(r"struct kunit_suite\s+\w+\s*=\s*"
                                     r"\{(.*?)\}\s*;", text, re.S):
                    name = re.search(r"\.name\s*=\s*\"([^\"]+)\"",
                                     m.group(1))
                    cases = re.search(r"\.test_cases\s*=\s*(\w+)",
                                      m.group(1))
                    if name and cases:
                        out += [(name.group(1), c)
                                for c in arrays.get(cases.group(1), [])]
    return out


def kselftest_cases(program):
    """The case names kselftest program (abi_test, ...) reports, in
    source order."""
    src = None
    base = os.path.join(pslib.TOP, SELFTESTS)
    for d in sorted(os.listdir(base)):
        if os.path.exists(os.path.join(base, d, program + ".c")):
            src = _source(os.path.join(SELFTESTS, d, program + ".c"))
            break
    if not src:
        return []
    text = _read(src)
    variants = {}
    for m in re.finditer(r"^\s*FIXTURE_VARIANT_ADD\(\s*(\w+)\s*,\s*(\w+)",
                         text, re.M):
        variants.setdefault(m.group(1), []).append(m.group(2))
    out = []
    for m in re.finditer(r"^\s*(TEST|TEST_SIGNAL|TEST_F|TEST_F_SIGNAL|"
                         r"TEST_F_TIMEOUT)\(\s*(\w+)(?:\s*,\s*(\w+))?",
                         text, re.M):
        if m.group(1).startswith("TEST_F"):
            fixture, test = m.group(2), m.group(3)
        else:
            fixture, test = "global", m.group(2)
        for v in variants.get(fixture, [""]):
            out.append("%s%s.%s" % (fixture, "." + v if v else "", test))
    return out


def napd_unit_cases():
    """The names in tools/power/napd/tests/test_napd.c's tests[] table."""
    path = os.path.join(pslib.TOP, "tools", "power", "napd", "tests",
                        "test_napd.c")
    text = _read(path)
    table = re.search(r"\}\s*tests\s*\[\s*\]\s*=\s*\{(.*?)\n\}\s*;", text,
                      re.S)
    if not table:
        return []
    return re.findall(r"\{\s*\"([^\"]+)\"\s*,", table.group(1))
