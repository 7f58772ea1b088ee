# SPDX-License-Identifier: GPL-2.0
"""KTAP (and TAP 13) results: the one parser of the test suite.

Used for the KUnit suites on the guest console, the kselftests' output and
napd's unit tests (make -C tools/power/napd check).  Tolerant by design:
a console interleaves kernel messages with KUnit's lines, so a line that is
not KTAP is ignored; a line that starts like a result but is not one
("ok", "not ok x") is kept in Report.malformed and is no result.

    report = ktap.parse(lines)
    for r in report.results:          # every result, any depth, in order
        print(r.suite, r.name, r.status, r.reason)

A result's status is "skipped" when its directive is SKIP (on "ok" or
"not ok"), otherwise "passed" for "ok" and "failed" for "not ok"; other
directives (TODO, XFAIL) are kept in r.directive and do not change it.
Nesting is by indentation, 4 spaces a level (any indentation below 4 is
level 1).  A nested block's results belong to the next result one level
up (r.children) and to the "# Subtest: NAME" header above them (r.suite),
which is known even when the parent's own line never came (the guest
died).  r.diag are the lines other than KTAP's own printed since the
previous result (after the last "#  RUN" line, if any), stripped of their
indentation: what a failed EXPECT or CHECK said, "#" diagnostics and the
lines they continue on.

The kernel's tools/testing/kunit/kunit_parser.py is not used: it wants a
kernel tree (BUILD_DIR's, which is absent before the first build and
rewritten by it), parses one KUnit run rather than a console with
kselftests' and napd's TAP 13, and reports its own parse errors instead
of each case.
"""

import re

RESULT = re.compile(r"^(?P<ok>ok|not ok)[ \t]+(?P<num>\d+)"
                    r"(?:[ \t]+(?:-[ \t]+)?(?P<name>[^#]*?))?[ \t]*"
                    r"(?:#[ \t]*(?P<directive>.*?))?[ \t]*$")
LOOKS_LIKE_RESULT = re.compile(r"^(ok|not ok)(\s|$)")
SUBTEST = re.compile(r"^#[ \t]*Subtest:[ \t]*(\S+)")
RUN = re.compile(r"^#\s+RUN\s")
PLAN = re.compile(r"^(\d+)\.\.(\d+)")
VERSION = re.compile(r"^(KTAP|TAP) version \d+")


class Result:
    """One "ok"/"not ok" line."""

    def __init__(self, ok, number, name, directive, depth, lineno, suite,
                 diag):
        self.ok, self.number, self.name = ok, number, name
        self.directive, self.depth, self.lineno = directive, depth, lineno
        self.suite = suite          # the "# Subtest:" header above, or None
        self.diag = diag            # the lines printed before it
        self.children = []          # the nested results it closes

    @property
    def status(self):
        if re.match(r"skip\b", self.directive, re.I):
            return "skipped"
        return "passed" if self.ok else "failed"

    @property
    def reason(self):
        """The directive's text after SKIP (or the whole directive)."""
        return re.sub(r"^skip\b[ \t:]*", "", self.directive,
                      flags=re.I).strip()

    def __repr__(self):
        return "Result(%r, %s, depth=%d, suite=%r)" % (
            self.name, self.status, self.depth, self.suite)


class Report:
    def __init__(self):
        self.results = []     # every Result, in output order
        self.top = []         # results at depth 0
        self.malformed = []   # (line number, line) that looked like results
        self.plans = []       # (depth, count) from "1..N"


def _depth(indent):
    width = len(indent.expandtabs(4))
    return (width + 3) // 4


def parse(lines):
    """Parse an iterable of lines (str, without or with newlines)."""
    rep = Report()
    pending = {}      # depth -> results not yet claimed by a parent
    headers = {}      # depth -> "# Subtest:" name of the open block
    diag = []
    for lineno, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        body = line.lstrip(" \t")
        depth = _depth(line[:len(line) - len(body)])
        if body.startswith("#"):
            m = SUBTEST.match(body)
            if m:
                headers[depth] = m.group(1)
                diag = []
            elif RUN.match(body):
                diag = []
            else:
                diag.append(body)
            continue
        if VERSION.match(body):
            diag = []
            continue
        m = PLAN.match(body)
        if m:
            rep.plans.append((depth, int(m.group(2))))
            continue
        if not LOOKS_LIKE_RESULT.match(body):
            if body:
                diag.append(body)
            continue
        m = RESULT.match(body)
        if not m:
            rep.malformed.append((lineno, line))
            continue
        r = Result(m.group("ok") == "ok", int(m.group("num")),
                   (m.group("name") or "").strip(),
                   (m.group("directive") or "").strip(), depth, lineno,
                   headers.get(depth), diag)
        diag = []
        # This result closes the blocks nested under it.
        for d in sorted(k for k in pending if k > depth):
            r.children.extend(pending.pop(d))
        for d in [k for k in headers if k > depth]:
            del headers[d]
        pending.setdefault(depth, []).append(r)
        rep.results.append(r)
        if depth == 0:
            rep.top.append(r)
    return rep
