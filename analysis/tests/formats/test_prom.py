# SPDX-License-Identifier: GPL-2.0-only
"""formats.prom: a result's headline numbers as Prometheus samples (the units
converted to seconds and ratios here by hand), the causes' labels without pids
and equal ones added, the label text escaped, and of results with the same
labels only the newest kept, said in a note."""
import pytest

from jtrpy.formats import prom as P

END = "2026-01-01T00:00:00.000Z"        # 1767225600 s since the epoch


def gap_run(cpu=1, name="cpu1", **kw):
    r = {"name": name, "cpu": cpu, "duration_ns": 2 * 10**9, "samples": 100, "max_ns": 5000,
         "percentiles_ns": {"50": 30, "99.99": 2500},
         "outliers": {"threshold_ns": 1000, "count": 4, "lost_ns": 10_000, "total_ns": 9000}}
    r.update(kw)
    return r


def result(*runs, tool="gap", host="h1", started=END, **kw):
    r = {"tool": tool, "host": {"hostname": host}, "started_at": started, "ended_at": END,
         "runs": list(runs) or [gap_run()]}
    r.update(kw)
    return r


def samples(res, top=5):
    return {k: v for k, v in P.prom_samples(res, top).items() if v}


def test_cause_labels_leave_the_pid_out():
    assert P.cause_label("kworker/1:1 (pid 27369, prio 120)") == "kworker/1:1"
    assert P.cause_label("bash (pid 9)") == "bash"
    assert P.cause_label("36 virtio1-req.0") == "36 virtio1-req.0"
    assert P.cause_label(None) == ""


@pytest.mark.parametrize("key,q", [("50", "0.5"), ("90", "0.9"), ("99.99", "0.9999"),
                                   ("99.999", "0.99999")])
def test_quantiles_are_fractions(key, q):
    assert P._quantile(key) == q


def test_label_text_and_numbers():
    assert P.labels_text({"a": 'x"y', "b": "c\\d\ne"}) == '{a="x\\"y",b="c\\\\d\\ne"}'
    assert P.labels_text({}) == ""
    assert P._num(5) == "5" and P._num(0.25) == "0.25" and P._num(1e-06) == "1e-06"
    assert [P._num(v) for v in (float("inf"), -float("inf"), float("nan"))] == \
        ["+Inf", "-Inf", "NaN"]


def test_exposition_writes_help_type_and_samples_in_order():
    """One writer for export --prom and jtr watch: HELP (escaped), TYPE, then the
    samples as given, a label set given as a dict or as text labels_text made."""
    txt = P.exposition([("a_total", "counter", "one\\two\nthree",
                         [("a_total", {"x": "1"}, 3), ("a_total", '{x="2"}', 0.5)]),
                        ("b", "gauge", "none yet", [])])
    assert txt == ('# HELP a_total one\\\\two\\nthree\n# TYPE a_total counter\n'
                   'a_total{x="1"} 3\na_total{x="2"} 0.5\n# HELP b none yet\n# TYPE b gauge\n')


def test_a_gap_run_in_seconds_and_ratios():
    s = samples(result(partial=True))
    lab = {"host": "h1", "tool": "gap", "profile": "none", "cpu": "1", "quantity": "gap"}
    assert s["jtr_loop_seconds"] == [(dict(lab, quantile="0.5"), 30e-9),
                                     (dict(lab, quantile="0.9999"), 2500e-9)]
    assert s["jtr_loop_max_seconds"] == [(lab, 5e-6)]
    assert s["jtr_time_lost_ratio"] == [(lab, pytest.approx(10_000 / 2e9))]
    assert s["jtr_outliers_per_second"] == [(lab, pytest.approx(2.0))]
    assert s["jtr_outlier_threshold_seconds"] == [(lab, 1e-6)]
    assert s["jtr_run_duration_seconds"] == [(lab, 2.0)]
    assert s["jtr_run_end_timestamp_seconds"] == [(lab, 1767225600.0)]
    assert s["jtr_run_valid"] == [(lab, 1)] and s["jtr_run_partial"] == [(lab, 1)]
    assert "jtr_excess_latency_seconds_per_second" not in s


def test_a_latency_probe_has_excess_not_time_lost():
    res = result(gap_run(name="rtt_from_intended", cpu=2), tool="ping",
                 transport={"sent": 100, "late_sends": 50})
    s = samples(res)
    lab = {"host": "h1", "tool": "ping", "profile": "none", "cpu": "2",
           "quantity": "rtt_from_intended"}
    # 4 outliers of 9000 ns in all, 1000 ns each of threshold: 5000 ns past it in 2 s
    assert s["jtr_excess_latency_seconds_per_second"] == [(lab, pytest.approx(2500e-9))]
    assert "jtr_time_lost_ratio" not in s
    assert s["jtr_run_valid"] == [(lab, 0)]        # half its sends were late


def test_runs_sharing_a_cpu_are_told_apart_by_name():
    res = result(gap_run(name="null_1", cpu=1), gap_run(name="null_2", cpu=1), tool="null",
                 host="h2")
    res["host"]["tuning_profile"] = "jtr-latency"
    labs = [lab for lab, _ in samples(res)["jtr_loop_max_seconds"]]
    assert [(x["run"], x["profile"], x["quantity"]) for x in labs] == [
        ("null_1", "jtr-latency", "null"), ("null_2", "jtr-latency", "null")]


def test_causes_added_by_label_largest_first():
    att = {"outliers": {"duration_ns": 4 * 10**9, "cpus": [1, 2]}, "causes": [
        {"category": "task preemption", "name": "kworker/1:1 (pid 5, prio 120)",
         "share": 0.25, "total_ns": 2000},
        {"category": "timer tick", "name": "local timer", "share": 0.3, "total_ns": 3000},
        {"category": "task preemption", "name": "kworker/1:1 (pid 6)", "share": 0.2,
         "total_ns": 1600},
        {"category": "hardirq", "name": "36 virtio", "share": 0.1, "total_ns": 100}]}
    res = result(attribution=att)
    got = P.causes_of(res, 2)
    assert [(c, n, round(s, 6)) for c, n, s, _ in got] == [
        ("task preemption", "kworker/1:1", 0.45), ("timer tick", "local timer", 0.3)]
    assert [x[3] for x in got] == [pytest.approx(3600 / 4e9), pytest.approx(3000 / 4e9)]
    assert P.causes_of(res, 0) == [] and P.causes_of(result(), 5) == []
    # no duration in the attribution: the runs'
    del att["outliers"]["duration_ns"]
    assert P.causes_of(res, 1)[0][3] == pytest.approx(3600 / 2e9)
    s = samples(res, top=1)
    assert s["jtr_cause_share_ratio"] == [({"host": "h1", "tool": "gap", "profile": "none",
                                            "cpu": "1-2", "category": "task preemption",
                                            "cause": "kworker/1:1"}, pytest.approx(0.45))]


def test_textfile_keeps_the_newest_of_equal_labels():
    old = result(started="2026-01-01T00:00:00Z")
    new = result(gap_run(max_ns=7000), started="2026-01-02T00:00:00Z")
    other = result(host="h2", started="2025-12-01T00:00:00Z")
    text, notes = P.prom_text([old, new, other], ["old", "new", "other"], 5)
    assert notes == ["old: left out: new is newer and has the same labels (host, cpu, tool, "
                     "profile)"]
    lines = text.splitlines()
    maxes = [x for x in lines if x.startswith("jtr_loop_max_seconds{")]
    assert maxes == ['jtr_loop_max_seconds{host="h1",tool="gap",profile="none",cpu="1",'
                     'quantity="gap"} 7e-06',
                     'jtr_loop_max_seconds{host="h2",tool="gap",profile="none",cpu="1",'
                     'quantity="gap"} 5e-06']
    i = lines.index("# TYPE jtr_loop_max_seconds gauge")
    assert lines[i - 1].startswith("# HELP jtr_loop_max_seconds ") and lines[i + 1] == maxes[0]
    # a family with no sample has no HELP either
    assert "jtr_cause_share_ratio" not in text and text.endswith("\n")
    assert P.prom_text([], [], 5) == ("\n", [])
