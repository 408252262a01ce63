# SPDX-License-Identifier: GPL-2.0-only
"""The comparison page's pieces: the CCDF's points, the tick steps and labels, the
host table and the verdict box, on numbers built here."""
import pytest

from jtrpy.render import compare_page, compare_plots
from jtrpy.stats import compare as C

from ..synthetic import loops, make_result, make_run


def test_ccdf_points_run_from_all_to_one_sample_at_the_max():
    buckets = [[20, 20, 90], [30, 30, 9], [1000, 1007, 1]]
    pts = compare_plots.ccdf_points(buckets, 20, 1003)
    assert pts[0] == (20, 1.0)
    # above 20 ns: 10 of 100; above 30 ns: 1 of 100; the last sample at the max
    assert pts[1:] == [(20, 0.1), (30, 0.01), (1003, 0.01)]
    assert all(y > 0 for _, y in pts)
    assert compare_plots.ccdf_points([], 0, 0) == []


@pytest.mark.parametrize("y,label", [(1, "all"), (0.1, "p90"), (0.01, "p99"),
                                     (0.001, "p99.9"), (1e-6, "p99.9999")])
def test_fraction_labels_are_percentiles(y, label):
    assert compare_plots._fraction_label(y) == label


def test_tick_steps_and_rates():
    assert [compare_plots.nice_step(x) for x in (0.7, 1, 1.5, 3, 256, 7000)] == \
        [1, 1, 2, 5, 500, 10000]
    assert compare_plots.per_s(1_780_000) == "1.78 ms/s" and compare_plots.per_s(0) == "0/s"
    assert compare_plots.signed_per_s(-39_084) == "-39.1 us/s"


class R(dict):
    folder = "x"


def test_host_table_marks_what_differs_first():
    a = R(host={"hostname": "vm", "kernel": "6.1", "rt_throttling": {"enabled": True}})
    b = R(host={"hostname": "vm", "kernel": "6.18", "rt_throttling": {"enabled": True}})
    html = compare_page.host_section([a, b])
    assert "1 of 3 host facts differ" in html
    rows = html.split("<tr")
    assert 'class="differs"><td>kernel</td><td>6.1</td><td>6.18</td>' in rows[2]
    assert "<td>rt_throttling.enabled</td><td>yes</td><td>yes</td>" in html


def test_verdict_box_names_the_minimum_and_the_suggestion():
    a = make_result(make_run(loops(1, n=200_000)))
    b = make_result(make_run(loops(2, n=200_000, tail=1.5)))
    c = C.compare([a], [b], resamples=100)
    html = compare_page.verdict_section(c, ["before", "after"])
    assert html.index("Verdict: %s" % c["verdict"]) < html.index("B (after) against A (before)")
    assert "at least 100 ns and 10 % of A" in html
    assert c["suggestions"][0] in html
    # the verdict's own line is not repeated whole, its parts are listed
    assert c["verdict_text"] not in html
