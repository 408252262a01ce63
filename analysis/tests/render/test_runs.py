# SPDX-License-Identifier: GPL-2.0-only
"""render.runs: the headline jtr run prints, and what follows it."""
from jtrpy.render.runs import end_lines, headline

RESULT = {"format": "jtr-result/1", "partial": True, "runs": [{
    "cpu": 3, "duration_ns": 2_000_000_000, "lost_time_pct": 1.5, "max_ns": 68900,
    "percentiles_ns": {"99.99": 291},
    "outliers": {"count": 10, "threshold_ns": 1000, "per_s": 5.0}}]}


def test_headline_partial_and_numbers():
    lines = headline(RESULT)
    assert lines[0] == ("CPU 3: 10 interruptions above 1.0 us in 2.00 s (5.0/s), 1.500 % of "
                        "the time lost; per loop p99.99 291 ns, max 68.9 us")
    assert any(line.startswith("partial:") for line in lines)


def test_the_end_is_the_headline_then_the_attribution():
    assert end_lines(RESULT, ["causes:", "  irq"], None, cross_check=True) == \
        [""] + headline(RESULT) + ["", "causes:", "  irq"]


def test_without_an_attribution_it_says_why_and_what_was_not_compared():
    why = "tracing was switched off (--no-trace)"
    assert end_lines(RESULT, None, why) == [""] + headline(RESULT) + [
        "causes: not attributed: " + why]
    assert end_lines(RESULT, None, why, cross_check=True)[-2:] == [
        "causes: not attributed: " + why,
        "cross-check: not run: there is no attribution to compare"]
