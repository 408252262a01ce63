# SPDX-License-Identifier: GPL-2.0-only
"""drivers.ab: the ABBA order; an experiment's lines, handed to the callbacks
it is given in order (the probe and the tuning stand-ins); the end of an
experiment: what was measured is compared (partial runs too) and ab.json says
how it ended; jtr ab's job: what makes no sense for the probe, an unknown
profile, one applied already or no root refused before anything is applied or
made."""
import json
import os
import types

import pytest

from jtrpy.drivers import ab
from jtrpy.errors import UsageError
from jtrpy.system.cpus import online_cpus
from jtrpy.system.files import write_json

from ..synthetic import loops, make_result, make_run


def test_order_is_abba():
    assert ab.order(1) == ["a", "b"]
    assert ab.order(3) == ["a", "b", "b", "a", "a", "b"]


def _result(folder, seed, partial=False):
    r = make_result(make_run(loops(seed, n=20000), cpu=1))
    r["partial"] = partial
    folder.mkdir()
    write_json(str(folder / "result.json"), r)


def _record(runs):
    return {"format": ab.FORMAT, "profile": "p", "runs": runs, "order": [x["name"] for x in runs],
            "partial": True, "interrupted": False, "compare": None, "verdict": None}


def test_a_partial_run_is_compared(tmp_path):
    _result(tmp_path / "a-1", 1)
    _result(tmp_path / "b-1", 2, partial=True)
    rec = _record([{"name": "a-1", "side": "a", "rc": 0, "result": True, "partial": False},
                   {"name": "b-1", "side": "b", "rc": 130, "result": True, "partial": True}])
    said = []
    ab._finish(str(tmp_path), rec, lambda: True, said.append)
    assert said[:2] == ["", "compared: baseline 1 run, tuned 1 run (1 partial)"]
    assert said[-1] == "results: %s" % tmp_path and said[-2].startswith("verdict: ")
    assert any("was stopped early" in line for line in said)
    assert said[2:-1] == (tmp_path / "compare.txt").read_text().splitlines()
    doc = json.loads((tmp_path / "ab.json").read_text())
    assert doc["interrupted"] is True and doc["compare"] == "compare.json"
    c = json.loads((tmp_path / "compare.json").read_text())
    assert len(c["a"]["results"]) == 1 and len(c["b"]["results"]) == 1


def test_too_few_runs_are_counted_not_hidden(tmp_path):
    _result(tmp_path / "a-1", 1)
    _result(tmp_path / "a-2", 3)
    rec = _record([{"name": "a-1", "side": "a", "rc": 0, "result": True, "partial": False},
                   {"name": "b-1", "side": "b", "rc": -15, "result": False, "partial": True},
                   {"name": "a-2", "side": "a", "rc": 0, "result": True, "partial": False}])
    said = []
    ab._finish(str(tmp_path), rec, lambda: False, said.append)
    assert said == ["jtr ab: not enough runs to compare (baseline 2 runs, tuned 0 runs)",
                    "results: %s" % tmp_path]
    doc = json.loads((tmp_path / "ab.json").read_text())
    assert doc["interrupted"] is False and doc["compare"] is None
    assert not (tmp_path / "compare.json").exists()


def _ping(folder, seed, tail):
    runs = [make_run(loops(seed + k, n=20000, tail=t), cpu=1, name=n) for k, (n, t) in
            enumerate((("rtt_from_intended", tail), ("rtt_from_send", 1.0), ("send_call", 1.0)))]
    folder.mkdir()
    write_json(str(folder / "result.json"), make_result(*runs, tool="ping"))


def test_a_ping_experiment_is_compared_on_one_quantity(tmp_path):
    _ping(tmp_path / "a-1", 1, 1.0)
    _ping(tmp_path / "b-1", 11, 3.0)
    rec = _record([{"name": "a-1", "side": "a", "rc": 0, "result": True, "partial": False},
                   {"name": "b-1", "side": "b", "rc": 0, "result": True, "partial": False}])
    said = []
    ab._finish(str(tmp_path), rec, lambda: False, said.append)
    out = "\n".join(said)
    assert "rtt_from_intended: 1 run, " in out and "verdict: worse" in out
    c = json.loads((tmp_path / "compare.json").read_text())
    assert c["a"]["quantity"] == "rtt_from_intended" and c["a"]["samples"] == 20000
    assert json.loads((tmp_path / "ab.json").read_text())["quantity"] == "rtt_from_intended"
    ab._finish(str(tmp_path), rec, lambda: False, said.append, "send_call")
    assert json.loads((tmp_path / "compare.json").read_text())["a"]["quantity"] == "send_call"


def test_each_run_prints_its_quantity(tmp_path):
    _ping(tmp_path / "p", 1, 1.0)
    r = json.loads((tmp_path / "p" / "result.json").read_text())
    line = ab._figures(r, None)
    assert line.startswith("rtt_from_intended: p99 ")
    assert ab._figures(r, "send_call").startswith("send_call: p99 ")
    assert "lost" in ab._figures(make_result(make_run(loops(1, n=20000))), None)


@pytest.fixture
def stand_ins(monkeypatch, tmp_path):
    """The experiment with its tuning and probe stand-ins: the apply does nothing,
    the revert leaves one setting as it is, each run writes a gap result and has
    a notice; the run named in the list returned asks for a stop as it ends."""
    monkeypatch.setenv("JTR_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(ab, "_now", lambda: "12:00:00")
    monkeypatch.setattr(ab, "_apply", lambda o, cpus, note: None)
    monkeypatch.setattr(ab.E, "tuned_running", lambda: "no tuned daemon here")
    monkeypatch.setattr(ab.E, "read_state", lambda required=True: {
        "status": "applied", "pid": os.getpid()})
    monkeypatch.setattr(ab.E, "revert", lambda st, say: ([("vm.stat_interval", "busy")],
                                                                0))
    stop_after, stopped = [], []
    monkeypatch.setattr(ab.signals, "requested", lambda: bool(stopped))

    def measure(args, **kw):
        d = args[args.index("-o") + 1]
        name = os.path.basename(d)
        _result(tmp_path / "ab" / name, len(os.listdir(tmp_path / "ab")) + 1)
        stopped.extend(n for n in stop_after if n == name)
        return types.SimpleNamespace(rc=0, result=json.loads(open(d + "/result.json").read()),
                                     notices=["a notice of %s" % name], lines=["x"],
                                     why=None, interrupted=bool(stopped))
    monkeypatch.setattr(ab, "measure", measure)
    (tmp_path / "ab").mkdir()
    return stop_after


def experiment(tmp_path):
    """An experiment of one run a side, and its lines: ("out" or "err", line)."""
    got = []
    rc = ab.experiment(dict(settings(duration_ns=10 ** 9), partner_cpu=None),
                       types.SimpleNamespace(name="p"), [], str(tmp_path / "ab"),
                       lambda line: got.append(("out", line)),
                       lambda line: got.append(("err", line)))
    return rc, got


def test_the_experiment_says_its_lines_in_order(stand_ins, tmp_path):
    rc, got = experiment(tmp_path)
    assert rc == 0
    figures = [k for k, (_, line) in enumerate(got) if line.startswith("    gap: p99 ")]
    assert figures == [2, 6]
    table = (tmp_path / "ab" / "compare.txt").read_text().splitlines()
    assert [x for k, x in enumerate(got) if k not in figures] == [
        ("out", "[12:00:00] run 1 of 2: a-1 (baseline)"), ("err", "jtr ab: a notice of a-1"),
        ("out", "[12:00:00] applied p"),
        ("out", "[12:00:00] run 2 of 2: b-1 (p)"), ("err", "jtr ab: a notice of b-1"),
        ("err", "  not restored: vm.stat_interval: busy"), ("out", "[12:00:00] reverted p"),
        ("out", ""), ("out", "compared: baseline 1 run, tuned 1 run")] + \
        [("out", line) for line in table] + [("out", "results: %s/ab" % tmp_path)]


def test_a_stopped_experiment_says_so_on_the_other_stream(stand_ins, tmp_path):
    stand_ins.append("b-1")
    rc, got = experiment(tmp_path)
    assert rc == ab.INTERRUPTED
    assert got[6][1].endswith("  (partial)")     # the run under way is kept
    assert got[7:11] == [
        ("err", "jtr ab: interrupted; reverting and comparing what was measured"),
        ("err", "  not restored: vm.stat_interval: busy"), ("out", "[12:00:00] reverted p"),
        ("out", "")]
    assert got[-2:] == [("out", "results: %s/ab" % tmp_path),
                        ("err", "jtr ab: interrupted; partial results in %s/ab/" % tmp_path)]
    assert json.loads((tmp_path / "ab" / "ab.json").read_text())["interrupted"] is True


def settings(**kw):
    """jtr ab's settings (commands/ab.py options)."""
    o = {"profile": "jtr-latency", "cpus": None, "duration_ns": None, "repeat": 1,
         "trace": True, "backend": "auto", "probe": "gap", "probe_args": [], "pong_cpu": None,
         "sub_cpu": None, "quantity": None, "accept_invalid": False, "out": None}
    o.update(kw)
    return o


def test_a_gap_run_lasts_ten_seconds_unless_told():
    assert ab.check_probe(settings()) == (10 ** 10, None, [])
    assert ab.check_probe(settings(duration_ns=5 * 10 ** 8))[0] == 5 * 10 ** 8
    # gap's own length stands instead of jtr ab's default
    assert ab.check_probe(settings(probe_args=["-j", "1M"]))[0] is None
    assert ab.check_probe(settings(probe="null", probe_args=["-n", "500K"]))[0] is None
    assert ab.check_probe(settings(probe="ping", pong_cpu=[0], probe_args=["-T", "udp",
                                                                           "-1"]))[1] == 0
    assert ab.check_probe(settings(probe="pub", sub_cpu=[0]))[:2] == (None, 0)


@pytest.mark.parametrize("change, message", [
    ({"probe": "ping", "duration_ns": 5 * 10 ** 9},
     r"^-d: ping's own options set its length \(-n messages, -r rate\), not a duration; "
     r"give them after '-- ping'"),
    ({"probe": "null", "duration_ns": 5 * 10 ** 9},
     r"^-d: null's own options set its length \(-n samples a run, --runs runs\)"),
    ({"duration_ns": 5 * 10 ** 9, "probe_args": ["-d", "3"]}, r"^-d and gap's -d both set"),
    ({"duration_ns": 5 * 10 ** 9, "probe_args": ["--loops", "1M"]}, r"^-d and gap's -n both"),
    ({"probe_args": ["-o", "x"]}, r"^-o in gap's options: jtr ab chooses each run's folder"),
    ({"probe": "ping", "probe_args": ["--output=x"]}, r"^-o in ping's options"),
    ({"probe": "pub", "pong_cpu": [0]},
     r"^--pong-cpu: pub has no jtr pong to place \(it goes with ping\)"),
    ({"sub_cpu": [0]}, r"^--sub-cpu: gap has no jtr sub to place \(it goes with pub\)"),
    ({"probe": "ping", "pong_cpu": [0, 1]}, r"^--pong-cpu 0-1: give one CPU"),
    ({"probe": "ping", "quantity": "gap"},
     r"^--quantity gap: ping results have rtt_from_intended, rtt_from_send, send_call$"),
    ({"probe": "pub", "quantity": "rtt_from_send"},
     r"^--quantity rtt_from_send: sub results have latency_from_send, latency_from_intended$"),
    ({"quantity": "send_call"}, r"^--quantity send_call: gap results have gap$"),
    ({"cpus": "0", "probe": "ping", "probe_args": ["-a", "1"]},
     r"-c 0 and -a 1 both say where ping runs"),
])
def test_what_makes_no_sense_for_the_probe_is_refused(change, message, monkeypatch):
    # run where jtr may use only -c's CPU (make test runs these tests on CPU 0
    # alone), the isolation check would refuse "-c 0" first
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(online_cpus()))
    with pytest.raises(UsageError, match=message):
        ab.check_probe(settings(**change))


@pytest.fixture
def job(monkeypatch, tmp_path):
    """ab_job as root on an untuned machine, the experiment a stand-in: what it got."""
    monkeypatch.setenv("JTR_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr("jtrpy.tune.engine.os.geteuid", lambda: 0)
    monkeypatch.setattr(ab.E, "active_state", lambda: None)
    got = []
    monkeypatch.setattr(ab, "experiment", lambda o, profile, cpus, outdir, say, note, progress:
                        got.append((o, profile, cpus, outdir, say, note, progress)) or 0)
    return got


def test_the_job_makes_the_folder_and_runs_the_experiment(job, tmp_path):
    out = tmp_path / "ab"
    said, noted = [], []
    assert ab.ab_job(settings(out=str(out), probe="ping", pong_cpu=[0]), said.append,
                     noted.append, len) == 0
    [(o, profile, cpus, outdir, say, note, progress)] = job
    assert progress is len                      # the command's status line, handed on
    assert outdir == str(out) and out.is_dir() and os.listdir(out) == []
    assert profile.name == "jtr-latency" and cpus == []
    assert (o["duration_ns"], o["partner_cpu"], o["probe"]) == (None, 0, "ping")
    # the command's callbacks, handed on
    assert (say, note) == (said.append, noted.append)
    ab.ab_job(settings(out=str(tmp_path / "ab2")), said.append, noted.append)
    assert job[1][0]["duration_ns"] == 10 ** 10 and job[1][0]["partner_cpu"] is None


def test_what_the_job_refuses_leaves_nothing(job, tmp_path, monkeypatch):
    out = tmp_path / "ab"
    said = []
    with pytest.raises(UsageError, match="unknown profile 'nope'"):
        ab.ab_job(settings(profile="nope", out=str(out)), said.append, said.append)
    with pytest.raises(UsageError, match="^-o in gap's options"):
        ab.ab_job(settings(profile="nope", probe_args=["-o", "x"], out=str(out)),
                  said.append, said.append)
    monkeypatch.setattr(ab.E, "active_state", lambda: {"profile": "jtr-realtime"})
    with pytest.raises(UsageError, match=r"^profile jtr-realtime is applied: revert it first "
                                         r"\('jtr tune revert'\), so the baseline is the "
                                         r"machine untuned$"):
        ab.ab_job(settings(out=str(out)), said.append, said.append)
    monkeypatch.setattr("jtrpy.tune.engine.os.geteuid", lambda: 1000)
    with pytest.raises(UsageError, match="^jtr tune ab changes kernel settings: run it as root"):
        ab.ab_job(settings(out=str(out)), said.append, said.append)
    assert job == [] and not out.exists() and said == []


@pytest.mark.parametrize("asked, running, via", [
    (None, None, True), (None, "not running", False), (False, None, False),
    (True, "not running", True)])
def test_who_applies(stand_ins, tmp_path, monkeypatch, asked, running, via):
    """The running tuned daemon applies the profile unless --no-tuned (via_tuned
    False); without a daemon, jtr's own applier; what applies is in ab.json."""
    got = []
    monkeypatch.setattr(ab, "_apply", lambda o, cpus, note: got.append(o["via_tuned"]))
    monkeypatch.setattr(ab.E, "tuned_running", lambda: running)
    said = []
    ab.experiment(dict(settings(duration_ns=10 ** 9), partner_cpu=None, via_tuned=asked),
                  types.SimpleNamespace(name="p"), [], str(tmp_path / "ab"), said.append,
                  said.append)
    assert got == [via]
    assert json.loads((tmp_path / "ab" / "ab.json").read_text())["via_tuned"] is via
    assert any(("through the tuned daemon" in x) == via for x in said if "applied p" in x)


def test_apply_hands_who_applies_to_the_engine(monkeypatch):
    got = []

    class Lock:
        def __init__(self, note):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

    monkeypatch.setattr(ab.E, "StateLock", Lock)
    monkeypatch.setattr(ab.E, "recover", lambda: None)
    monkeypatch.setattr(ab.E, "load_profile", lambda name, cpus: types.SimpleNamespace(
        isolated=None))
    monkeypatch.setattr(ab.E, "make_plan", lambda profile, iso: "plan")
    monkeypatch.setattr(ab.E, "apply", lambda plan, say, stop=None, via_tuned=False:
                        got.append((plan, via_tuned)))
    for via in (True, False):
        ab._apply({"profile": "p", "via_tuned": via}, [1], print)
    assert got == [("plan", True), ("plan", False)]


def test_a_boot_experiment_is_refused_before_it_runs_where_it_cannot_go_on(job, tmp_path,
                                                                          monkeypatch):
    """--boot: a profile without boot options, or a machine whose command line jtr
    cannot change, refused before any run; nothing written."""
    out = tmp_path / "ab"
    with pytest.raises(UsageError, match="^--boot: jtr-latency has no boot options"):
        ab.ab_job(settings(out=str(out), boot=True), print, print)
    monkeypatch.setattr(ab.E, "can_change_cmdline", lambda: (False, "no grub here"))
    with pytest.raises(UsageError, match="^--boot: no grub here$"):
        ab.ab_job(settings(profile="jtr-isolate", cpus="1", out=str(out), boot=True),
                  print, print)
    assert not out.exists() and job == []


def test_resume_goes_on_only_after_the_reboot_it_waits_for(tmp_path, monkeypatch):
    """--resume DIR: refused (exit 2, the reason) for a folder without jtr ab's
    record, one that is not waiting for a reboot, and before that reboot."""
    d = tmp_path / "ab"
    with pytest.raises(UsageError, match="no such jtr ab record"):
        ab.ab_job({"resume": str(d)}, print, print)
    d.mkdir()
    doc = {"format": ab.FORMAT, "phase": "done", "settings": {}}
    (d / "ab.json").write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="nothing to resume \\(the experiment is done\\)"):
        ab.ab_job({"resume": str(d)}, print, print)
    doc.update(phase="reboot", boot_id="this-boot")
    (d / "ab.json").write_text(json.dumps(doc))
    monkeypatch.setattr(ab.E, "boot_id", lambda: "this-boot")
    with pytest.raises(UsageError, match="not rebooted since the profile's boot options were "
                                         "written; reboot first"):
        ab.ab_job({"resume": str(d)}, print, print)
