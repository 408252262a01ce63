# SPDX-License-Identifier: GPL-2.0-only
"""render.suite: jtr suite's lines from what drivers/suite.py hands over."""
from jtrpy.drivers.suite import Outcome
from jtrpy.render import suite as show

FIGURES = {"percentiles_ns": {"99.99": 1500}, "max_ns": 68900, "partial": False}


def rec(status, **kw):
    r = {"k": 2, "total": 4, "name": "gap", "status": status,
         "command": ["jtr", "gap", "-d", "10s", "-q", "-o", "/s/gap"]}
    r.update(kw)
    return r


def test_the_plan():
    assert show.plan_lines("/s", ["null"], []) == ["suite: /s: 1 item (null)"]
    assert show.plan_lines("/s", ["null", "gap"], [{"name": "send-udp", "why": "not built"}]) \
        == ["suite: /s: 2 items (null, gap)", "suite: send: skipped: not built"]


def test_an_item_as_it_starts_and_as_it_ends():
    assert show.item_line(rec("running")) == "suite: 2/4 gap: jtr gap -d 10s -q -o /s/gap"
    assert show.item_line(rec("done", seconds=10.04, figures=FIGURES, kept=True)) == \
        "suite: 2/4 gap: done in 10.0 s: p99.99 1.5 us, max 68.9 us"
    assert show.item_line(rec("interrupted", seconds=3.25, figures=FIGURES, kept=True)) == \
        "suite: 2/4 gap: interrupted after 3.2 s; kept what it measured (p99.99 1.5 us, " \
        "max 68.9 us)"
    assert show.item_line(rec("interrupted", seconds=0.5, figures=None, kept=False)) == \
        "suite: 2/4 gap: interrupted after 0.5 s"
    assert show.item_line(rec("failed", seconds=0.1, figures=None, kept=False, exit_status=1,
                              last="jtr gap: failed: no such clock")) == \
        "suite: 2/4 gap: failed (exit 1): jtr gap: failed: no such clock"
    assert show.item_line(rec("failed", seconds=0, figures=None, kept=False, exit_status=None,
                              last="")) == "suite: 2/4 gap: failed (did not start): "


def test_an_items_headline():
    assert show.headline(None) is None
    assert show.headline(dict(FIGURES, percentiles_ns={})) == ""
    assert show.headline(FIGURES) == "p99.99 1.5 us, max 68.9 us"


def test_the_end():
    assert show.end_line(Outcome("/s", 4, 2, 1, False, 1)) == \
        "suite: /s: 2 of 4 items done, 1 failed; 'jtr report /s' draws them"
    assert show.end_line(Outcome("/s", 2, 0, 0, True, 130)) == \
        "suite: /s: 0 of 2 items done, interrupted (partial); 'jtr report /s' draws them"
