# SPDX-License-Identifier: GPL-2.0-only
"""drivers.run: the main job and a probe alone, with a stand-in jtr-gap in a
folder of the test's own (JTR_LIBEXEC) that writes a result and reports its
folder on JTR_RESULTS_FD: the document built in memory and saved once (the
validity and the gates in it), also when the attribution is stopped; the probe
alone judged by its gates; a probe that fails leaves no result to judge; jtr
run's job: what the machine must allow checked before anything runs, the
measurement, its conclusion."""
import json
import os
import sys

import pytest

from jtrpy.drivers import run as R
from jtrpy.errors import EXIT_FAILED, UsageError
from jtrpy.results import result as result_mod
from jtrpy.system import signals

from ..synthetic import make_result, make_run

FAKE = """#!%s
import json, os, sys
args = sys.argv[1:]
out = args[args.index("-o") + 1]
if os.environ.get("FAKE_RC"):
    sys.exit(int(os.environ["FAKE_RC"]))
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "result.json"), "w") as f:
    f.write(os.environ["FAKE_DOC"])
os.write(int(os.environ["JTR_RESULTS_FD"]), (os.path.abspath(out) + "\\n").encode())
"""


@pytest.fixture
def gap(tmp_path, monkeypatch):
    """A stand-in jtr-gap writing a one-CPU result (max 12 us) where -o says."""
    b = tmp_path / "bin"
    b.mkdir()
    (b / "jtr-gap").write_text(FAKE % sys.executable)
    (b / "jtr-gap").chmod(0o755)
    monkeypatch.setenv("JTR_LIBEXEC", str(b))
    run = make_run([40] * 1000 + [12_000], cpu=1)
    run.update(duration_ns=10 ** 9, start_mono_ns=10 ** 12, end_mono_ns=10 ** 12 + 10 ** 9)
    monkeypatch.setenv("FAKE_DOC", json.dumps(make_result(run)))
    saves = []
    save = result_mod.Result.save
    monkeypatch.setattr(result_mod.Result, "save",
                        lambda self: saves.append(dict(self)) or save(self))
    signals.reset()
    yield tmp_path, saves
    signals.reset()


def test_the_job_saves_its_document_once_with_validity_and_gates(gap):
    tmp, saves = gap
    job = R.measure(["-o", str(tmp / "r")], probe="gap", cpus=[1], trace=False,
                    gates=(1000, None))
    assert job.rc == 0 and job.why == "tracing was switched off (--no-trace)"
    assert len(saves) == 1
    doc = json.loads((tmp / "r" / "result.json").read_text())
    assert "validity" in doc and doc["gates"]["passed"] is False
    [case] = job.cases
    assert (case["gate"], case["cpu"], case["value"], case["passed"]) == (
        "max-latency", 1, 12_000, False)
    assert case["causes_missing"].startswith("not measured: tracing was switched off")


def test_a_stopped_attribution_keeps_what_the_job_has(gap, monkeypatch):
    tmp, saves = gap

    def stopped(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(R, "_attribute", stopped)
    with pytest.raises(KeyboardInterrupt):
        R.measure(["-o", str(tmp / "r")], probe="gap", cpus=[1], trace=False,
                  gates=(1000, None))
    assert len(saves) == 1 and "validity" in saves[0] and "gates" not in saves[0]
    assert "validity" in json.loads((tmp / "r" / "result.json").read_text())


def test_a_probe_alone_is_judged_and_saved(gap):
    tmp, saves = gap
    job = R.run_alone("gap", ["-o", str(tmp / "a")], (1000, None), "jtr gap runs no tracer",
                      "'jtr run gap ... --max-latency 1us' (as root) names them")
    assert job.rc == 0 and not job.interrupted and len(saves) == 1
    [case] = job.cases
    assert case["gate"] == "max-latency" and case["causes_missing"] == (
        "not measured: jtr gap runs no tracer; 'jtr run gap ... --max-latency 1us' (as root) "
        "names them")
    assert json.loads((tmp / "a" / "result.json").read_text())["gates"]["cases"] == job.cases


def test_a_probe_that_fails_leaves_nothing_to_judge(gap, monkeypatch):
    tmp, saves = gap
    monkeypatch.setenv("FAKE_RC", "2")
    job = R.run_alone("gap", ["-o", str(tmp / "a")], (1000, None), "", "")
    assert (job.rc, job.result, job.cases, saves) == (2, None, [], [])
    assert not os.path.exists(tmp / "a")


def test_a_gated_probe_alone_is_concluded(gap, tmp_path):
    tmp, saves = gap
    junit = tmp_path / "ci.xml"
    job, rc = R.probe_job("gap", ["-o", str(tmp / "a")], (1000, None), str(junit),
                          "jtr gap --max-latency 1us", "how")
    # a 1 us limit: the fake probe's samples are over it, the gate failed
    assert rc == EXIT_FAILED and len(saves) == 1 and not job.cases[0]["passed"]
    assert job.cases[0]["causes_missing"] == "not measured: jtr gap runs no tracer; how"
    assert "<failure" in junit.read_text()


def settings(tmp, **kw):
    """jtr run's settings (commands/run.py options) for the stand-in jtr-gap."""
    o = {"probe": "gap", "probe_args": ["-o", str(tmp / "r")], "cpus": [1], "pong_cpu": None,
         "sub_cpu": None, "partner_netns": None, "trace": False, "trace_buffer": None,
         "drain_interval": None, "backend": "auto", "slack_ns": None, "top": None,
         "split": False, "cross_check": None, "gates": (None, None), "junit": None,
         "command": "jtr run -o r"}
    o.update(kw)
    return o


def test_jtr_runs_job_measures_and_concludes(gap, tmp_path):
    tmp, saves = gap
    junit = tmp_path / "ci.xml"
    job, rc = R.run_job(settings(tmp, gates=(1000, None), junit=str(junit)))
    # the fake probe's max (12 us) is over the 1 us limit: the gate failed
    assert (rc, job.rc, len(saves)) == (EXIT_FAILED, 0, 1) and not job.cases[0]["passed"]
    report = junit.read_text()
    assert "<failure" in report and "jtr run -o r" in report
    job, rc = R.run_job(settings(tmp, probe_args=["-o", str(tmp / "r2")], gates=(10 ** 6, None)))
    assert rc == 0 and job.cases[0]["passed"]


def test_the_tracer_and_the_other_end_come_from_the_settings(tmp_path, monkeypatch):
    got = []
    monkeypatch.setattr(R, "measure", lambda args, **kw: got.append((args, kw)) or R.Job())
    monkeypatch.setattr(R, "cross_check_unavailable", lambda: None)
    job, rc = R.run_job(settings(tmp_path, probe="ping", probe_args=["-T", "udp"], cpus=None,
                                 pong_cpu=[0], trace=True, trace_buffer=4096,
                                 drain_interval=5 * 10 ** 6, split=True,
                                 cross_check={"min_ns": None}), progress=len)
    # no result (the probe wrote none): its own exit status
    assert job.result is None and rc is None
    [(args, kw)] = got
    assert args == ["-T", "udp"]
    assert kw == {"probe": "ping", "cpus": None, "trace": True,
                  "tracer_args": ["-b", "4096", "-i", "5ms"], "slack_ns": None, "top": None,
                  "backend": "auto", "partner_cpu": 0, "partner_netns": None, "split": True,
                  "cross_check": {"min_ns": None}, "gates": (None, None), "progress": len}


@pytest.mark.parametrize("change, message", [
    ({"pong_cpu": [0]}, "--pong-cpu: gap has no jtr pong to place (it goes with ping)"),
    ({"probe": "ping", "sub_cpu": [0]},
     "--sub-cpu: ping has no jtr sub to place (it goes with pub)"),
    ({"probe": "ping", "pong_cpu": [0, 1]}, "--pong-cpu 0-1: give one CPU"),
    ({"probe": "ping", "partner_netns": "red"},
     "--partner-netns red: no such network namespace (ip netns list names them)"),
    ({"probe": "pub", "partner_netns": "blue/../blue"},
     "--partner-netns blue/../blue: no such network namespace"),
    ({"cross_check": {"min_ns": None}}, "--cross-check needs perf sched record: no perf here"),
])
def test_what_the_machine_refuses_runs_nothing(tmp_path, monkeypatch, change, message):
    monkeypatch.setattr(R, "NETNS_DIR", str(tmp_path))
    (tmp_path / "blue").touch()
    monkeypatch.setattr(R, "cross_check_unavailable",
                        lambda: "--cross-check needs perf sched record: no perf here")

    def measure(*a, **kw):
        raise AssertionError("measured")
    monkeypatch.setattr(R, "measure", measure)
    with pytest.raises(UsageError) as e:
        R.run_job(settings(tmp_path, **change))
    assert str(e.value).startswith(message)


def test_a_network_namespace_that_exists_is_taken(tmp_path, monkeypatch):
    monkeypatch.setattr(R, "NETNS_DIR", str(tmp_path))
    (tmp_path / "blue").touch()
    got = []
    monkeypatch.setattr(R, "measure", lambda args, **kw: got.append(kw) or R.Job())
    R.run_job(settings(tmp_path, probe="pub", partner_netns="blue"))
    assert got[0]["partner_netns"] == "blue" and got[0]["partner_cpu"] is None


def test_the_probes_result_becomes_result_json_once(tmp_path, monkeypatch):
    """The program whose folder the result is writes PROBE_DOC (JTR_RESULT_AS);
    jtr reads it, saves result.json and removes it; one that wrote result.json
    itself is read from there; a result jtr does not go on with, or cannot save,
    is kept as the program wrote it."""
    env = R.env_of("jtr run", True)
    assert env["JTR_RESULT_AS"] == R.PROBE_DOC and env["JTR_PROG"] == "jtr run"
    assert "JTR_RESULT_AS" not in R.env_of("jtr run", False)
    assert R.env_of(None, True).get("JTR_PROG") == os.environ.get("JTR_PROG")
    doc = make_result(make_run([100, 200], cpu=1))
    d = tmp_path / "r"
    d.mkdir()
    (d / R.PROBE_DOC).write_text(json.dumps(doc))
    r = R.probe_result(str(d))
    assert r.path == str(d / "result.json") and r["tool"] == doc["tool"]
    r["validity"] = {"valid": True}
    R.saved(r, str(d))
    assert sorted(os.listdir(d)) == ["result.json"]
    assert json.loads((d / "result.json").read_text())["validity"] == {"valid": True}
    assert R.probe_result(str(d)).path == str(d / "result.json")     # written by itself
    (d / R.PROBE_DOC).write_text(json.dumps(doc))
    R.keep_as_written(str(d))
    assert sorted(os.listdir(d)) == ["result.json"]
    assert "validity" not in json.loads((d / "result.json").read_text())
    (d / R.PROBE_DOC).write_text(json.dumps(doc))
    r = R.probe_result(str(d))

    def full(self):
        raise UsageError("no space left")
    monkeypatch.setattr(type(r), "save", full)
    with pytest.raises(UsageError):
        R.saved(r, str(d))
    assert sorted(os.listdir(d)) == ["result.json"]
