# SPDX-License-Identifier: GPL-2.0-only
"""render.compare: jtr compare's table from a comparison built here: the sides'
lines, the metrics' columns and the change word, the repetitions' columns, the
causes (at most TABLE_CAUSES, signed), the hardware counters, and the lines
that say what decided the verdict. (stats/test_compare.py makes comparisons
and reads their tables.)"""
import copy

from jtrpy.render import compare as R


def metric(name, a, b, change=None, key=True, significant=False, unit="ns", ci=None,
           a_range=None, b_range=None):
    d = b - a
    return {"name": name, "unit": unit, "a": a, "b": b, "diff": d,
            "diff_pct": 100.0 * d / a if a else None, "ci": ci or [d - 10, d + 10],
            "a_range": a_range, "b_range": b_range, "change": change, "key": key,
            "significant": significant}


def side(name, quantity="gap", quantities=("gap",), cpus=(1,), runs=1, results=None):
    return {"results": results or [name], "tools": ["gap"], "cpus": list(cpus),
            "quantity": quantity, "quantities": list(quantities), "runs": runs,
            "duration_ns": 10 * 10**9, "samples": 1234, "attributed": True}


def comparison():
    return {"a": side("before"), "b": side("after", cpus=(1, 2), runs=2),
            "method": {"confidence": 95, "min_effect_ns": 100, "min_effect_pct": 10},
            "metrics": [metric("p99", 1000, 1500, "worse", significant=True),
                        metric("time lost", 0.1, 0.1, unit="%", ci=[-0.01, 0.01]),
                        metric("max", 5000, 5050, key=False, significant=True),
                        metric("mean", 40, 40, key=False)],
            "causes": None, "warnings": ["A ran on a virtualised host"],
            "verdict_text": "worse: p99 rose +500 ns", "hardware_counters": None}


def test_the_table_line_by_line():
    c = comparison()
    c["a"]["attributed"] = False
    lines = R.format_table(c)
    assert lines[:3] == [
        "A: before  (gap, CPU 1, gap: 1 run, 10.00 s, 1234 samples)",
        "B: after  (gap, CPUs 1, 2, gap: 2 runs, 10.00 s, 1234 samples)", ""]
    assert lines[3].split() == ["A", "B", "B-A", "B-A", "%", "95", "%", "CI", "of", "B-A",
                                "change"]
    rows = {ln.split()[0]: ln for ln in lines[4:8]}
    assert rows["p99"].split() == ["p99", "1.0", "us", "1.5", "us", "+500", "ns", "+50.0",
                                   "%", "+490", "ns", "..", "+510", "ns", "worse"]
    assert rows["time"].split()[-1] == "-"         # a key metric that did not change
    assert rows["max"].split()[-1] == "small"      # significant, below the minimum effect
    assert rows["mean"].endswith("-10 ns .. +10 ns")     # not key, not significant: no word
    assert lines[8:] == [
        "", "causes: not compared: A not attributed (jtr run as root, or jtr attribute)",
        "", "warning: A ran on a virtualised host",
        "the verdict comes from the key metrics: p99, time lost; a change counts from 100 ns "
        "and 10 % of A (time lost: 0.010 pt); the max (one sample) and the counts are shown, "
        "not judged",
        "note: one result per side: the CIs cover the sampling noise within a run, not the "
        "variation from run to run",
        "verdict: worse: p99 rose +500 ns"]


def test_repetitions_add_their_ranges_and_drop_the_note():
    c = comparison()
    c["a"]["results"] = ["r1", "r2"]
    c["metrics"][0]["a_range"] = [900, 1100]
    lines = R.format_table(c)
    assert lines[0].startswith("A: r1, r2  (gap, CPU 1, gap: 2 results, 1 run,")
    assert "A runs" in lines[3] and "B runs" in lines[3]
    assert "900 ns .. 1.1 us" in lines[4]
    assert not any(x.startswith("note: one result per side") for x in lines)


def test_other_quantities_and_latency_minimum():
    c = comparison()
    c["a"].update(quantity="rtt_from_intended", quantities=["rtt_from_intended", "send_call"])
    c["b"].update(quantity="rtt_from_intended",
                  quantities=["rtt_from_intended", "rtt_from_send"])
    assert R._others_line(c) == ("the results also hold rtt_from_send, send_call: "
                                 "--quantity NAME compares one of them")
    assert R._others_line(comparison()) is None
    assert R.min_effect_text({"min_effect_ns": 2000, "min_effect_pct": 5},
                             [{"name": "excess latency"}]) == \
        "2.0 us and 5 % of A (excess latency: 2.00 ms/s)"


def test_change_word():
    c = comparison()
    assert [R.change_word(c, m) for m in c["metrics"]] == ["worse", "-", "small", ""]
    c["comparable"] = False
    assert [R.change_word(c, m) for m in c["metrics"]] == ["", "", "", ""]


def test_unpinned_side():
    assert R._side_line("A", dict(side("x"), cpus=[None])).startswith(
        "A: x  (gap, unpinned, gap: 1 run,")


def test_causes_table_at_most_ten_signed():
    c = comparison()
    c["causes"] = [{"category": "hardirq", "name": "irq %d" % i, "a_ns_per_s": 10_000,
                    "b_ns_per_s": 10_000 + d, "diff_ns_per_s": d, "a_share": 0.1,
                    "b_share": 0.125} for i, d in enumerate([3_000_000, -5000, 0] + [1] * 9)]
    lines = R._cause_lines(c)
    assert lines[1] == ("causes (outlier time per second of run; largest change first; one run "
                        "each: no interval, a change may be noise):")
    assert lines[2].split() == ["cause", "A", "per", "s", "B", "per", "s", "B-A", "per", "s",
                                "A", "share", "B", "share"]
    assert lines[3].split() == ["hardirq", "irq", "0", "10.0", "us", "3.01", "ms", "+3.00",
                                "ms", "10.0", "%", "12.5", "%"]
    assert lines[4].split()[3:9] == ["10.0", "us", "5.0", "us", "-5.0", "us"]
    assert lines[5].split()[3:9] == ["10.0", "us", "10.0", "us", "0", "ns"]     # no sign
    assert len(lines) == 3 + R.TABLE_CAUSES + 1 and lines[-1] == "  ... 2 more in --json"


def test_causes_over_several_results_say_their_ranges_and_what_is_noise():
    """Two identical setups differ by themselves (+7.26 ms/s of timer tick once):
    with several results a side each cause has its ranges, and a change within
    them is said to be within the spread."""
    c = comparison()
    c["causes"] = [{"category": "timer tick", "name": "local timer", "a_ns_per_s": 3e6,
                    "b_ns_per_s": 4e6, "diff_ns_per_s": 1e6, "a_share": 0.2, "b_share": 0.3,
                    "a_range": [2e6, 5e6], "b_range": [3.5e6, 4.5e6], "within_spread": True},
                   {"category": "task preemption", "name": "spin", "a_ns_per_s": 0,
                    "b_ns_per_s": 9e6, "diff_ns_per_s": 9e6, "a_share": 0, "b_share": 0.5,
                    "a_range": [0, 0], "b_range": [8e6, 1e7], "within_spread": False}]
    lines = R._cause_lines(c)
    assert "a change within the run-to-run spread of either side is not one" in lines[1]
    assert lines[3].endswith("A 2.00 ms..5.00 ms, B 3.50 ms..4.50 ms: within the spread")
    assert lines[4].endswith("A 0 ns..0 ns, B 8.00 ms..10.00 ms")


def test_max_and_counts_shown_not_judged_and_other_metrics_never_red():
    c = comparison()
    c["extremes"] = [{"name": "max", "unit": "ns", "a": 17_520_705, "b": 2_650_000,
                      "diff": -14_870_705, "diff_pct": -84.9},
                     {"name": "samples", "unit": "count", "a": 1000, "b": 1200, "diff": 200,
                      "diff_pct": 20.0}]
    lines = R.format_table(c)
    mx = [x for x in lines if x.lstrip().startswith("max ") and "judged" in x][0].split()
    assert mx[1:5] == ["17.52", "ms", "2.65", "ms"] and mx[-2:] == ["not", "judged"]
    n = [x for x in lines if x.lstrip().startswith("samples ")][0].split()
    assert n[1:5] == ["1000", "1200", "+200", "+20.0"]
    m = dict(c["metrics"][0], key=False, change="worse")
    assert R.change_word(c, m) == "higher"
    assert R.change_word(c, dict(m, change="better")) == "lower"
    assert R.change_word(c, dict(m, key=True)) == "worse"


def test_hardware_counters():
    assert R._pmu_lines(None) == [] and R._pmu_lines({"a": None, "b": None}) == []
    assert R._pmu_lines({"a": {"ipc": 1}, "b": None}) == [
        "", "hardware counters: not compared: B has none (no PMU where it ran)"]
    hc = {"a": {"ipc": 2.0, "per_million_loops": {"cache_misses": 4.0,
                                                  "dtlb_load_misses": 1.0}},
          "b": {"ipc": 1.5, "per_million_loops": {"cache_misses": 6.0}}}
    lines = R._pmu_lines(copy.deepcopy(hc))
    assert lines[2].split() == ["A", "B", "B-A", "B-A", "%"]
    assert lines[3].split() == ["IPC", "2.00", "1.50", "-0.50", "-25.0", "%"]
    assert lines[4].split() == ["cache", "misses", "per", "million", "loops", "4.0", "6.0",
                                "+2.0", "+50.0", "%"]
    assert len(lines) == 5          # dtlb misses of one side only: no row
