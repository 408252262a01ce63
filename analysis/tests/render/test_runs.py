# SPDX-License-Identifier: GPL-2.0-only
"""render.runs: the headline jtr run prints."""
from jtrpy.render.runs import headline


def test_headline_partial_and_numbers():
    res = {"format": "jtr-result/1", "partial": True, "runs": [{
        "cpu": 3, "duration_ns": 2_000_000_000, "lost_time_pct": 1.5, "max_ns": 68900,
        "percentiles_ns": {"99.99": 291},
        "outliers": {"count": 10, "threshold_ns": 1000, "per_s": 5.0}}]}
    lines = headline(res)
    assert lines[0] == ("CPU 3: 10 interruptions above 1.0 us in 2.00 s (5.0/s), 1.500 % of "
                        "the time lost; per loop p99.99 291 ns, max 68.9 us")
    assert any(line.startswith("partial:") for line in lines)
