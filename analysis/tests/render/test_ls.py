# SPDX-License-Identifier: GPL-2.0-only
"""render.ls: jtr ls's table from a jtr-ls/1 document: a line per result, its
validity and partial run marked, the other quantities its tool holds, the
counts on the last line."""
from jtrpy.render.ls import _dur, format_table, valid

ROW = {"started_at": "2026-01-02T03:04:05Z", "tool": "gap", "partial": False, "cpus": [1, 2],
       "quantity": "gap", "quantities": ["gap"], "duration_ns": 30 * 10**9,
       "percentiles_ns": {"99": 61, "99.99": 9500}, "max_ns": 15_400, "lost_pct": 0.25,
       "top_cause": {"category": "timer tick", "name": "local timer", "share": 0.6},
       "tuning_profile": None, "path": "r/a"}


def doc(*items, skipped=(), damaged=(), without=()):
    return {"format": "jtr-ls/1", "results": list(items), "skipped": list(skipped),
            "damaged": list(damaged), "without_quantity": list(without)}


def test_a_line_per_result_and_the_counts():
    ping = dict(ROW, tool="ping", partial=True, quantity="rtt_from_intended",
                quantities=["rtt_from_intended", "send_call"], lost_pct=None,
                excess_ns_per_s=2000, top_cause=None, path="r/b",
                validity={"reasons": [{"scope": "measurement"}]})
    lines = format_table(doc(ROW, ping, skipped=["r/x", "r/y"], damaged=[{"path": "r/z"}]))
    assert lines[0].split()[:3] == ["started", "(UTC)", "tool"]
    assert lines[1].split() == ["2026-01-02", "03:04:05", "gap", "1-2", "gap", "30.0", "s",
                                "61", "ns", "9.5", "us", "15.4", "us", "0.250", "%", "local",
                                "timer", "60", "%", "-", "r/a"]
    assert "ping (partial) (invalid)" in lines[2] and "2.0 us/s" in lines[2]
    assert lines[3] == ("ping results also hold send_call: --quantity NAME lists one of "
                        "them")
    assert lines[4] == ("2 results; 2 folders skipped (no jtr result in them); 1 damaged "
                        "result skipped (see the warning above)")


def test_on_a_quantity():
    lines = format_table(doc(dict(ROW, quantities=["gap", "other"]), without=["r/c"]), "gap")
    assert lines[-1] == "1 result; 1 without gap left out"
    assert format_table(doc()) == ["0 results"]


def test_durations_and_validity():
    assert [_dur(ns) for ns in (0, None, 5 * 10**8, 600 * 10**9, 9000 * 10**9)] == [
        "-", "-", "0.5 s", "10.0 m", "2.5 h"]
    assert valid({}) and valid({"validity": {"reasons": [{"scope": "run"}]}})
    assert not valid({"validity": {"reasons": [{"scope": "measurement"}]}})
