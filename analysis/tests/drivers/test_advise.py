# SPDX-License-Identifier: GPL-2.0-only
"""drivers.advise: the evidence of a result (its causes table, or each outlier
charged again from its event log, a tick that ran the watchdog's hrtimer
charged to the watchdog), jtr advise's job up to the advice (an invalid result
refused, the profile cut and written, --prove's checks and folder), the probe
and options --prove measures with, --prove's lines (its own, then jtr ab's
through the same callbacks), the compound-Poisson bootstrap of a saving
and each remedy's outcome, worked out here from counts; the machine's facts are
given, never read."""
import json
import os
import random
import signal

import pytest

from jtrpy.drivers import advise as D
from jtrpy.errors import UsageError
from jtrpy.results.result import load_result
from jtrpy.system import signals
from jtrpy.trace import causes as C
from jtrpy.trace import events as E
from jtrpy.tune import advice as A

from ..synthetic import loops, make_result, make_run

FACTS = {"sysctl": {}, "thp": "madvise", "ksm": "0", "dma_latency": None, "nohz_full": False,
         "cmdline": (False, "no grub here"), "workqueue_cpumask": True, "online": [0, 1, 2, 3]}
CAUSES = [
    {"category": C.TICK, "name": "local timer", "total_ns": 6000, "primary_count": 3,
     "count": 3, "share": 0.6},
    {"category": C.TASK, "name": "kworker/1:1", "total_ns": 3000, "primary_count": 2,
     "count": 2, "share": 0.3, "tasks": [{"pid": 41}, {"pid": 42}, "x"]},
    {"category": C.WAKE_PATH, "name": "return to user space", "total_ns": 1000,
     "primary_count": 1, "count": 1, "share": 0.1},
]


def write(folder, causes=CAUSES, duration_ns=2 * 10**9, **kw):
    run = dict(make_run(loops(1, n=2000), cpu=1), duration_ns=duration_ns)
    doc = make_result(run, attribution={"causes": causes, "outliers": {"count": 6}})
    doc["command"] = ["jtr gap", "-c", "1", "-d", "2s", "-o", str(folder)]
    doc.update(kw)
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(doc))
    return load_result(str(folder))


def test_evidence_from_the_causes_table(tmp_path):
    e = D.Evidence(write(tmp_path / "r"))
    assert e.items == [("tick", C.TICK, "local timer", 6000, None),
                       ("percpu_work", C.TASK, "kworker/1:1", 3000, None),
                       (None, C.WAKE_PATH, "return to user space", 1000, None)]
    assert (e.outliers, e.outlier_ns, e.cpus, e.duration_ns) == (6, 10_000, [1], 2 * 10**9)
    assert e.charges() == {"tick": {(C.TICK, "local timer"): [6000, 1]},
                           "percpu_work": {(C.TASK, "kworker/1:1"): [3000, 1]},
                           None: {(C.WAKE_PATH, "return to user space"): [1000, 1]}}
    assert e.per_outlier("tick") == [6000] and e.per_outlier("irq") == []
    assert e.task_pids() == {"kworker/1:1": [41, 42]}
    assert D._unexplained(e) == [{"category": C.WAKE_PATH, "name": "return to user space",
                                  "ns": 1000}]


def test_evidence_of_send_and_null_runs_is_over_all_of_them(tmp_path):
    """jtr send's three pairs on one CPU: the outliers charged are every run's, so
    the time they are over is every run's (1.8 s, not the send runs' 0.9 s nor
    one run's 0.3 s: a saving of 944 ms/s once), and so is the time lost."""
    runs = [dict(make_run(loops(k + 1, n=2000), cpu=1), kind=kind, duration_ns=3 * 10**8)
            for k in range(3) for kind in ("send", "null")]
    doc = make_result(*runs, attribution={"causes": CAUSES, "outliers": {"count": 6}})
    doc["tool"] = "send"
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "result.json").write_text(json.dumps(doc))
    e = D.Evidence(load_result(str(tmp_path / "r")))
    assert e.duration_ns == 18 * 10**8
    lost = sum(r["outliers"]["lost_ns"] for r in runs)
    assert e.lost_pct == pytest.approx(100.0 * lost / (18 * 10**8))


def test_per_outlier_without_a_log_is_one_charge_a_cause(tmp_path):
    """Without an event log each cause stands for its outliers: two causes of one
    rule are two charges, not one."""
    causes = [dict(CAUSES[1], name=n, total_ns=ns) for n, ns in (("bash", 700), ("cron", 300))]
    e = D.Evidence(write(tmp_path / "r", causes=causes))
    assert e.per_outlier("tasks") == [700, 300]


def test_no_attribution_no_advice(tmp_path):
    r = write(tmp_path / "r")
    del r["attribution"]
    with pytest.raises(UsageError, match="has no attribution .*run jtr attribute on it"):
        D.Evidence(r)
    r["attribution"] = {"causes": [], "outliers": {}}
    with pytest.raises(UsageError):
        D.Evidence(r)


T0 = 10**12
WATCHDOG, TICK_FN = 0xffffffff81000010, 0xffffffff81000020


def tick(ts, fn):
    return [(ts, 5, 1, E.VEC_ENTRY, 0, 236, 0, None),
            (ts + 500, 5, 1, E.HRTIMER_ENTRY, 0, 0xffff0001, fn, None),
            (ts + 2500, 5, 1, E.HRTIMER_EXIT, 0, 0xffff0001, 0, None),
            (ts + 3000, 5, 1, E.VEC_EXIT, 0, 236, 0, None)]


def test_evidence_from_the_event_log_charges_the_watchdog(tmp_path):
    """Two outliers of 10 us, each a tick: the one whose window holds the
    watchdog's hrtimer is the watchdog's, the other the tick's."""
    d = tmp_path / "r"
    run = {"cpu": 1, "start_mono_ns": T0, "end_mono_ns": T0 + 10**9, "duration_ns": 10**9,
           "min_ns": 30, "max_ns": 10_000, "percentiles_ns": {"50": 30},
           "outliers": {"threshold_ns": 1000, "count": 2, "log": "outliers.csv"}}
    doc = make_result(run, attribution={"causes": [], "outliers": {"count": 2}})
    d.mkdir()
    (d / "result.json").write_text(json.dumps(doc))
    (d / "outliers.csv").write_text("cpu,start_ns,length_ns\n1,%d,10000\n1,%d,10000\n"
                                    % (T0 + 10**6, T0 + 2 * 10**6))
    E.write_events(str(d), tick(T0 + 10**6 + 500, WATCHDOG) + tick(T0 + 2 * 10**6 + 500, TICK_FN),
                   T0, T0 + 10**9, meta={"cpus": [1], "backend": "ebpf", "symbols": {
                       "0x%x" % WATCHDOG: C.WATCHDOG_FN, "0x%x" % TICK_FN: "tick_sched_timer"}})
    e = D.Evidence(load_result(str(d)))
    assert e.outliers == 2 and e.throttled == 0
    assert sorted((rid, cat, name, n) for rid, cat, name, _, n in e.items) == [
        ("tick", C.TICK, "local timer", 1), ("watchdog", C.TICK, C.WATCHDOG_FN, 0)]
    assert e.outlier_ns == 20_000


def test_overlapping_outliers_are_scaled_to_the_time_once():
    e = D.Evidence.__new__(D.Evidence)
    e.items = [("tasks", C.TASK, "a", 600, 0), ("tasks", C.TASK, "a", 600, 1),
               ("tick", C.TICK, "local timer", 100, 1)]
    att = {"outliers": {"summed_ns": 1300},
           "causes": [{"category": C.TASK, "name": "a", "total_ns": 900},
                      {"category": C.TICK, "name": "local timer", "total_ns": 100}]}
    e._once_per_instant(att)
    assert [i[3] for i in e.items] == [450, 450, 100]       # 600 * 900 // 1200
    e._once_per_instant({"outliers": {}, "causes": []})      # not overlapping: as it is
    assert [i[3] for i in e.items] == [450, 450, 100]


def test_within():
    assert D._within([10, 20, 30], 15, 20) and D._within([10], 10, 10)
    assert not D._within([10, 30], 11, 29) and not D._within([], 0, 99)
    assert not D._within(None, 0, 99)


def test_the_advice_on_given_facts(tmp_path, monkeypatch):
    monkeypatch.setattr(A, "facts", lambda: dict(FACTS))
    monkeypatch.setattr(A, "find_tasks", lambda comm, pids, cpus: [])
    doc, evd = D.advise_result(write(tmp_path / "r"))
    assert doc["format"] == "jtr-advise/1" and doc["result"] == str(tmp_path / "r")
    assert (doc["outliers"], doc["outlier_ns"], doc["cpus"]) == (6, 10_000, [1])
    assert doc["base_profile"] == "jtr-baseline" and doc["throttled_outliers"] == 0
    assert {r["rule"] for r in doc["remedies"]} == {"tick", "percpu_work"}
    assert doc["unexplained"] == D._unexplained(evd)
    applicable = [r for r in doc["remedies"] if r["applicable"]]
    assert (doc["profile"] is None) == (not applicable)
    assert D.chosen(doc) == applicable and D.chosen(doc, 1) == applicable[:1]
    if not applicable:
        said = []
        with pytest.raises(UsageError, match="^nothing to prove: no remedy for "):
            D.prove(doc, None, {"top": None}, str(tmp_path / "out"), said.append, said.append)
        assert said == []


TASK = dict(CAUSES[1], name="bash", tasks=[{"pid": 7}])     # the "tasks" rule: applicable
JOB = {"accept_invalid": False, "prove": False, "top": None, "profile_dir": None,
       "output": None}


@pytest.fixture
def facts(monkeypatch, tmp_path):
    monkeypatch.setattr(A, "facts", lambda: dict(FACTS))
    monkeypatch.setattr(A, "find_tasks", lambda comm, pids, cpus: [])
    monkeypatch.setenv("JTR_STATE_DIR", str(tmp_path / "state"))


def test_advise_job(facts, tmp_path):
    r = write(tmp_path / "r", causes=CAUSES + [TASK])
    doc, result, outdir = D.advise_job(r.folder, JOB)
    assert doc == D.advise_result(r)[0] and result.folder == r.folder and outdir is None
    d = tmp_path / "p"
    doc, _, _ = D.advise_job(r.folder, dict(JOB, profile_dir=str(d), top=1))
    assert (d / "tuned.conf").read_text() == doc["profile"] == D.profile_of(doc, 1)
    with pytest.raises(UsageError, match="^--profile-dir %s: it holds a tuned.conf" % d):
        D.advise_job(r.folder, dict(JOB, profile_dir=str(d)))
    none = write(tmp_path / "n", causes=CAUSES[:1])
    with pytest.raises(UsageError, match="^--profile-dir: no remedy for %s " % none.folder):
        D.advise_job(none.folder, dict(JOB, profile_dir=str(tmp_path / "q")))
    assert not (tmp_path / "q").exists()


def test_advise_job_on_an_invalid_result(facts, tmp_path):
    r = write(tmp_path / "r", causes=[TASK], tool="ping",
              transport={"sent": 100, "late_sends": 50})
    with pytest.raises(UsageError, match="^%s: no remedy from it: not a valid measurement"
                       % r.folder):
        D.advise_job(r.folder, JOB)
    assert D.advise_job(r.folder, dict(JOB, accept_invalid=True))[0]["tool"] == "ping"


def test_advise_job_before_prove(facts, tmp_path, monkeypatch):
    r = write(tmp_path / "r", causes=CAUSES + [TASK])
    out = tmp_path / "out"
    monkeypatch.setattr("jtrpy.tune.engine.os.geteuid", lambda: 1000)
    with pytest.raises(UsageError, match="run it as root"):
        D.advise_job(r.folder, dict(JOB, prove=True, output=str(out)))
    monkeypatch.setattr("jtrpy.tune.engine.os.geteuid", lambda: 0)
    monkeypatch.setattr(D.E, "active_state", lambda: {"profile": "jtr-latency"})
    with pytest.raises(UsageError, match="^profile jtr-latency is applied: revert it first"):
        D.advise_job(r.folder, dict(JOB, prove=True, output=str(out)))
    assert not out.exists()
    monkeypatch.setattr(D.E, "active_state", lambda: None)
    doc, result, outdir = D.advise_job(r.folder, dict(JOB, prove=True, output=str(out)))
    assert outdir == str(out) and result.folder == r.folder
    assert json.loads((out / "advice.json").read_text()) == json.loads(json.dumps(doc))


def test_prove_says_what_it_proves_then_hands_its_callbacks_to_jtr_ab(facts, tmp_path,
                                                                      monkeypatch):
    r = write(tmp_path / "r", causes=CAUSES + [TASK])
    monkeypatch.setattr("jtrpy.tune.engine.os.geteuid", lambda: 0)
    monkeypatch.setattr(D.E, "active_state", lambda: None)
    doc, result, outdir = D.advise_job(r.folder, dict(JOB, prove=True,
                                                      output=str(tmp_path / "out")))
    got = []

    def experiment(o, profile, cpus, abdir, say, note):
        say("jtr ab's line")
        note("jtr ab's notice")
        return 0
    monkeypatch.setattr(D, "experiment", experiment)
    rc, proof = D.prove(doc, result, {"top": None, "repeat": 1, "duration_ns": None,
                                      "backend": "auto"}, outdir,
                        lambda line: got.append(("out", line)),
                        lambda line: got.append(("err", line)))
    n = len(D.chosen(doc))
    assert rc == 0 and proof["exit_status"] == 0 and len(proof["remedies"]) == n
    assert got == [("out", "proving %d remed%s of %s with jtr ab (profile %s/profile/"
                           "jtr-advised/tuned.conf)" % (n, "y" if n == 1 else "ies", r.folder,
                                                         outdir)),
                   ("out", "jtr ab's line"), ("err", "jtr ab's notice")]


def test_a_late_stop_keeps_prove_json(facts, tmp_path, monkeypatch):
    """A stop that comes after jtr ab's runs, while the savings are worked out,
    still gives prove.json (it raised KeyboardInterrupt there and the proof of
    two measured runs was lost): exit 130, "interrupted" in the proof."""
    r = write(tmp_path / "r", causes=CAUSES + [TASK])
    monkeypatch.setattr("jtrpy.tune.engine.os.geteuid", lambda: 0)
    monkeypatch.setattr(D.E, "active_state", lambda: None)
    doc, result, outdir = D.advise_job(r.folder, dict(JOB, prove=True,
                                                      output=str(tmp_path / "out")))
    monkeypatch.setattr(D, "experiment", lambda *a: 0)
    real = D.measure_savings

    def stopped_while_measuring(*a):
        signals._on_signal(signal.SIGTERM, None)    # the handler, as the signal runs it
        return real(*a)

    monkeypatch.setattr(D, "measure_savings", stopped_while_measuring)
    signals.reset()
    try:
        rc, proof = D.prove(doc, result, {"top": None, "repeat": 1, "duration_ns": None,
                                          "backend": "auto"}, outdir, print, print)
    finally:
        signals.reset()
    assert rc == 130 and proof["exit_status"] == 130 and proof["interrupted"] is True
    saved = json.loads(open(os.path.join(outdir, "prove.json")).read())
    assert saved["interrupted"] is True and saved["remedies"] == proof["remedies"]


@pytest.mark.parametrize("command,want", [
    (["jtr gap", "-c", "1", "-d", "10s", "-o", "out", "--threshold", "2us"],
     ("gap", ["--threshold", "2us"])),
    (["jtr run", "gap", "-c1", "--duration=5s", "--output", "o", "-q"], ("gap", ["-q"])),
    (["jtr ping", "-a", "2", "-d", "5s", "--cpus=3", "-oX", "-r", "1000"],
     ("ping", ["-a", "2", "-d", "5s", "-r", "1000"])),          # only gap's -d is ab's
])
def test_probe_of(command, want):
    res = type("R", (dict,), {"label": "x"})(tool=want[0], command=command)
    assert D.probe_of(res) == want


@pytest.mark.parametrize("tool,command", [("oslat", ["oslat"]), ("gap", [])])
def test_probe_of_a_result_no_probe_made(tool, command):
    res = type("R", (dict,), {"label": "imported"})(tool=tool, command=command)
    with pytest.raises(UsageError, match="^imported was made by %s, not by a probe of jtr "
                                         "run" % tool):
        D.probe_of(res)


@pytest.mark.parametrize("lam", [0, 0.5, 3, 40, 200, 1000])
def test_poisson_draws_have_the_mean_and_variance(lam):
    rng = random.Random(lam)
    xs = [D._poisson(rng, lam) for _ in range(20000)]
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / len(xs)
    assert all(isinstance(x, int) and x >= 0 for x in xs)
    assert abs(mean - lam) <= 0.05 * lam + 0.02
    assert abs(var - lam) <= 0.1 * lam + 0.02


@pytest.mark.parametrize("ci,before,after,word", [
    ([1, 2], 0, 0, "not seen"), ([1, 2], 5, 0, "gone"), ([1, 2], 5, 3, "reduced"),
    ([-2, -1], 5, 9, "grew"), ([-1, 1], 5, 5, "within noise"),
])
def test_outcome(ci, before, after, word):
    assert D._outcome({"ci": ci, "before_count": before}, {"count": after}) == word


@pytest.mark.parametrize("numpy", [True, False])
def test_saving_ci_holds_the_saving(numpy, monkeypatch):
    """100 charges of 1 us a second before, 10 after: 90 us/s saved. Counts are
    Poisson (sd 10 of 100), so the 95 % CI is about +-20 us/s around it."""
    if not numpy:
        monkeypatch.setattr(D, "numpy_or_none", lambda: None)
    a = {"charges": [1000] * 100, "dur_s": 1.0}
    b = {"charges": [1000] * 10, "dur_s": 1.0}
    lo, hi = D._saving_ci(a, b, random.Random(1))
    assert 60_000 < lo < 90_000 < hi < 120_000
    lo, hi = D._saving_ci(a, dict(a, dur_s=1.0), random.Random(2))
    assert lo < 0 < hi
    assert D._saving_ci({"charges": [], "dur_s": 1.0}, {"charges": [], "dur_s": 2.0},
                        random.Random(3)) == [0.0, 0.0]


def test_measure_savings_per_remedy(tmp_path):
    ab = tmp_path / "ab"
    write(ab / "a-1", causes=CAUSES[:1])
    write(ab / "a-2", causes=CAUSES[:1])
    write(ab / "b-1", causes=CAUSES[1:2])
    (ab / "b-2").mkdir()                        # no result: not counted
    (ab / "notes").mkdir()
    doc = {"result": "r"}
    proof = D.measure_savings(doc, [{"rule": "tick", "per_s_ns": 2500.0},
                                    {"rule": "percpu_work", "per_s_ns": 0.0},
                                    {"rule": "irq", "per_s_ns": None}], str(ab))
    assert proof["runs"] == {"a": 2, "b": 1} and proof["format"] == "jtr-advise/1-proof"
    tick, work, irq = proof["remedies"]
    # 6 us lost to the tick in each 2 s baseline run: 3 us/s; none after
    assert (tick["before_per_s_ns"], tick["after_per_s_ns"], tick["saving_per_s_ns"]) == \
        (3000.0, 0.0, 3000.0)
    assert (tick["before_count"], tick["after_count"], tick["outcome"]) == (2, 0, "gone")
    assert tick["predicted_per_s_ns"] == 2500.0
    assert (work["before_per_s_ns"], work["after_per_s_ns"]) == (0.0, 1500.0)
    # one outlier after, none before: a Poisson count of 1 is often 0, no verdict
    assert work["ci"][0] < 0 == work["ci"][1] and work["outcome"] == "within noise"
    assert irq["outcome"] == "not seen"


def _remedy(rule, saving, applicable, boot=(), changes=()):
    return {"rule": rule, "saving_ns": saving, "applicable": applicable, "boot": list(boot),
            "why_not": None if applicable else "needs a reboot", "changes": list(changes),
            "causes": [], "share": None, "per_s_ns": None}


def test_prove_boot_makes_the_boot_remedies_one_bootloader_line(monkeypatch):
    """--prove --boot: the remedies only a boot line lacks become applicable, their
    words one [bootloader] line, each word once; one whose word the kernel cannot
    do (nohz_full without NO_HZ_FULL) stays out, and none where the command line
    cannot change."""
    monkeypatch.setattr(D.E, "can_change_cmdline", lambda: (True, "grub"))
    monkeypatch.setattr(D.E, "has_nohz_full", lambda: True)
    doc = {"remedies": [
        _remedy("vmstat", 10, True, changes=[{"section": "sysctl", "option": "vm.stat_interval",
                                              "value": "10", "comment": ""}]),
        _remedy("tick", 500, False, ["nohz_full=1", "rcu_nocbs=1"]),
        _remedy("percpu_kthread", 20, False, ["isolcpus=domain,managed_irq,1", "rcu_nocbs=1"]),
        _remedy("host", 900, False)]}
    made = D.with_boot_remedies(doc)
    assert [r["rule"] for r in made] == ["tick", "percpu_kthread"]
    assert [r["rule"] for r in doc["remedies"]] == ["tick", "percpu_kthread", "vmstat", "host"]
    line = "+nohz_full=1 rcu_nocbs=1 isolcpus=domain,managed_irq,1"
    assert all(r["changes"][0]["value"] == line and r["changes"][0]["section"] == "bootloader"
               for r in made)
    assert "cmdline_jtr_advised=" + line in D.profile_of(
        dict(doc, base_profile=None, result="r", tool="gap", cpus=[1]))
    monkeypatch.setattr(D.E, "has_nohz_full", lambda: False)
    doc = {"remedies": [_remedy("tick", 500, False, ["nohz_full=1", "rcu_nocbs=1"])]}
    assert D.with_boot_remedies(doc) == [] and not doc["remedies"][0]["applicable"]
    monkeypatch.setattr(D.E, "can_change_cmdline", lambda: (False, "no grub"))
    doc = {"remedies": [_remedy("rcu", 5, False, ["rcu_nocbs=1"])]}
    assert D.with_boot_remedies(doc) == []
