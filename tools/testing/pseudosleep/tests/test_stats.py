# SPDX-License-Identifier: GPL-2.0
"""stats.py, the harness's one percentile, median and summary, against
Python's statistics module (no guest)."""

import random
import statistics

import stats

ORDER = 0


def test_pct_matches_statistics_inclusive_quantiles():
    """pct() at every whole percentile equals statistics.quantiles(
    method="inclusive") for samples of 2 to 40 values"""
    rng = random.Random(29)
    for n in range(2, 41):
        xs = [rng.uniform(0, 100) for _ in range(n)]
        q = statistics.quantiles(xs, n=100, method="inclusive")
        for p in range(1, 100):
            assert abs(stats.pct(xs, p) - q[p - 1]) < 1e-9, (n, p)
        assert stats.pct(xs, 0) == min(xs) and stats.pct(xs, 100) == max(xs)


def test_median_is_statistics_median():
    """median() equals statistics.median, odd and even samples, in any
    order"""
    for xs in ([3.0], [2.0, 1.0], [5, 1, 4, 2], [9, 1, 8, 2, 7]):
        assert stats.median(xs) == statistics.median(xs)


def test_none_and_empty():
    """None values are left out; no value gives None, and a summary of n 0"""
    assert stats.pct([None, 4.0, None, 2.0], 50) == 3.0
    assert stats.pct([], 50) is None and stats.median([None]) is None
    s = stats.summary([])
    assert s["n"] == 0 and s["median"] is None and s["max"] is None


def test_summary():
    """summary() of 1..101: median 51, p10 11, p90 91, p99 100, mean 51"""
    s = stats.summary(list(range(1, 102)))
    assert (s["n"], s["median"], s["p10"], s["p90"], s["p99"], s["min"],
            s["max"], s["mean"]) == (101, 51, 11, 91, 100, 1, 101, 51)
