# SPDX-License-Identifier: GPL-2.0-only
"""results.figures: the headline numbers of a run and of a whole result, worked
out here from the runs' counts: time lost where a sample is CPU time, the excess
over the threshold where it is a latency, outliers per second, the merged
histogram's percentiles; and the send-vs-null pairs of a result."""
import pytest

from jtrpy.results import figures as F
from jtrpy.results import hist

from ..synthetic import loops, make_result, make_run, true_percentile


def run(lost=300, count=3, total=3600, threshold=1000, dur=2 * 10**9, **kw):
    r = {"duration_ns": dur, "samples": 10, "max_ns": 1500, "percentiles_ns": {"50": 30},
         "outliers": {"lost_ns": lost, "count": count, "total_ns": total,
                      "threshold_ns": threshold}}
    r.update(kw)
    return r


def test_measured_ns_adds_a_cpus_runs_and_takes_the_most_of_any_cpu():
    # null's repetitions: one after another on one CPU
    assert F.measured_ns([{"cpu": 1, "duration_ns": 300}, {"cpu": 1, "duration_ns": 500}]) == 800
    # gap on two CPUs: side by side
    assert F.measured_ns([{"cpu": 0, "duration_ns": 300}, {"cpu": 1, "duration_ns": 500}]) == 500
    assert F.measured_ns([{"cpu": 0, "duration_ns": 300}, {"cpu": 0, "duration_ns": 400},
                          {"cpu": 1, "duration_ns": 500}]) == 700
    # the quantities of one measurement on one CPU, over the same span: once (a
    # ping's 8 s were 24 s, its causes' rates a third of what they were)
    ping = [{"cpu": 1, "start_mono_ns": 1000, "duration_ns": 8000} for _ in range(3)]
    assert F.measured_ns(ping) == 8000
    # overlapping in part, and one after another
    assert F.measured_ns([{"cpu": 1, "start_mono_ns": 0, "duration_ns": 500},
                          {"cpu": 1, "start_mono_ns": 300, "duration_ns": 500},
                          {"cpu": 1, "start_mono_ns": 1000, "duration_ns": 100}]) == 900
    # no duration, or not a number: nothing measured
    assert F.measured_ns([]) == 0
    assert F.measured_ns([{"cpu": 1}, {"cpu": 1, "duration_ns": None},
                          {"cpu": 1, "duration_ns": "5"}, "x"]) == 0


def test_run_lost_and_excess():
    assert F.run_lost(run()) == (300, 3, 2 * 10**9)
    # 3 outliers of 3600 ns in all past a 1000 ns threshold: 600 ns beyond it
    assert F.run_excess(run()) == (600, 3, 2 * 10**9)
    assert F.run_excess(run(total=2000)) == (0, 3, 2 * 10**9)    # never negative
    for bad in ({}, {"outliers": None, "duration_ns": 1}, run(dur=0), run(lost=None)):
        assert F.run_lost(bad) is None
    assert F.run_excess(run(total=1.5)) is None and F.run_excess(run(threshold=None)) is None


def test_run_figures_cpu_time_and_latency():
    f = F.run_figures(run())
    assert f["lost_pct"] == pytest.approx(100 * 300 / 2e9)
    assert f["outliers_per_s"] == pytest.approx(1.5) and f["excess_ns_per_s"] is None
    assert (f["max_ns"], f["samples"], f["percentiles_ns"]) == (1500, 10, {"50": 30})
    f = F.run_figures(run(), cpu_time=False)
    assert f["lost_pct"] is None and f["excess_ns_per_s"] == pytest.approx(300.0)
    assert f["outliers_per_s"] == pytest.approx(1.5)
    f = F.run_figures({"max_ns": 5})
    assert f["percentiles_ns"] == {} and f["lost_pct"] is f["outliers_per_s"] is None


def test_merged_histogram_at_the_coarsest_precision():
    fine = {"sub_bucket_bits": 9, "buckets": [[1000, 1000, 2], [1001, 1001, 1]]}
    coarse = {"sub_bucket_bits": 7, "buckets": [[1000, 1003, 4]]}
    merged, lo, hi = F.merged_histogram([{"histogram": fine, "min_ns": 1000, "max_ns": 1001},
                                         {"histogram": coarse, "min_ns": 1002,
                                          "max_ns": 1003}])
    assert (merged, lo, hi) == ([[1000, 1003, 7]], 1000, 1003)
    assert F.merged_histogram([{"name": "x"}]) is None
    assert F.merged_percentiles([]) == {}


def test_extremes_a_run_does_not_give_are_its_buckets_not_zero():
    # an imported run without min_ns and max_ns beside one without a histogram:
    # every percentile was clamped to a maximum of 0
    h = {"sub_bucket_bits": 7, "buckets": [[0, 0, 0], [2000, 2015, 90], [9000, 9071, 10]]}
    merged, lo, hi = F.merged_histogram([{"histogram": h}, {"name": "no histogram",
                                                           "min_ns": 1, "max_ns": 10 ** 9}])
    assert (lo, hi) == (2000, 9071)
    assert F.merged_percentiles([{"histogram": h}]) == {
        "50": 2015, "90": 2015, "99": 9071, "99.9": 9071, "99.99": 9071, "99.999": 9071}
    merged, lo, hi = F.merged_histogram([{"histogram": h, "min_ns": 2003, "max_ns": 9050}])
    assert (lo, hi) == (2003, 9050)


def test_merged_percentiles_are_those_of_the_pooled_samples():
    import numpy as np
    a, b = loops(1, n=20_000), loops(2, n=30_000, tail=2.0)
    p = F.merged_percentiles([make_run(a), make_run(b, cpu=1)])
    both = np.concatenate([a, b])
    assert p == {k: true_percentile(both, float(k)) for k in p}
    assert list(p) == ["50", "90", "99", "99.9", "99.99", "99.999"]


def test_top_cause():
    a = {"attribution": {"causes": [{"category": "timer tick", "name": "local timer",
                                     "share": 0.6, "total_ns": 600, "count": 3}]}}
    assert F.top_cause(a) == {"category": "timer tick", "name": "local timer",
                              "share": 0.6, "total_ns": 600}
    assert F.top_cause({"attribution": {"causes": []}}) is None
    assert F.top_cause({"attribution": "x"}) is None and F.top_cause({}) is None


def test_result_figures_of_two_cpus_pool_lost_time():
    """Time lost is the runs' lost time over their summed duration; the duration
    is the time measured on a CPU (side by side: one run's); percentiles from the
    merged histogram."""
    r0, r1 = make_run(loops(3, n=20_000), cpu=0), make_run(loops(4, n=20_000), cpu=1)
    res = make_result(r0, r1, host="h")
    res.update(started_at="2026-01-01T00:00:00Z", partial=True)
    res["host"]["tuning_profile"] = "jtr-latency"
    f = F.result_figures(res)
    lost = r0["outliers"]["lost_ns"] + r1["outliers"]["lost_ns"]
    dur = r0["duration_ns"] + r1["duration_ns"]
    assert f["lost_pct"] == pytest.approx(100.0 * lost / dur)
    n = r0["outliers"]["count"] + r1["outliers"]["count"]
    assert f["outliers_per_s"] == pytest.approx(n / (dur / 1e9))
    assert f["excess_ns_per_s"] is None and f["cpu_time"] is True
    assert (f["cpus"], f["runs"], f["samples"]) == ([0, 1], 2, 40_000)
    assert f["duration_ns"] == max(r0["duration_ns"], r1["duration_ns"])
    assert f["max_ns"] == max(r0["max_ns"], r1["max_ns"])
    assert (f["host"], f["tuning_profile"], f["partial"], f["imported"]) == \
        ("h", "jtr-latency", True, None)
    assert f["validity"] == {"valid": True, "reasons": []} and f["top_cause"] is None


def test_result_figures_of_runs_one_after_another_on_a_cpu():
    """null's repetitions on one CPU: the duration is their time added up (a
    saving, jtr advise's, is bounded by it: 705 ms in three runs of 0.33 s was
    said to be over 0.33 s once)."""
    runs = [make_run(loops(k, n=20_000), cpu=1) for k in (3, 4, 5)]
    f = F.result_figures(make_result(*runs))
    assert f["duration_ns"] == sum(r["duration_ns"] for r in runs)


def test_result_figures_of_a_latency_probe():
    """wake: the excess over the threshold per second, no time lost; one run
    without outliers leaves the pooled figures out."""
    r0 = make_run(loops(5, n=20_000), cpu=0)
    res = make_result(r0, tool="wake")
    res["import"] = {"from": "cyclictest"}
    f = F.result_figures(res)
    o = r0["outliers"]
    assert f["cpu_time"] is False and f["lost_pct"] is None
    assert f["excess_ns_per_s"] == pytest.approx(
        (o["total_ns"] - o["count"] * o["threshold_ns"]) / (r0["duration_ns"] / 1e9))
    assert f["imported"] == "cyclictest"
    res["runs"].append(dict(make_run(loops(6, n=1000), cpu=1), outliers=None))
    f = F.result_figures(res)
    assert f["excess_ns_per_s"] is None and f["outliers_per_s"] is None


@pytest.mark.parametrize("name,kind", [
    ("send_2", ("send", 2)), ("null_10", ("null", 10)), ("run 2", ("run", 2)),
    ("tcp-send-3", ("tcp-send", 3)), ("send", None), ("2", None), ("", None),
])
def test_run_kind(name, kind):
    assert F.run_kind({"name": name}) == kind


def test_run_pairs_match_each_kind_with_the_null_of_its_number():
    h = {"buckets": [[1, 1, 1]]}
    runs = [{"name": n, "histogram": h} for n in ("send_1", "null_1", "send_2", "null_3",
                                                   "tcp_1")] + [{"name": "null_2"}]
    pairs = F.run_pairs({"runs": runs})
    # send_2's null run has no histogram; send_1 and tcp_1 share null_1
    assert [(k, n, r["name"], z["name"]) for k, n, r, z in pairs] == [
        ("send", 1, "send_1", "null_1"), ("tcp", 1, "tcp_1", "null_1")]
    assert F.run_pairs({"runs": []}) == [] and F.run_pairs({}) == []


def test_one_run_gives_exactly_its_percentiles():
    r = make_run(loops(7, n=20_000))
    f = F.result_figures(make_result(r))
    assert f["percentiles_ns"] == r["percentiles_ns"]
    b = r["histogram"]["buckets"]
    assert f["percentiles_ns"]["99"] == hist.value_at_percentile(b, 99.0, r["min_ns"],
                                                                 r["max_ns"])
