# SPDX-License-Identifier: GPL-2.0-only
"""The comparison page's pieces: the host table and the verdict box, on numbers
built here (its plots: test_compare_plots.py)."""

from jtrpy.render import compare_page
from jtrpy.stats import compare as C

from ..synthetic import loops, make_result, make_run


class R(dict):
    folder = "x"


def test_host_table_marks_what_differs_first():
    a = R(host={"hostname": "vm", "kernel": "6.1", "rt_throttling": {"enabled": True}})
    b = R(host={"hostname": "vm", "kernel": "6.18", "rt_throttling": {"enabled": True}})
    html = compare_page.host_section([a, b])
    assert "1 of 3 host facts differ" in html
    rows = html.split("<tr")
    assert 'class="differs"><td>kernel</td><td>6.1</td><td>6.18</td>' in rows[2]
    assert "<td>RT throttling</td><td>yes</td><td>yes</td>" in html


def test_host_facts_in_words_and_calibration_noise_is_the_same():
    """The TSC is calibrated at each start: 0.15 ppm apart is one clock; the
    hypervisor by its name, not CPUID's string."""
    a = R(host={"tsc_hz": 2445405679.6, "hypervisor": "KVMKVMKVM", "tsc_step_ns": 20.0})
    b = R(host={"tsc_hz": 2445406054.027, "hypervisor": "KVMKVMKVM", "tsc_step_ns": 20.4})
    html = compare_page.host_section([a, b])
    assert "The host facts are the same." in html and "KVMKVMKVM" not in html
    assert "<td>hypervisor</td><td>KVM</td><td>KVM</td>" in html
    assert "<td>TSC frequency (the same within 10 ppm)</td><td>2445.406 MHz</td>" in html
    b["host"]["tsc_hz"] = 2445405679.6 * (1 + 20e-6)      # 20 ppm: another clock
    assert "1 of 3 host facts differ" in compare_page.host_section([a, b])


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
