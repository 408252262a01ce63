# SPDX-License-Identifier: GPL-2.0-only
"""jtr compare: percentiles from buckets, the bootstrap, the verdict, causes and
repetitions, on synthetic histograms built here and on a real gap result."""
import json
import math
import os
import subprocess
import sys
import time

import jsonschema
import numpy as np
import pytest

from jtrpy.errors import JtrError, UsageError
from jtrpy.render.compare import format_table
from jtrpy.results import hist
from jtrpy.results.result import load_result
from jtrpy.stats import compare as C
from jtrpy.system.files import dumps_json

from ..synthetic import (
    BITS,
    PCTS,
    bucket_of,
    loops,
    make_result,
    make_run,
    true_percentile,
)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def by_name(c):
    return {m["name"]: m for m in c["metrics"]}


# no minimum practical effect: the statistics alone decide
ANY = {"min_effect_ns": 0, "min_effect_pct": 0}


# --- the histogram rules against the C tools (the rest: results/test_hist.py) -

@pytest.fixture(scope="module")
def real_result(tmp_path_factory):
    """One second of `jtr gap` on CPU 0 (the tools must have been built: make)."""
    out = tmp_path_factory.mktemp("gap") / "r"
    p = subprocess.run([os.path.join(ROOT, "jtr"), "gap", "-d", "1", "-c", "0", "-o", str(out)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    assert p.returncode == 0, "jtr gap failed (run make first?): " + p.stderr
    with open(out / "result.json") as f:
        return json.load(f)


def test_percentiles_from_buckets_equal_the_c_tools(real_result):
    run = real_result["runs"][0]
    h = run["histogram"]
    for k in PCTS:
        assert hist.value_at_percentile(h["buckets"], float(k), run["min_ns"],
                                        run["max_ns"]) == run["percentiles_ns"][k], k
    assert hist.value_at_percentile(h["buckets"], 100.0, run["min_ns"], run["max_ns"]) \
        == run["max_ns"]
    # and compare's own point values of a one-run result are the same numbers
    c = C.compare([real_result], [real_result], resamples=100)
    m = by_name(c)
    for k in PCTS:
        assert m["p" + k]["a"] == run["percentiles_ns"][k]
        # the two sides are resampled apart, so the CI of a result against itself
        # is not [0, 0], but it holds 0
        assert m["p" + k]["diff"] == 0 and m["p" + k]["ci"][0] <= 0 <= m["p" + k]["ci"][1]
    assert m["time lost"]["a"] == pytest.approx(run["lost_time_pct"], abs=1e-6)
    assert m["outliers/s"]["a"] == pytest.approx(run["outliers"]["per_s"], abs=1e-3)
    assert c["verdict"] == "no significant change"


def test_bucket_rule_matches_the_c_tools(real_result):
    h = real_result["runs"][0]["histogram"]
    for lo, hi, _ in h["buckets"]:
        i = hist.bucket_index(h["sub_bucket_bits"], lo)
        assert hist.bucket_index(h["sub_bucket_bits"], hi) == i
        assert hist.bucket_lo_hi(h["sub_bucket_bits"], i) == (lo, hi)
        assert bucket_of(lo, h["sub_bucket_bits"]) == (lo, hi)


# --- the bootstrap and the verdict ---------------------------------------------

def test_a_tail_shift_is_found_in_the_right_direction():
    a = make_result(make_run(loops(1)))
    b = make_result(make_run(loops(2, tail=1.2)))
    c = C.compare([a], [b], **ANY)
    m = by_name(c)
    for name in ("p99", "p99.9", "p99.99"):
        assert m[name]["b"] > m[name]["a"]
        assert m[name]["ci"][0] > 0, (name, m[name])
        assert m[name]["change"] == "worse"
        # the true shift (+20 %) lies in the CI of the difference, give or take
        # a bucket of the histogram
        shift = 0.2 * m[name]["a"]
        assert m[name]["ci"][0] - 2 * m[name]["a"] / 128 <= shift <= \
            m[name]["ci"][1] + 2 * m[name]["a"] / 128, (name, shift, m[name]["ci"])
    assert m["p50"]["diff"] == 0     # below 50 ns nothing moved
    assert c["verdict"] == "worse"
    assert "p99.9" in c["decided_by"] and "p99.99" in c["decided_by"]
    assert c["verdict_text"].startswith("worse: ") and "p99.99 rose +" in c["verdict_text"]
    back = C.compare([b], [a], **ANY)
    assert back["verdict"] == "better"
    assert by_name(back)["p99.99"]["ci"][1] < 0


def test_two_samples_of_one_distribution_are_no_significant_change():
    a = make_result(make_run(loops(11)))
    b = make_result(make_run(loops(12)))
    c = C.compare([a], [b])
    for m in c["metrics"]:
        if m["key"]:
            assert m["change"] is None, m
    for name in ("p99.9", "p99.99", "time lost"):
        m = by_name(c)[name]
        assert m["ci"][0] <= 0 <= m["ci"][1], m
    assert c["verdict"] == "no significant change" and c["decided_by"] == []
    assert "CI includes 0" in c["verdict_text"]


def test_ci_width_follows_sample_size_and_confidence():
    """More samples: a narrower CI; a higher confidence: a wider one."""
    def width(n, conf):
        a = make_result(make_run(loops(21, n=n)))
        b = make_result(make_run(loops(22, n=n)))
        m = by_name(C.compare([a], [b], confidence=conf))["time lost"]
        return m["ci"][1] - m["ci"][0]
    assert width(2_000_000, 95) < width(200_000, 95)
    assert width(200_000, 99.9) > width(200_000, 80)


def test_time_lost_resamples_around_the_point_value():
    r = make_result(make_run(loops(7)))
    side = C._Side([r], ["r"], BITS)
    boot = C.bootstrap(side, 2000, np.random.default_rng(0))
    lost = boot["time lost"]
    assert lost.mean() == pytest.approx(side.point["time lost"], rel=0.02)
    # its spread is that of the sum of ~400 lognormal interruptions
    n = r["runs"][0]["outliers"]["count"]
    assert 0.5 / math.sqrt(n) < lost.std() / lost.mean() < 3 / math.sqrt(n)
    assert boot["p50"].min() >= r["runs"][0]["min_ns"]


def test_seed_makes_it_reproducible():
    a = make_result(make_run(loops(1, n=300_000)))
    b = make_result(make_run(loops(2, n=300_000, tail=1.1)))
    one = C.compare([a], [b], seed=7)
    assert C.compare([a], [b], seed=7) == one
    other = C.compare([a], [b], seed=8)
    assert [m["ci"] for m in other["metrics"]] != [m["ci"] for m in one["metrics"]]


def test_a_billion_samples_are_resampled_not_expanded():
    run = make_run(loops(9, n=1_000_000))
    for b in run["histogram"]["buckets"]:
        b[2] *= 1000
    run["histogram"]["total"] = run["samples"] = 1000 * run["samples"]
    assert run["samples"] == 10 ** 9
    r = make_result(run)
    t0 = time.monotonic()
    c = C.compare([r], [r])
    assert time.monotonic() - t0 < 30
    assert c["a"]["samples"] == 10 ** 9
    m = by_name(c)["p99.99"]
    assert m["a"] == run["percentiles_ns"]["99.99"] and m["diff"] == 0
    # with a thousand times the samples, the CI is a bucket wide at most
    assert m["ci"][1] - m["ci"][0] <= 2 * m["a"] / 128


def test_runs_of_one_result_are_merged():
    v0, v1 = loops(31, n=300_000), loops(32, n=200_000, tail=1.5)
    r = make_result(make_run(v0, cpu=0), make_run(v1, cpu=1))
    c = C.compare([r], [r], resamples=200)
    both = np.concatenate([v0, v1])
    m = by_name(c)
    for k in PCTS:
        assert m["p" + k]["a"] == true_percentile(both, float(k)), k
    lost = sum(run["outliers"]["lost_ns"] for run in r["runs"])
    dur = sum(run["duration_ns"] for run in r["runs"])
    assert m["time lost"]["a"] == pytest.approx(100.0 * lost / dur, abs=1e-6)
    assert c["a"]["cpus"] == [0, 1] and c["a"]["runs"] == 2


def test_a_send_result_is_compared_on_its_send_runs(tmp_path):
    """jtr send's null runs are its reference: compare, ls and report leave them out."""
    from jtrpy.results.figures import result_figures
    send, null = loops(33, n=200_000, tail=2.0), loops(34, n=200_000, tail=0.5)
    runs = [dict(make_run(send, cpu=1, name="send_1"), kind="send", pair=1),
            dict(make_run(null, cpu=1, name="null_1"), kind="null", pair=1)]
    path = tmp_path / "result.json"
    path.write_text(json.dumps(make_result(*runs, tool="send")))
    r = load_result(str(path))
    a, qs = C.comparable([r], ["s"])
    assert [x["name"] for x in a[0]["runs"]] == ["send_1"] and qs[0].name == "send"
    c = C.compare([r], [r], resamples=100)
    assert by_name(c)["p99.99"]["a"] == true_percentile(send, 99.99)
    assert c["a"]["runs"] == 1 and c["a"]["quantity"] == "send"
    assert c["a"]["quantities"] == ["null", "send"]
    # the null runs on request: a loop time against the send call is refused
    c = C.compare([r], [r], resamples=100, quantity="null")
    assert by_name(c)["p99.99"]["a"] == true_percentile(null, 99.99)
    assert c["a"]["quantity"] == "null" and c["a"]["measures"] == "loop time"
    fig = result_figures(json.loads(path.read_text()))
    assert fig["percentiles_ns"]["99.99"] == true_percentile(send, 99.99)


# --- repetitions: the run-to-run spread ------------------------------------------

def test_run_to_run_spread_of_repetitions():
    # the tail of one setup moves from run to run by up to 30 %
    reps_a = [make_result(make_run(loops(40 + i, n=1_000_000, tail=t)))
              for i, t in enumerate((1.0, 1.3, 0.9))]
    reps_b = [make_result(make_run(loops(50 + i, n=1_000_000, tail=t)))
              for i, t in enumerate((1.25, 1.2, 1.3))]
    c = C.compare(reps_a, reps_b, resamples=300)
    m = by_name(c)["p99.99"]
    each_a = [by_name(C.compare([r], [r], resamples=100))["p99.99"]["a"] for r in reps_a]
    each_b = [by_name(C.compare([r], [r], resamples=100))["p99.99"]["a"] for r in reps_b]
    assert m["a_range"] == [min(each_a), max(each_a)]
    assert m["b_range"] == [min(each_b), max(each_b)]
    assert m["spread"] == max(max(each_a) - min(each_a), max(each_b) - min(each_b))
    # pooled, the difference is clear to the bootstrap, but not beyond the spread
    assert m["ci"][0] > 0 or m["ci"][1] < 0
    assert abs(m["diff"]) <= m["spread"] and m["change"] is None
    assert m["why"] == "within the run-to-run spread"
    assert c["verdict"] == "no significant change"
    assert "p99.99 within the run-to-run spread" in c["verdict_text"]
    lines = format_table(c)
    assert any("A runs" in line for line in lines)
    assert not any(line.startswith("note: one result per side") for line in lines)
    # a shift larger than the spread counts
    reps_c = [make_result(make_run(loops(60 + i, n=1_000_000, tail=t)))
              for i, t in enumerate((2.0, 2.1, 1.9))]
    worse = C.compare(reps_a, reps_c, resamples=300)
    assert by_name(worse)["p99.99"]["change"] == "worse"
    assert worse["verdict"] == "worse"
    assert "run-to-run variation not measured" not in worse["verdict_text"]


def test_one_result_per_side_says_the_spread_is_unknown():
    a = make_result(make_run(loops(1, n=500_000)))
    b = make_result(make_run(loops(2, n=500_000, tail=1.3)))
    c = C.compare([a], [b], resamples=300)
    assert c["verdict"] == "worse"
    assert "(one result per side: run-to-run variation not measured)" in c["verdict_text"]
    assert all(m["spread"] is None for m in c["metrics"])
    assert any(line.startswith("note: one result per side") for line in format_table(c))


def test_mixed_when_one_key_metric_rose_and_another_fell():
    base = loops(70)
    a = make_result(make_run(base))
    # the same loops, the 1 % of slow ones slower (p99.9 up), the interruptions
    # half as long (time lost and p99.999 down)
    v = base.copy()
    v[(v > 50) & (v < 1000)] += 15
    v[v >= 1000] //= 2
    b = make_result(make_run(v))
    c = C.compare([a], [b], **ANY)
    m = by_name(c)
    assert m["p99.9"]["change"] == "worse" and m["time lost"]["change"] == "better"
    assert c["verdict"] == "mixed"
    assert "p99.9 rose" in c["verdict_text"] and "time lost fell" in c["verdict_text"]


def test_within_the_histograms_resolution_is_no_change():
    m = C._metric("p99", 1000, 1004, {"p99": np.full(10, 1000)}, {"p99": np.full(10, 1004)},
                  95.0, [{"p99": 1000}], [{"p99": 1004}], 2.0 ** -7, 0, 0)
    assert m["ci"] == [4, 4] and m["change"] is None and not m["significant"]
    assert m["why"] == "within the histogram's resolution"
    m = C._metric("p99", 1000, 1020, {"p99": np.full(10, 1000)}, {"p99": np.full(10, 1020)},
                  95.0, [{"p99": 1000}], [{"p99": 1020}], 2.0 ** -7, 0, 0)
    assert m["change"] == "worse" and m["significant"] and m["practical"]
    # a coarser side's step: 1 us of an oslat import
    m = C._metric("p99", 1000, 1900, {"p99": np.full(10, 1000)}, {"p99": np.full(10, 1900)},
                  95.0, [{"p99": 1000}], [{"p99": 1900}], 2.0 ** -7, 0, 0, step_ns=1000)
    assert m["change"] is None and m["why"] == "within the resolution (1.0 us)"


# --- causes ------------------------------------------------------------------

def attribution(duration_ns, causes):
    return {"outliers": {"duration_ns": duration_ns},
            "causes": [{"category": cat, "name": name, "total_ns": ns, "count": 1,
                        "share": 0.0, "per_s": 0.0} for cat, name, ns in causes]}


def test_cause_deltas():
    run = make_run(loops(80, n=100_000))
    a = make_result(run, attribution=attribution(2_000_000_000, [
        ("no kernel event", "hypervisor, SMI or hardware", 30_000_000),
        ("timer tick", "local timer", 10_000_000),
        ("task preemption", "kworker/1:1 (pid 27369, prio 120)", 4_000_000)]))
    b = make_result(run, attribution=attribution(1_000_000_000, [
        ("no kernel event", "hypervisor, SMI or hardware", 15_000_000),
        ("task preemption", "kworker/1:1 (pid 4242, prio 120)", 5_000_000)]))
    c = C.compare([a], [b], resamples=100)
    rows = {(r["category"], r["name"]): r for r in c["causes"]}
    assert set(rows) == {("no kernel event", "hypervisor, SMI or hardware"),
                         ("timer tick", "local timer"),
                         ("task preemption", "kworker/1:1")}
    kw = rows[("task preemption", "kworker/1:1")]
    assert kw["a_ns_per_s"] == 2_000_000 and kw["b_ns_per_s"] == 5_000_000
    assert kw["diff_ns_per_s"] == 3_000_000
    assert kw["a_share"] == pytest.approx(4 / 44, abs=1e-6)
    assert kw["b_share"] == pytest.approx(0.25, abs=1e-6)
    tick = rows[("timer tick", "local timer")]
    assert tick["b_ns_per_s"] == 0 and tick["diff_ns_per_s"] == -5_000_000
    hyp = rows[("no kernel event", "hypervisor, SMI or hardware")]
    assert hyp["diff_ns_per_s"] == 0          # 15 ms/s on both sides
    assert hyp["diff_share"] == pytest.approx(0.75 - 30 / 44, abs=1e-6)
    # largest change first
    assert [r["diff_ns_per_s"] for r in c["causes"]] == [-5_000_000, 3_000_000, 0]
    text = "\n".join(format_table(c))
    assert "kworker/1:1" in text and "+3.00 ms" in text and "-5.00 ms" in text
    # one result a side: no interval, said
    assert kw["a_range"] is None and kw["within_spread"] is None
    assert "one run each: no interval" in text
    # only one side attributed: no deltas, and the table says which is missing
    c = C.compare([a], [make_result(run)], resamples=100)
    assert c["causes"] is None
    assert "causes: not compared: B not attributed" in "\n".join(format_table(c))


def test_cause_ranges_over_repetitions_tell_noise_from_change():
    """Two results a side: each cause's range over them; a change within the
    wider range is noise (the tick moving between runs of one setup), one past
    it is not (a spinner that appears in B)."""
    run = make_run(loops(80, n=100_000))

    def res(tick_ns, spin_ns):
        causes = [("timer tick", "local timer", tick_ns)] + \
            ([("task preemption", "spin", spin_ns)] if spin_ns else [])
        return make_result(run, attribution=attribution(10 ** 9, causes))
    c = C.compare([res(3_000_000, 0), res(6_000_000, 0)],
                  [res(4_000_000, 9_000_000), res(7_000_000, 8_000_000)], resamples=100)
    rows = {r["name"]: r for r in c["causes"]}
    tick, spin = rows["local timer"], rows["spin"]
    assert tick["a_range"] == [3_000_000, 6_000_000] and tick["b_range"] == [4_000_000, 7_000_000]
    assert tick["diff_ns_per_s"] == 1_000_000 and tick["within_spread"] is True
    assert spin["a_range"] == [0, 0] and spin["within_spread"] is False


def test_extremes_are_the_max_and_the_counts():
    a = make_result(make_run(loops(1, n=100_000)))
    b = make_result(make_run(loops(2, n=150_000, tail=1.5)))
    c = C.compare([a], [b], resamples=100)
    ex = {m["name"]: m for m in c["extremes"]}
    assert ex["max"]["a"] == a["runs"][0]["max_ns"] and ex["max"]["b"] == b["runs"][0]["max_ns"]
    assert ex["samples"]["a"] == c["a"]["samples"] and ex["samples"]["b"] == c["b"]["samples"]
    assert ex["max"]["diff"] == ex["max"]["b"] - ex["max"]["a"]


def with_pmu(run, cycles, instructions, cache_misses, dtlb):
    return dict(run, pmu={"cycles": cycles, "instructions": instructions,
                          "cache_misses": cache_misses, "dtlb_load_misses": dtlb,
                          "ipc": instructions / cycles, "per_million_loops": {}})


def test_hardware_counters_tell_slowed_from_stolen():
    """A side whose CPU ran fewer instructions per cycle with more misses shows it,
    summed over its runs (not averaged per run)."""
    run = make_run(loops(81, n=100_000))                      # 100000 loops each
    a = make_result(with_pmu(run, 1_000_000, 2_000_000, 100, 10),
                    with_pmu(run, 3_000_000, 6_000_000, 300, 30))
    b = make_result(with_pmu(run, 4_000_000, 4_000_000, 1200, 20))
    c = C.compare([a], [b], resamples=100)
    hc = c["hardware_counters"]
    assert hc["a"] == {"runs": 2, "ipc": 2.0,
                       "per_million_loops": {"cache_misses": 2000.0, "dtlb_load_misses": 200.0}}
    assert hc["b"] == {"runs": 1, "ipc": 1.0,
                       "per_million_loops": {"cache_misses": 12000.0, "dtlb_load_misses": 200.0}}
    text = format_table(c)
    i = next(k for k, line in enumerate(text) if line.startswith("hardware counters ("))
    assert text[i + 2].split() == ["IPC", "2.00", "1.00", "-1.00", "-50.0", "%"]
    assert text[i + 3].split()[-5:] == ["2000.0", "12000.0", "+10000.0", "+500.0", "%"]
    assert text[i + 4].split()[-5:] == ["200.0", "200.0", "0.0", "0.0", "%"]
    with open(os.path.join(ROOT, "docs", "compare.schema.json")) as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(c)
    # one side without counters (no PMU): said in one line; neither: nothing
    c = C.compare([a], [make_result(run)], resamples=100)
    assert c["hardware_counters"]["b"] is None
    assert "hardware counters: not compared: B has none (no PMU where it ran)" in \
        format_table(c)
    c = C.compare([make_result(run)], [make_result(run)], resamples=100)
    assert c["hardware_counters"] == {"a": None, "b": None}
    assert not [x for x in format_table(c) if "hardware counters" in x]


# --- warnings, bad input, output -------------------------------------------------

def test_warnings_for_different_tools_cpus_and_hosts():
    a = make_result(make_run(loops(1, n=100_000), cpu=1))
    b = make_result(make_run(loops(2, n=100_000), cpu=2), tool="null", host="other")
    b["partial"] = True
    w = C.compare([a], [b], resamples=100, labels_b=["after"])["warnings"]
    assert any("differ in tool (gap vs null)" in x for x in w)
    assert any("differ in CPUs (1 vs 2)" in x for x in w)
    assert any("differ in host (test vs other)" in x for x in w)
    assert any(x.startswith("after (B) was stopped early") for x in w)


def test_precisions_are_compared_on_the_coarsest():
    v = loops(90, n=200_000)
    fine = make_result(make_run(v, bits=9))
    coarse = make_result(make_run(v, bits=7))
    c = C.compare([fine, coarse], [coarse], resamples=100)
    assert all(m["diff"] == 0 for m in c["metrics"] if m["unit"] == "ns")
    assert any("sub_bucket_bits 7, 9" in w for w in c["warnings"])


def test_results_without_histograms_are_refused():
    r = make_result(make_run(loops(1, n=1000)))
    del r["runs"][0]["histogram"]
    with pytest.raises(UsageError, match="run 'cpu0' has no histogram"):
        C.compare([r], [r])
    with pytest.raises(UsageError, match="has no runs"):
        C.compare([make_result()], [r])
    empty = make_result(make_run(loops(1, n=1000)))
    empty["runs"][0]["histogram"]["buckets"] = []
    with pytest.raises(UsageError, match="has no samples"):
        C.check_result(empty, "x")
    damaged = make_result(make_run(loops(1, n=1000)))
    damaged["runs"][0]["histogram"]["buckets"][0] = [40, 40]
    with pytest.raises(UsageError, match=r"bucket \[40, 40\] is not \[lo, hi, count\]"):
        C.check_result(damaged, "x")


def test_without_numpy_one_line_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "numpy", None)
    r = make_result(make_run(loops(1, n=1000)))
    with pytest.raises(JtrError,
                       match=r"needs numpy \(any version\): apt-get install python3-numpy"):
        C.compare([r], [r])


def test_json_matches_the_schema():
    with open(os.path.join(ROOT, "docs", "compare.schema.json")) as f:
        v = jsonschema.Draft202012Validator(json.load(f))
    run = make_run(loops(1, n=200_000))
    att = attribution(10 ** 9, [("timer tick", "local timer", 10 ** 6)])
    reps = [make_result(run, attribution=att), make_result(make_run(loops(2, n=200_000)),
                                                           attribution=att)]
    for c in (C.compare([make_result(run)], [make_result(run)], resamples=100),
              C.compare(reps, reps[:1], resamples=100)):
        errors = list(v.iter_errors(json.loads(dumps_json(c))))
        assert not errors, errors[0].message
    assert c["causes"] and c["metrics"][0]["a_range"]


def _ping(seed, tail):
    runs = [make_run(loops(seed + k, n=100_000, tail=t), cpu=0, name=name)
            for k, (name, t) in enumerate((("rtt_from_intended", tail),
                                           ("rtt_from_send", 1.0), ("send_call", 0.3)))]
    return make_result(*runs, tool="ping")


def test_a_ping_result_is_compared_on_one_quantity():
    a, b = _ping(1, 1.0), _ping(11, 3.0)
    c = C.compare([a], [b], resamples=100)
    assert c["a"]["quantity"] == c["b"]["quantity"] == "rtt_from_intended"
    assert c["a"]["runs"] == 1 and c["a"]["samples"] == 100_000
    assert c["a"]["quantities"] == ["rtt_from_intended", "rtt_from_send", "send_call"]
    assert by_name(c)["p99.99"]["a"] == a["runs"][0]["percentiles_ns"]["99.99"]
    assert c["verdict"] == "worse"
    text = format_table(c)
    assert text[0].startswith("A: A1  (ping, CPU 0, rtt_from_intended: 1 run, ")
    assert text[2] == ("the results also hold rtt_from_send, send_call: --quantity NAME "
                       "compares one of them")
    c = C.compare([a], [b], resamples=100, quantity="send_call")
    assert by_name(c)["p99"]["b"] == b["runs"][2]["percentiles_ns"]["99"]
    assert c["b"]["measures"] == "send call" and c["verdict"] == "no significant change"
    with pytest.raises(UsageError, match="A1: no quantity 'rtt' in this ping result"):
        C.compare([a], [b], quantity="rtt")


def test_different_measures_are_refused_unless_asked():
    gap = make_result(make_run(loops(1, n=100_000)))
    with pytest.raises(UsageError, match=r"A \(A1\) and B \(B1\) differ in quantity "
                       r"\(rtt_from_intended vs gap\).*--mixed-quantities"):
        C.compare([_ping(1, 1.0)], [gap], resamples=100)
    with pytest.raises(UsageError, match=r"A \(A1\) and A \(A2\) differ in quantity \(gap vs "
                       r"rtt_from_intended\)"):
        C.compare([gap, _ping(1, 1.0)], [gap], resamples=100)
    c = C.compare([_ping(1, 1.0)], [gap], resamples=100, mixed=True)
    assert any("measure different things" in w for w in c["warnings"])
    # a ping result and a pub result share the send call
    pub = make_result(make_run(loops(5, n=100_000), name="send_call"), tool="pub")
    c = C.compare([_ping(1, 1.0)], [pub], quantity="send_call", resamples=100)
    assert c["a"]["quantity"] == c["b"]["quantity"] == "send_call"


def test_outer_quantiles_are_numpys_lower_and_higher():
    """The CI's ends without np.quantile(method=) (numpy < 1.22): the same values."""
    import numpy as np

    from jtrpy.stats.compare import outer_quantiles
    rng = np.random.default_rng(5)
    for n in (1, 2, 3, 10, 999, 2000):
        d = rng.normal(size=n) * 1000
        for lo, hi in ((0.025, 0.975), (0.005, 0.995), (0.0, 1.0), (0.5, 0.5)):
            assert outer_quantiles(np, d, lo, hi) == [
                float(np.quantile(d, lo, method="lower")),
                float(np.quantile(d, hi, method="higher"))], (n, lo, hi)


# --- the minimum practical effect, not comparable, short runs ---------------------

def test_a_small_significant_change_is_no_practical_difference():
    base = loops(70)
    a = make_result(make_run(base))
    v = base.copy()
    v[(v > 50) & (v < 1000)] += 15
    b = make_result(make_run(v))
    c = C.compare([a], [b], resamples=300)
    m = by_name(c)["p99.9"]
    # +15 ns with a CI clear of 0: significant, but under 100 ns
    assert m["diff"] > 0 and m["ci"][0] > 0 and m["significant"] and m["practical"] is False
    assert m["change"] is None and m["why"] == "less than the minimum of 100 ns"
    assert c["verdict"] == "no practical difference" and c["decided_by"] == []
    # the slow 2 % of loops 15 ns slower: p99 and p99.9 moved, the interruptions not
    assert c["verdict_text"].startswith("no practical difference: p99 rose +15 ns (+25.0 %")
    assert "; p99.9 rose +15 ns (+20.8 %, CI +14 ns .. +16 ns), less than the minimum of " \
        "100 ns" in c["verdict_text"]
    assert c["method"]["min_effect_ns"] == 100 and c["method"]["min_effect_pct"] == 10
    assert [x[-1] for x in (line.split() for line in format_table(c))
            if x[:1] == ["p99.9"]] == ["small"]
    # the same with no minimum: worse; with a minimum of 10 ns but 50 %: the % misses
    assert C.compare([a], [b], resamples=300, **ANY)["verdict"] == "worse"
    c = C.compare([a], [b], resamples=300, min_effect_ns=10, min_effect_pct=50)
    assert by_name(c)["p99.9"]["why"] == "less than the minimum of 50 % of A"


def test_time_lost_minimum_is_per_ms_of_run():
    m = C._metric("time lost", 1.0, 1.005, {"time lost": np.full(10, 1.0)},
                  {"time lost": np.full(10, 1.005)}, 95.0, [{"time lost": 1.0}],
                  [{"time lost": 1.005}], 2.0 ** -7, 100, 0)
    # +0.005 pt is 50 ns of each ms: under 100 ns per ms (0.010 pt)
    assert m["significant"] and not m["practical"]
    assert m["why"] == "less than the minimum of 0.010 pt (100 ns per ms)"
    m = C._metric("time lost", 1.0, 1.02, {"time lost": np.full(10, 1.0)},
                  {"time lost": np.full(10, 1.02)}, 95.0, [{"time lost": 1.0}],
                  [{"time lost": 1.02}], 2.0 ** -7, 100, 1)
    assert m["change"] == "worse"


def imported_us(result):
    """@result as jtr import makes an oslat file: values in whole microseconds."""
    r = dict(result, tool="oslat", calibration={"timebase": "tsc", "tsc_step_ns": None})
    r["import"] = {"time_unit": "us"}
    return r


def tsc(result, step=10.01):
    return dict(result, calibration={"timebase": "tsc", "tsc_step_ns": step})


def test_different_resolutions_are_not_comparable():
    gap = tsc(make_result(make_run(loops(1, n=200_000))))
    us = make_run(np.maximum(loops(2, n=200_000) // 1000, 0) * 1000 + 1000)
    oslat = imported_us(make_result(us, tool="oslat"))
    assert C.resolution_of(oslat) == (1000, "imported from oslat, which counts whole "
                                            "microseconds")
    assert C.resolution_of(gap) == (10.01, "the TSC's step")
    assert C.resolution_of(make_result(make_run(loops(1, n=1000)))) == (None, "not known")
    c = C.compare([oslat], [gap], resamples=100)
    assert c["verdict"] == "not comparable" and c["comparable"] is False
    assert c["a"]["resolution_ns"] == 1000 and c["b"]["resolution_ns"] == 10.01
    (why,) = c["not_comparable"]
    assert why.startswith("different resolutions: A's values come in steps of 1.0 us "
                          "(imported from oslat, which counts whole microseconds), B's of "
                          "10 ns (the TSC's step)")
    assert c["verdict_text"] == "not comparable: %s; the numbers are shown, not judged" % why
    # the numbers are there, none judged
    m = by_name(c)["p50"]
    assert m["a"] >= 1000 and m["b"] < 100 and m["diff_pct"] < -90
    assert all(x["change"] is None for x in c["metrics"])
    assert all(line.split()[-1] not in ("better", "worse", "small")
               for line in format_table(c) if line.split()[:1] == ["p50"])
    # two steps close to each other, or under the minimum effect: comparable
    assert C.compare([tsc(gap, 13)], [gap], resamples=100)["comparable"]
    assert C.compare([tsc(gap, 40)], [gap], resamples=100)["comparable"]
    assert C.compare([oslat], [oslat], resamples=100)["comparable"]
    # an unknown resolution is not refused
    assert C.compare([make_result(us)], [gap], resamples=100)["comparable"]


def test_different_measures_compared_as_asked_are_not_comparable():
    gap = make_result(make_run(loops(1, n=100_000)))
    c = C.compare([_ping(1, 1.0)], [gap], resamples=100, mixed=True)
    assert c["verdict"] == "not comparable"
    assert c["not_comparable"] == ["A's rtt_from_intended measures the round trip from the "
                                   "intended send time, B's gap the loop time"]


def test_a_short_single_run_gets_a_suggestion_to_repeat():
    a = make_result(make_run(loops(1, n=500_000)))
    b = make_result(make_run(loops(2, n=500_000, tail=1.3)))
    c = C.compare([a], [b], resamples=100)
    (s,) = c["suggestions"]
    assert s.startswith("A (0.02 s) and B (0.02 s) are each one run shorter than 10 s")
    assert "--repeat 3" in s and c["verdict_text"].endswith("; " + s)
    # a long B: only A is named; both long, or several results a side: nothing
    long_b = make_result(dict(make_run(loops(2, n=500_000, tail=1.3)), duration_ns=20 * 10 ** 9))
    (s,) = C.compare([a], [long_b], resamples=100)["suggestions"]
    assert s.startswith("A (0.02 s) is one run shorter than 10 s")
    assert C.compare([long_b], [long_b], resamples=100)["suggestions"] == []
    assert C.compare([a, a], [b, b], resamples=100)["suggestions"] == []
