# SPDX-License-Identifier: GPL-2.0-only
"""drivers.gates: a failed gate names the causes of its own outliers (those
beyond the limit on its CPU, or all of its CPU's), charged by the attribution
over an event log written here."""
import json

import pytest

from jtrpy.drivers.attribute import attribute_into
from jtrpy.drivers.gates import add_causes, conclude, judge
from jtrpy.drivers.run import Job
from jtrpy.errors import EXIT_FAILED, EXIT_INTERRUPTED
from jtrpy.results import gates
from jtrpy.results.result import Result
from jtrpy.trace import events as E

from ..synthetic import make_result, make_run

T0 = 1_000_000_000_000
GAP = 812
LOCAL_TIMER = 0


def ev(ts, typ, a=0, b=0, raw=None, cpu=1, pid=GAP, flags=0):
    return (ts, pid, cpu, typ, flags, a, b, raw)


def preempted(ts, length, task, cpu):
    """The probe (jtr-gap) switched out for @task=(comm, pid, prio) for @length."""
    me, (comm, pid, prio) = ("jtr-gap", GAP, 120), task
    return [ev(ts, E.SWITCH, GAP | pid << 32, 120 | prio << 16, (me[0], comm), cpu=cpu,
               flags=1),
            ev(ts + length, E.SWITCH, pid | GAP << 32, prio | 120 << 16 | 1 << 32,
               (comm, me[0]), cpu=cpu, pid=pid)]


def tick(ts, cpu):
    return [ev(ts, E.VEC_ENTRY, 236, LOCAL_TIMER, cpu=cpu),
            ev(ts + 8000, E.VEC_EXIT, 236, LOCAL_TIMER, cpu=cpu)]


# (cpu, start, length): CPU 1 a 204 us preemption by fifo-spin, a 10 us tick and
# 30 us of nothing; CPU 2 a 120 us preemption by other-spin
S = T0 + 10_000_000
OUTLIERS = [(1, S, 204_000), (1, S + 1_000_000, 10_000), (1, S + 2_000_000, 30_000),
            (2, S + 3_000_000, 120_000)]
EVENTS = (preempted(S + 2000, 200_000, ("fifo-spin", 4242, 9), 1) +
          tick(S + 1_000_500, 1) +
          preempted(S + 3_002_000, 116_000, ("other-spin", 4343, 9), 2))


def gap_run(cpu, outliers, threshold_ns=1000):
    lengths = [length for c, _, length in outliers if c == cpu]
    dur = 1_000_000_000
    return {"name": "cpu%d" % cpu, "cpu": cpu, "duration_ns": dur, "start_mono_ns": T0,
            "end_mono_ns": T0 + dur, "samples": 40_000_000, "min_ns": 20,
            "max_ns": max(lengths), "percentiles_ns": {"50": 20},
            "outliers": {"threshold_ns": threshold_ns, "count": len(lengths),
                         "per_s": float(len(lengths)), "logged": len(lengths), "dropped": 0,
                         "log": "outliers.csv", "total_ns": sum(lengths),
                         "lost_ns": sum(x - 20 for x in lengths)}}


def folder(tmp_path, threshold_ns=1000, attribute=True):
    """A traced two-CPU gap result in @tmp_path, attributed as jtr run does."""
    with open(tmp_path / "outliers.csv", "w") as f:
        f.write("cpu,start_ns,length_ns\n")
        f.writelines("%d,%d,%d\n" % o for o in OUTLIERS)
    doc = {"format": "jtr-result/1", "tool": "gap", "host": {"hostname": "test"},
           "partial": False, "warnings": [],
           "runs": [gap_run(c, OUTLIERS, threshold_ns) for c in (1, 2)],
           "files": {"outliers": "outliers.csv"}}
    (tmp_path / "result.json").write_text(json.dumps(doc))
    r = Result(doc, str(tmp_path / "result.json"))
    if attribute:
        E.write_events(str(tmp_path), EVENTS, T0, T0 + 1_000_000_000,
                       meta={"cpus": [1, 2], "backend": "ebpf"})
        attribute_into(r)
    return r


def names(case):
    return [(c["category"], c["name"], c["count"], c["total_ns"]) for c in case["causes"]]


@pytest.fixture
def judged(tmp_path):
    r = folder(tmp_path)
    cases = gates.check(r, max_latency_ns=50_000, max_lost_pct=0.001)
    add_causes(r, cases)
    return r, {(c["gate"], c["cpu"]): c for c in cases}


def test_latency_names_the_outliers_beyond_the_limit_on_its_cpu(judged):
    r, cases = judged
    lat1, lat2 = cases["max-latency", 1], cases["max-latency", 2]
    assert not lat1["passed"] and lat1["beyond"] == 1
    # the tick and the 30 us of nothing on CPU 1 are within the limit, CPU 2's
    # preemption is another CPU's
    assert names(lat1) == [("task preemption", "fifo-spin", 1, 204_000)]
    assert lat1["causes"][0]["share"] == 1.0
    assert "fifo-spin" in lat1["causes"][0]["example_chain"]
    assert names(lat2) == [("task preemption", "other-spin", 1, 120_000)]
    assert "note" not in lat1


def test_lost_names_every_outlier_of_its_cpu_most_time_first(judged):
    r, cases = judged
    lost1 = cases["max-lost", 1]
    assert not lost1["passed"] and lost1["outliers"] == 3
    assert [n[:2] for n in names(lost1)] == [
        ("task preemption", "fifo-spin"),
        ("no kernel event", "hypervisor, SMI or hardware"), ("timer tick", "local timer")]
    assert sum(c["total_ns"] for c in lost1["causes"]) == 244_000
    # the whole run's table charges the same outliers to the same causes
    whole = {(c["category"], c["name"]): c["total_ns"] for c in r["attribution"]["causes"]}
    for c in lost1["causes"]:
        assert whole[c["category"], c["name"]] == c["total_ns"]


def test_a_passed_case_gets_no_causes(tmp_path):
    r = folder(tmp_path)
    cases = gates.check(r, max_latency_ns=300_000)
    add_causes(r, cases)
    assert all(c["passed"] and "causes" not in c and "causes_missing" not in c for c in cases)


def test_without_an_attribution_the_causes_are_not_measured(tmp_path):
    r = folder(tmp_path, attribute=False)
    cases = gates.check(r, max_latency_ns=50_000)
    add_causes(r, cases, why="tracing was switched off (--no-trace)")
    for c in cases:
        assert c["causes_missing"].startswith(
            "not measured: tracing was switched off (--no-trace); jtr run as root")
        assert "without --no-trace" in c["causes_missing"] and "causes" not in c


def test_a_limit_below_the_threshold_says_what_the_log_holds(tmp_path):
    r = folder(tmp_path, threshold_ns=100_000)
    cases = gates.check(r, max_latency_ns=50_000)
    add_causes(r, cases)
    lat1 = cases[0]
    assert lat1["beyond"] == 1
    assert "the threshold (100.0 us) only" in lat1["note"]
    assert "give --threshold 50us to log and attribute them all" in lat1["note"]


def test_send_judges_its_send_runs_outliers_only(tmp_path):
    """jtr send: the send runs and the null runs take turns on one CPU; the gate
    judges the send call, so a long outlier of a null run is not among the
    outliers beyond the limit."""
    send_at, null_at = S, S + 3_000_000
    outliers = [(1, send_at, 204_000), (1, null_at, 120_000)]
    with open(tmp_path / "outliers.csv", "w") as f:
        f.write("cpu,start_ns,length_ns\n")
        f.writelines("%d,%d,%d\n" % o for o in outliers)
    runs = []
    for name, kind, t0, out in (("send_1", "send", T0, outliers[:1]),
                                ("null_1", "null", S + 2_500_000, outliers[1:])):
        run = gap_run(1, [(1, 0, x[2]) for x in out])
        run.update(name=name, kind=kind, start_mono_ns=t0,
                   duration_ns=S + 2_500_000 - T0 if kind == "send" else 500_000_000)
        runs.append(run)
    doc = {"format": "jtr-result/1", "tool": "send", "host": {"hostname": "test"},
           "partial": False, "warnings": [], "runs": runs}
    (tmp_path / "result.json").write_text(json.dumps(doc))
    r = Result(doc, str(tmp_path / "result.json"))
    E.write_events(str(tmp_path), preempted(send_at + 2000, 200_000, ("fifo-spin", 4242, 9), 1) +
                   preempted(null_at + 2000, 116_000, ("other-spin", 4343, 9), 1),
                   T0, T0 + 1_000_000_000, meta={"cpus": [1], "backend": "ebpf"})
    attribute_into(r)
    assert r["attribution"]["by_kind"]["null"]["outliers"]["count"] == 1
    [lat, lost] = gates.check(r, max_latency_ns=50_000, max_lost_pct=0)
    add_causes(r, [lat, lost])
    assert lat["value"] == 204_000 and lat["beyond"] == 1
    assert names(lat) == [("task preemption", "fifo-spin", 1, 204_000)]
    assert lost["outliers"] == 1 and [n[1] for n in names(lost)] == [
        "fifo-spin"]


def test_judge_keeps_the_section_in_the_document_and_writes_nothing(tmp_path):
    """judge: the cases with their causes in the document's "gates" section,
    result.json untouched (the job saves once); a probe alone says how to get
    the causes in its own words; no limit, no section."""
    r = folder(tmp_path, attribute=False)
    before = (tmp_path / "result.json").read_bytes()
    cases = judge(r, max_latency_ns=50_000, why="jtr gap runs no tracer",
                  how="'jtr run gap ... --max-latency 50us' (as root) names them")
    assert (tmp_path / "result.json").read_bytes() == before
    assert r["gates"]["cases"] == cases and r["gates"]["passed"] is False
    assert r["gates"]["quantity"] == "gap" and r["gates"]["limits"] == {
        "max_latency_ns": 50_000, "max_lost_pct": None}
    assert [c["causes_missing"] for c in cases] == [
        "not measured: jtr gap runs no tracer; 'jtr run gap ... --max-latency 50us' (as "
        "root) names them"] * 2
    del r["gates"]
    assert judge(r) == [] and "gates" not in r


# --- conclude: the JUnit report and the exit status of a gated probe's job ---

def job_of(result=None, cases=(), rc=0, interrupted=False):
    job = Job()
    job.result, job.cases, job.rc, job.interrupted = result, list(cases), rc, interrupted
    return job


def judged_result(limit_ns):
    r = Result(make_result(make_run([40] * 1000 + [1_250_000], cpu=1)), "/tmp/x/result.json")
    return r, gates.check(r, max_latency_ns=limit_ns)


def test_conclude_writes_the_cases_and_exits_by_them(tmp_path):
    for limit, rc, word in ((100_000, EXIT_FAILED, "<failure"), (2_000_000, 0, "<testcase")):
        r, cases = judged_result(limit)
        junit = tmp_path / ("%d.xml" % limit)
        assert conclude(job_of(r, cases), str(junit), "jtr run", "gap", 1795873690,
                        "jtr run --max-latency x", (limit, None)) == rc
        text = junit.read_text()
        assert word in text and 'name="max-latency cpu 1"' in text
        assert ("<failure" in text) == (rc != 0)


def test_conclude_without_a_result_or_stopped(tmp_path):
    junit = tmp_path / "j.xml"
    # bad input to the probe did nothing: no report, its own status
    assert conclude(job_of(rc=2), str(junit), "jtr", "gap", 0, "jtr gap", (1, None)) == 2
    assert not junit.exists()
    # a probe that failed otherwise: an error suite that says so
    assert conclude(job_of(rc=1), str(junit), "jtr", "wake", 0, "jtr wake", (1, None)) == 1
    assert "jtr wake wrote no result (exit 1)" in junit.read_text()
    # stopped: the interrupted status, whatever the gates say; no report unasked
    r, cases = judged_result(100_000)
    assert conclude(job_of(r, cases, interrupted=True), None, "jtr", "gap", 0, "jtr gap",
                    (100_000, None)) == EXIT_INTERRUPTED
