# SPDX-License-Identifier: GPL-2.0
"""The harness's one way to summarise measurements: percentiles with
linear interpolation between the two nearest ranks (numpy's default, and
what statistics.quantiles(method="inclusive") gives), the median as the
50th percentile, and a summary of a sample.  Values of None are left out
(a request that got no answer has no time)."""

import math


def pct(xs, p):
    """p-th percentile (0..100) of xs; None when xs has no value."""
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    k = (len(xs) - 1) * p / 100.0
    lo = int(math.floor(k))
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def median(xs):
    """The 50th percentile: the mean of the two middle values of an even
    sample."""
    return pct(xs, 50)


def summary(xs):
    """n, median, p10, p90, p99, min, max and mean of xs (None each when
    there is no value)."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"n": 0, "median": None, "p10": None, "p90": None,
                "p99": None, "min": None, "max": None, "mean": None}
    return {"n": len(xs), "median": pct(xs, 50), "p10": pct(xs, 10),
            "p90": pct(xs, 90), "p99": pct(xs, 99), "min": min(xs),
            "max": max(xs), "mean": sum(xs) / len(xs)}
