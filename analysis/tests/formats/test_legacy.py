# SPDX-License-Identifier: GPL-2.0-only
"""formats.legacy: jtr_null's text summary and gnuplot file from a result's
histograms, field by field worked out here: the 10 ns linear view and its
overflows, the "are below" lines, the header's fields from the result, gnuplot's
escaping, and the fields where the probe's own file can differ by one.
(tests/test_suite.py compares whole files with the C writer's.)"""
import pytest

from jtrpy.formats import legacy as L

# ten values: 2 of 5 ns, 3 of 15 ns, 4 in [1000, 1003], 1 in [2000, 2015]
BUCKETS = [[5, 5, 2], [15, 15, 3], [1000, 1003, 4], [2000, 2015, 1]]


def run(**kw):
    r = {"name": "cpu1", "cpu": 1, "samples": 10, "min_ns": 5, "max_ns": 2010,
         "mean_ns": 612.9, "histogram": {"buckets": [list(b) for b in BUCKETS]}}
    r.update(kw)
    return r


def test_linear_view_and_overflows():
    lin, over = L.linear(BUCKETS, 100)
    assert lin[0] == 2 and lin[1] == 3 and sum(lin) == 5
    assert over == 5            # 1000 ns is the 101st 10 ns bucket: past 100 of them
    lin, over = L.linear(BUCKETS, 201)
    assert (lin[100], lin[200], over) == (4, 1, 0)


def test_minmax_line():
    assert L.minmax(run(), 100) == "Minimum=5, Maximum=2010, Average=612, Overflows=5\n"
    assert L.minmax(run(histogram={"buckets": []}), 100) == \
        "Minimum=0, Maximum=2010, Average=0, Overflows=0\n"


def test_are_below():
    r = run()
    # half of 10 is the 5th value: the end of the 10 ns bucket of 15 ns
    assert L.below_ns(r, 100, 50.0) == 20
    # a quarter of 10 is 2.5 values, rounded to 3: the 15 ns bucket too
    assert L.below_ns(r, 100, 25.0) == 20 and L.below_ns(r, 100, 20.0) == 10
    # the 9th value is past the 100 buckets: jtr's percentile (1003, the max of its
    # bucket) rounded up to the next 10 ns
    assert L.below_ns(r, 100, 90.0) == 1010
    assert L.below_ns(r, 201, 90.0) == 1010       # inside the view: its bucket's end
    # the 10th value: 2015, its bucket's end, clamped to the max 2010, then up
    assert L.percentiles(r, 100).splitlines() == [
        "90.000% are below 1010 ns", "99.000% are below 2020 ns",
        "99.900% are below 2020 ns", "99.990% are below 2020 ns",
        "99.999% are below 2020 ns"]


def test_histo_buckets():
    res = {"runs": [run(percentiles_ns={"99.9": 5000}), run(percentiles_ns={"99.9": 300})]}
    assert L.histo_buckets(res) == 502              # 5000 ns // 10 + 2
    assert L.histo_buckets(res, 50) == 50
    assert L.histo_buckets(dict(res, params={"histo_buckets": 30})) == 30
    assert L.histo_buckets({"runs": [run(percentiles_ns={"99.9": 1000})]}) == L.DEFAULT_BUCKETS
    assert L.histo_buckets({"runs": [run(percentiles_ns={"99.9": 10**9})]}) == \
        L.MAX_AUTO_BUCKETS
    assert L.histo_buckets({"params": {"histo_buckets": True}, "runs": []}) == L.DEFAULT_BUCKETS


@pytest.mark.parametrize("result,r,lead", [
    ({"tool": "null", "params": {"spins": 100}}, {}, "Busy_spins=100"),
    ({"tool": "send", "params": {"msg_len": 64}}, {"name": "null_1", "spins": 7},
     "no_send_spin=7"),
    ({"tool": "send", "params": {"msg_len": 64}}, {"name": "send_1"}, "Msg_size=64"),
    ({"tool": "clock"}, {"spins": 3}, "Busy_spins=3"),
    ({"tool": "gap"}, {}, "Tool=gap"),
    ({}, {}, "Tool=unknown"),
    ({"tool": "gap"}, {"legacy_lead": "Own=1"}, "Own=1"),
])
def test_lead_field(result, r, lead):
    assert L.lead_of(result, r) == lead


def test_header_fields_from_the_result():
    res = {"tool": "send", "params": {"desc": "tst_sock.sh", "samples": 95403, "pause_ns": 5,
                                      "warmup": 1000, "msg_len": 64, "cpu": 9},
           "calibration": {"timebase": "tsc", "gettime_cost_ns": 12.5, "rdtsc_cost_ns": 7.49,
                           "tsc_hz": 2999999999.6, "loops_1000_cost_ns": "x"},
           "privileges": {"fifo_priority": 0}}
    f = L.header_fields(res, run(name="null_1", kind="null", spins=1234, cpu="x"))
    assert f == {"desc": "tst_sock.sh (null loop)", "lead": "no_send_spin=1234",
                 "cpu_num": 9, "fifo_priority": -1, "histo_buckets": L.DEFAULT_BUCKETS,
                 "num_samples": 95403, "pause_ns": 5, "timebase": 1, "warmup_loops": 1000,
                 "gettime_cost": 13, "rdtsc_cost": 7, "ticks_per_sec": 3000000000,
                 "loops_1000_cost": 0}
    f = L.header_fields({"tool": "gap", "calibration": {"timebase": "clock"},
                         "privileges": {"fifo_priority": 80}}, run(cpu=None))
    assert (f["desc"], f["cpu_num"], f["num_samples"], f["timebase"], f["fifo_priority"]) == \
        ("jtr gap", -1, 10, 2, 80)
    assert L.header(f) == (
        "jtr gap: Tool=gap, cpu_num=-1, fifo_priority=80, histo_buckets=200, "
        "num_samples=10,\n pause=0 timebase=2, warmup_loops=0, gettime_cost=0,\n"
        " rdtsc_cost=0, ticks_per_sec=0, jtr_1000_loops_cost=0\n")


def test_gnuplot_escaping_and_block():
    assert L.escape_title('a_b\n"c"\\\n\n') == 'a\\_b\\n\\"c\\"\\\\'
    block = L.gnuplot_block(2, "h_1\n", "Minimum=5\n", run(), 100)
    assert block == '# title_2 = "h\\_1\\nMinimum=5"\n# xrange_2 = 1000\n0 2\n10 3\n\n\n'


def test_whole_texts_hold_every_plottable_run_in_order():
    res = {"tool": "gap", "runs": [run(name="a"), {"name": "no histogram"}, run(name="b")]}
    nb, bl = L.blocks(res, 100)
    assert nb == 100 and [b[0]["name"] for b in bl] == ["a", "b"]
    gp = L.gnuplot_text(res, 100)
    assert gp.count("# title_") == 2 and "# title_2 = " in gp and gp.count("# xrange_2 = 1000") == 1
    txt = L.summary_text(res, 100)
    assert txt.count("% are below") == 10 and txt.count("histo_buckets=100,") == 2
    assert L.summary_text({"runs": []}) == "" and L.gnuplot_text({"runs": []}) == ""


def test_fields_that_may_differ_by_one():
    res = {"calibration": {"gettime_cost_ns": 12.5, "rdtsc_cost_ns": 12.49,
                           "loops_1000_cost_ns": 7.5},
           "runs": [run(name="a", mean_ns=31.0), run(name="b", mean_ns=31.0004),
                    run(name="c", mean_ns=31.5)]}
    assert L.ambiguous_fields(res) == [("calibration", "gettime_cost"),
                                       ("calibration", "jtr_1000_loops_cost"),
                                       ("a", "Average"), ("b", "Average")]


@pytest.mark.parametrize("label,stem", [
    ("results/a b!", "results_a_b"), ("run-1.x", "run-1.x"), ("...", "result"),
    (".hidden", "hidden"), (7, "7"),
])
def test_file_stems(label, stem):
    assert L.file_stem(label) == stem
