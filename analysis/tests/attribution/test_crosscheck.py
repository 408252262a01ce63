# SPDX-License-Identifier: GPL-2.0-only
"""attribution.crosscheck: the attribution of each outlier against perf sched
timehist's slices of the same window, on one CPU's timeline built here and
worked through by hand: a preemption both saw (matched), one only the
attribution names, a task only timehist shows, slices that are short, outside
every outlier or of an exiting thread, the totals, and what is not compared."""
import pytest

from jtrpy.attribution.crosscheck import EXAMPLES, compare
from jtrpy.errors import UsageError

TASK, TICK = "task preemption", "timer tick"
LO, HI = 1_000_000, 2_000_000


def result(*cpus, threshold=2000):
    return {"runs": [{"cpu": c, "start_mono_ns": LO, "end_mono_ns": HI,
                      "outliers": {"threshold_ns": threshold}} for c in cpus]}


# CPU 1, from 0.95 ms to 2.1 ms: jtr-gap (tid 100) runs but for these slices
SLICES = [
    (1, 0, 0, "<idle>", 800_000, 950_000),          # ends before the run
    (1, 100, 100, "jtr-gap", 950_000, 1_105_000),
    (1, 200, 200, "kworker/1:1", 1_105_000, 1_145_000),   # in outlier 1
    (1, 100, 100, "jtr-gap", 1_145_000, 1_502_000),
    (1, 400, 400, "rcu", 1_502_000, 1_518_000),     # in outlier 3, charged to the tick
    (1, 100, 100, "jtr-gap", 1_518_000, 1_519_000),
    (1, 600, 600, "short", 1_519_000, 1_519_500),   # in outlier 3, shorter than min_ns
    (1, 100, 100, "jtr-gap", 1_519_500, 1_700_000),
    (1, 500, 500, "cron", 1_700_000, 1_705_000),    # in no outlier
    (1, -1, 77, ":-1", 1_705_000, 1_706_000),       # an exiting thread perf did not name
    (1, 100, 100, "jtr-gap", 1_706_000, 2_100_000),
]
OUTCOMES = [
    (1, 1_100_000, 50_000, [(TASK, "kworker/1:1", 40_000), (TICK, "local timer", 10_000)],
     [200], ()),
    (1, 1_300_000, 30_000, [(TASK, "bash", 30_000)], [300], ()),   # timehist: only jtr-gap
    (1, 1_500_000, 20_000, [(TICK, "local timer", 20_000)], [], ()),
    (1, 2_500_000, 10_000, [(TASK, "x", 10_000)], [9], ()),        # after the run
    (3, 1_500_000, 10_000, [(TASK, "x", 10_000)], [9], ()),        # a CPU of no run
]


def test_one_cpu_worked_by_hand():
    cc = compare(result(1), OUTCOMES, SLICES, lost=4, comms={300: "bash"})
    assert (cc["cpus"], cc["start_ns"], cc["end_ns"]) == ([1], LO, HI)
    assert (cc["min_ns"], cc["tolerance_ns"]) == (2000, 1000)     # the threshold's
    assert cc["probe_tasks"] == [{"cpu": 1, "tid": 100, "comm": "jtr-gap"}]
    assert cc["matched"] == {"count": 1, "ns": 40_000, "slices": 1}
    assert cc["attribution_only"] == {
        "count": 1, "ns": 30_000,
        "tasks": [{"tid": 300, "comm": "bash", "count": 1, "ns": 30_000}],
        "examples": [{"cpu": 1, "start_ns": 1_300_000, "length_ns": 30_000, "ns": 30_000,
                      "charged": ["bash"], "missing_pids": [300]}]}
    assert cc["timehist_only"] == {
        "count": 1, "ns": 16_000,
        "tasks": [{"tid": 400, "comm": "rcu", "count": 1, "ns": 16_000}],
        "examples": [{"cpu": 1, "tid": 400, "pid": 400, "comm": "rcu", "start_ns": 1_502_000,
                      "end_ns": 1_518_000, "ns": 16_000, "outlier_start_ns": 1_500_000,
                      "outlier_length_ns": 20_000, "charged_to": "timer tick: local timer"}]}
    # other tasks ran 40 + 16 + 0.5 + 5 us; the attribution charged 40 + 30 us to tasks
    assert cc["totals"] == {"timehist_ns": 61_500, "timehist_slices": 4,
                            "outside_outliers": {"count": 1, "ns": 5000},
                            "short": {"count": 1, "ns": 500}, "attribution_ns": 70_000,
                            "difference_ns": 8_500}
    assert (cc["disagreements"], cc["verdict"]) == (2, "2 disagreements")
    assert cc["warnings"] == [
        "1 slices (1.0 us) of exiting threads perf could not name (timehist shows ':-1'): "
        "not compared",
        "perf lost 4 scheduler events (its buffer was full): some disagreements may be theirs"]


def test_within_the_us_timehist_prints():
    """timehist's times are truncated to the us: a slice of the named task that
    ends less than a us before the outlier starts is the one it names."""
    sl = [(1, 100, 100, "jtr-gap", 950_000, 1_099_000), (1, 200, 200, "kworker/1:1", 1_099_000,
                                                        1_099_500),
          (1, 100, 100, "jtr-gap", 1_099_500, 2_100_000)]
    cc = compare(result(1), OUTCOMES[:1], sl)
    assert cc["matched"]["count"] == 1 and cc["verdict"] == "agree"


def test_slices_count_only_inside_the_run():
    """A task that ran across the run's start counts for what it ran inside."""
    sl = SLICES[:1] + [(1, 100, 100, "jtr-gap", 950_000, 990_000),
                       (1, 700, 700, "early", 990_000, 1_004_000),
                       (1, 100, 100, "jtr-gap", 1_004_000, 1_105_000)] + SLICES[2:]
    cc = compare(result(1), OUTCOMES, sl)
    assert cc["totals"]["outside_outliers"] == {"count": 2, "ns": 5000 + 4000}
    assert cc["totals"]["timehist_ns"] == 61_500 + 4000


def test_a_lower_minimum_makes_the_short_slice_a_disagreement():
    cc = compare(result(1), OUTCOMES, SLICES, min_ns=400)
    assert cc["min_ns"] == 400 and cc["totals"]["short"] == {"count": 0, "ns": 0}
    assert [t["tid"] for t in cc["timehist_only"]["tasks"]] == [400, 600]   # most time first
    assert cc["verdict"] == "3 disagreements"


def test_agreement_and_one_disagreement():
    outs = OUTCOMES[:1]
    sl = [s for s in SLICES if s[1] in (0, 100, 200)]
    cc = compare(result(1), outs, sl)
    assert (cc["verdict"], cc["disagreements"], cc["warnings"]) == ("agree", 0, [])
    cc = compare(result(1), OUTCOMES[:2], sl)
    assert cc["verdict"] == "1 disagreement"


def test_only_what_sched_data_covers_is_compared():
    cut = [s for s in SLICES if s[5] <= 1_706_000]
    cc = compare(result(1), OUTCOMES, cut)
    assert cc["end_ns"] == 1_706_000
    assert cc["warnings"][0] == "it covers 706.0 us of the run on CPU 1: only that is compared"


def test_a_cpu_without_events_is_said_and_left_out():
    cc = compare(result(1, 2), OUTCOMES, SLICES)
    assert cc["cpus"] == [1, 2]
    assert cc["warnings"][0] == "no scheduler events on CPU 2: not compared there"


@pytest.mark.parametrize("res,slices,why", [
    (result(2), SLICES, "no scheduler events on CPU 2"),
    (result(1), [(1, 5, 5, "x", 10, 20), (1, 5, 5, "x", 20, 30)],
     "it does not cover the run on CPU 1 (recorded at another time?)"),
    ({"runs": [{"cpu": None, "start_mono_ns": 1}, {"cpu": 1}]}, SLICES,
     "the result has no run on a pinned CPU"),
])
def test_nothing_to_compare(res, slices, why):
    with pytest.raises(UsageError) as e:
        compare(res, [], slices, sched_name="x/sched.data")
    assert str(e.value) == ("x/sched.data: nothing to compare: %s; record it with 'jtr run "
                            "--cross-check'" % why)


def test_runs_of_one_cpu_make_one_window_with_the_highest_threshold():
    res = {"runs": [{"cpu": 1, "start_mono_ns": LO, "end_mono_ns": 1_500_000},
                    {"cpu": 1, "start_mono_ns": 1_400_000, "end_mono_ns": HI,
                     "outliers": {"threshold_ns": 3000}}]}
    cc = compare(res, [], SLICES)
    assert (cc["start_ns"], cc["end_ns"], cc["min_ns"]) == (LO, HI, 3000)


def test_examples_and_tasks_are_capped():
    """A task only timehist shows in 30 outliers: 20 examples, the first ones."""
    outs, sl = [], [(1, 100, 100, "jtr-gap", 900_000, 1_000_000)]
    for i in range(30):
        t = LO + 10_000 + i * 20_000
        outs.append((1, t, 10_000, [(TICK, "local timer", 10_000)], [], ()))
        sl += [(1, 100, 100, "jtr-gap", sl[-1][5], t), (1, 1000 + i, 1000 + i, "t", t, t + 5000)]
    sl.append((1, 100, 100, "jtr-gap", sl[-1][5], HI))
    cc = compare(result(1), outs, sl)
    th = cc["timehist_only"]
    assert th["count"] == 30 and len(th["examples"]) == len(th["tasks"]) == EXAMPLES
    assert [x["tid"] for x in th["examples"]] == list(range(1000, 1020))
