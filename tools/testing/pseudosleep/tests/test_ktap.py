# SPDX-License-Identifier: GPL-2.0
"""Unit tests of ktap.py, the parser of KUnit's, the kselftests' and napd's
results."""

import ktap

ORDER = 0

# KUnit at boot, as on the console after the timestamps are cut: two
# suites, nested cases, one parameterised, one failed with its EXPECT.
KUNIT = """\
KTAP version 1
1..2
    KTAP version 1
    # Subtest: pseudosleep
    # module: pseudosleep
    1..3
    ok 1 parse_irqs_good
pseudosleep: an unrelated kernel message
    # parse_bool: EXPECTATION FAILED at kernel/power/pseudosleep_test.c:42
    Expected ret == 0, but ret == -22
    not ok 2 parse_bool
    ok 3 no_state_of_its_own # SKIP needs CONFIG_FOO
# pseudosleep: pass:1 fail:1 skip:1 total:3
not ok 1 pseudosleep
    KTAP version 1
    # Subtest: cpuidle_pollist
    1..1
        KTAP version 1
        # Subtest: pollist_test_spread
        ok 1 two cpus
        not ok 2 four cpus
    not ok 1 pollist_test_spread
ok 2 cpuidle_pollist
"""

# The kselftest harness's TAP 13, with the logs of each case.
KSELFTEST = """\
TAP version 13
1..3
# Starting 3 tests from 2 test cases.
#  RUN           global.stats_files_exist ...
#            OK  global.stats_files_exist
ok 1 global.stats_files_exist
#  RUN           nap.armed_rtc_alarm_ends_nap ...
# nap_test.c:230:armed_rtc_alarm_ends_nap:Expected 0 (0) == ret (-1)
# armed_rtc_alarm_ends_nap: Test terminated by assertion
#          FAIL  nap.armed_rtc_alarm_ends_nap
not ok 2 nap.armed_rtc_alarm_ends_nap
#  RUN           nap.no_crng_reseed ...
#      SKIP      no RNG
ok 3 nap.no_crng_reseed # SKIP no RNG
# FAILED: 1 / 3 tests passed.
# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0
"""


def by_name(rep):
    return {r.name: r for r in rep.results}


def test_nested_kunit_cases_and_suites():
    rep = ktap.parse(KUNIT.splitlines())
    cases = [(r.suite, r.name, r.status) for r in rep.results
             if r.depth == 1]
    assert cases == [("pseudosleep", "parse_irqs_good", "passed"),
                     ("pseudosleep", "parse_bool", "failed"),
                     ("pseudosleep", "no_state_of_its_own", "skipped"),
                     ("cpuidle_pollist", "pollist_test_spread", "failed")]
    assert [(r.name, r.status) for r in rep.top] == [
        ("pseudosleep", "failed"), ("cpuidle_pollist", "passed")]
    assert [c.name for c in rep.top[0].children] == [
        "parse_irqs_good", "parse_bool", "no_state_of_its_own"]
    assert (0, 2) in rep.plans and (1, 3) in rep.plans


def test_parameterised_case_has_its_parameters_as_children():
    rep = ktap.parse(KUNIT.splitlines())
    spread = by_name(rep)["pollist_test_spread"]
    assert [(c.name, c.depth, c.status, c.suite) for c in spread.children] \
        == [("two cpus", 2, "passed", "pollist_test_spread"),
            ("four cpus", 2, "failed", "pollist_test_spread")]


def test_failed_case_keeps_its_diagnostics():
    r = by_name(ktap.parse(KUNIT.splitlines()))["parse_bool"]
    assert r.diag == ["pseudosleep: an unrelated kernel message",
                      "# parse_bool: EXPECTATION FAILED at "
                      "kernel/power/pseudosleep_test.c:42",
                      "Expected ret == 0, but ret == -22"]
    r = by_name(ktap.parse(KSELFTEST.splitlines()))[
        "nap.armed_rtc_alarm_ends_nap"]
    assert r.status == "failed" and r.diag[0].startswith(
        "# nap_test.c:230:") and len(r.diag) == 3


def test_skip_directive():
    r = by_name(ktap.parse(KSELFTEST.splitlines()))["nap.no_crng_reseed"]
    assert (r.status, r.reason, r.directive) == ("skipped", "no RNG",
                                                 "SKIP no RNG")
    # SKIP on "not ok" too, in any case, with or without a reason.
    rep = ktap.parse(["not ok 1 a # SKIP", "ok 2 - b # skip: later",
                      "ok 3 c # TODO not yet", "not ok 4 d # XFAIL x"])
    assert [(r.name, r.status, r.reason) for r in rep.results] == [
        ("a", "skipped", ""), ("b", "skipped", "later"),
        ("c", "passed", "TODO not yet"), ("d", "failed", "XFAIL x")]


def test_tap13_with_dashes_as_napd_prints_it():
    rep = ktap.parse(["TAP version 13", "1..3", "ok 1 - opts_defaults",
                      "# test_napd.c:62: 'READY=1", "STATUS=ok",
                      "' != 'READY=2", "not ok 2 - opts_full",
                      "ok 3 - napd_dry_run # SKIP no napd binary given",
                      "2 passed, 1 failed"])
    assert [(r.number, r.name, r.status) for r in rep.results] == [
        (1, "opts_defaults", "passed"), (2, "opts_full", "failed"),
        (3, "napd_dry_run", "skipped")]
    assert rep.results[1].diag == ["# test_napd.c:62: 'READY=1",
                                   "STATUS=ok", "' != 'READY=2"]
    assert rep.results[2].diag == []


def test_malformed_lines_are_no_results():
    rep = ktap.parse(["ok", "not ok", "ok one two", "not ok -1 x",
                      "okay 1 x", "   ok 1 fine", "the test is ok 2 go",
                      "1..x", "", "ok 2 also fine\r\n"])
    assert [r.name for r in rep.results] == ["fine", "also fine"]
    assert [n for n, _ in rep.malformed] == [1, 2, 3, 4]


def test_result_without_a_description():
    rep = ktap.parse(["ok 1", "not ok 2 # SKIP gone"])
    assert [(r.name, r.status) for r in rep.results] == [
        ("", "passed"), ("", "skipped")]


def test_crashed_suite_keeps_its_cases():
    """The guest died inside a suite: its cases still name their suite,
    though its own result line never came."""
    lines = KUNIT.splitlines()[:8]
    rep = ktap.parse(lines + ["Kernel panic - not syncing: oops"])
    assert [(r.suite, r.name) for r in rep.results] == [
        ("pseudosleep", "parse_irqs_good")]
    assert rep.top == []


def test_diagnostics_are_per_case():
    """A case's diagnostics start after the previous result or after its
    "#  RUN" line, never carry the previous case's."""
    rep = ktap.parse(["# before", "ok 1 a", "# noise", "#  RUN  b ...",
                      "# b said", "not ok 2 b", "not ok 3 c"])
    assert [r.diag for r in rep.results] == [["# before"], ["# b said"],
                                              []]


def test_subtest_header_closed_by_parent():
    """After a suite's result line, a later nested block without a header
    names no suite (no stale header)."""
    rep = ktap.parse(["    # Subtest: s1", "    ok 1 a", "ok 1 s1",
                      "    ok 1 b", "ok 2 s2"])
    assert [(r.suite, r.name) for r in rep.results if r.depth == 1] == [
        ("s1", "a"), (None, "b")]
