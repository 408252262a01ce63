# SPDX-License-Identifier: GPL-2.0-only
"""jtr advise in-process, on results written here and the machine's facts given
(nothing of this machine is read or changed): its usage errors, an invalid
result refused unless --accept-invalid, the advice as text and as JSON, and the
profile written with --profile-dir. --prove is refused before anything is
measured when not root; it prints the advice, then the lines due while it
proves (stdout's and stderr's), then the proof."""
import json

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.drivers import advise as D
from jtrpy.trace import causes as C
from jtrpy.tune import advice as A

from ..drivers.test_advise import CAUSES, FACTS, write

TASK = dict(CAUSES[1], name="bash", tasks=[{"pid": 7}])     # the "tasks" rule: applicable


@pytest.fixture
def facts(monkeypatch, tmp_path):
    monkeypatch.setattr(A, "facts", lambda: dict(FACTS))
    monkeypatch.setattr(A, "find_tasks", lambda comm, pids, cpus: [])
    monkeypatch.setenv("JTR_STATE_DIR", str(tmp_path / "state"))


def err(capsys):
    return capsys.readouterr().err


@pytest.mark.parametrize("args,message", [
    ([], "give one results folder, e.g. 'jtr advise results/latest'"),
    (["a", "b"], "give one results folder, e.g. 'jtr advise results/latest'"),
    (["--repeat", "2", "r"], "--repeat goes with --prove"),
    (["-d", "5s", "r"], "--duration goes with --prove"),
    (["-o", "out", "r"], "--output goes with --prove"),
    (["--boot", "r"], "--boot goes with --prove"),
    (["--resume", "d", "--prove", "r"], "--resume DIR goes on with the experiment in DIR as "
                                        "it was started: give nothing else"),
    (["--resume", "/nonexistent"], "/nonexistent/advice.json: no such jtr advise --prove "
                                   "record (give the folder jtr advise --prove --boot wrote)"),
])
def test_usage_errors(capsys, args, message):
    assert jtr(["advise"] + args) == 2
    assert err(capsys) == "jtr advise: %s\n" % message


def test_an_invalid_result_gets_no_remedy_unless_accepted(facts, tmp_path, capsys):
    r = write(tmp_path / "r", causes=[TASK], tool="ping",
              transport={"sent": 100, "late_sends": 50})
    assert jtr(["advise", r.folder]) == 2
    e = err(capsys)
    assert e.startswith("jtr advise: %s: no remedy from it: not a valid measurement: the "
                        "client (jtr ping) was late on 50 %% of sends" % r.folder)
    assert e.endswith("; measure again (--accept-invalid advises on it all the same)\n")
    assert jtr(["advise", "--accept-invalid", "--json", r.folder]) == 0
    assert json.loads(capsys.readouterr().out)["tool"] == "ping"


def test_text_and_json(facts, tmp_path, capsys):
    r = write(tmp_path / "r", causes=CAUSES + [TASK])
    assert jtr(["advise", "--json", r.folder]) == 0
    doc = json.loads(capsys.readouterr().out)
    want, _ = D.advise_result(r)
    assert doc == json.loads(json.dumps(want))
    assert [x["rule"] for x in doc["remedies"] if x["applicable"]] == ["tasks"]
    assert jtr(["advise", r.folder]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("%s: gap on CPU 1, 2.00 s: 8 outliers, 13.0 us" % r.folder)
    assert out[-1] == ("write it with --profile-dir DIR, then: sudo jtr tune apply DIR; "
                       "measure it: sudo jtr advise --prove %s" % r.folder)


def test_profile_dir(facts, tmp_path, capsys):
    r = write(tmp_path / "r", causes=CAUSES + [TASK])
    d = tmp_path / "p" / "jtr-advised"
    assert jtr(["advise", "--profile-dir", str(d), r.folder]) == 0
    text = (d / "tuned.conf").read_text()
    assert "isolated_cores=1\n" in text and text.startswith("#\n# jtr-advised: made by ")
    assert capsys.readouterr().out.splitlines()[-1] == (
        "written to %s/tuned.conf; apply it: sudo jtr tune apply %s" % (d, d))
    assert jtr(["advise", "--profile-dir", str(d), r.folder]) == 2
    assert err(capsys) == ("jtr advise: --profile-dir %s: it holds a tuned.conf already; give "
                           "a new folder or remove it\n" % d)
    nothing = write(tmp_path / "n", causes=CAUSES[:1])
    assert jtr(["advise", "--profile-dir", str(tmp_path / "q"), nothing.folder]) == 2
    assert err(capsys) == ("jtr advise: --profile-dir: no remedy for %s can be applied here, "
                           "so there is no profile to write\n" % nothing.folder)
    assert not (tmp_path / "q").exists()


def test_top_keeps_the_largest_in_the_profile(facts, tmp_path, capsys):
    causes = CAUSES + [TASK, {"category": C.PAGE_FAULT, "name": "user", "total_ns": 100,
                              "primary_count": 1, "count": 1, "share": 0.01}]
    r = write(tmp_path / "r", causes=causes)
    assert jtr(["advise", "--json", r.folder]) == 0
    doc = json.loads(capsys.readouterr().out)
    applicable = [x["rule"] for x in doc["remedies"] if x["applicable"]]
    assert len(applicable) == 2 and doc["profile"].count("\n#  ") == 2
    assert jtr(["advise", "--json", "--top", "1", r.folder]) == 0
    top = json.loads(capsys.readouterr().out)
    assert top["profile"].count("\n#  ") == 1 and "1. %s:" % applicable[0] in top["profile"]


def test_prove_needs_root(facts, tmp_path, capsys, monkeypatch):
    r = write(tmp_path / "r", causes=CAUSES + [TASK])
    monkeypatch.setattr("jtrpy.tune.engine.os.geteuid", lambda: 1000)
    assert jtr(["advise", "--prove", r.folder]) == 2
    assert err(capsys) == ("jtr advise: jtr tune advise --prove changes kernel settings: run it "
                           "as root (sudo)\n")



def test_prove_prints_the_advice_then_the_proof(facts, tmp_path, capsys, monkeypatch):
    r = write(tmp_path / "r", causes=CAUSES + [TASK])
    out = tmp_path / "out"
    monkeypatch.setattr("jtrpy.tune.engine.os.geteuid", lambda: 0)
    seen = []

    def prove(doc, result, opts, outdir, say, note):
        seen.append((capsys.readouterr().out, opts, outdir))
        say("proving ...")
        note("jtr ab: a notice")
        say("[12:00:00] run 1 of 2: a-1 (baseline)")
        return 1, {"remedies": []}
    monkeypatch.setattr("jtrpy.commands.advise.prove", prove)
    assert jtr(["advise", "--prove", "--json", "-o", str(out), r.folder]) == 1
    before, opts, outdir = seen[0]
    assert before.startswith("%s: gap on CPU 1" % r.folder) and before.endswith("\n\n")
    assert opts == {"repeat": 1, "duration_ns": None, "top": None, "backend": "auto",
                    "via_tuned": None, "boot": False}
    assert outdir == str(out) and (out / "advice.json").exists()
    # the lines due while it proves: say's on stdout, note's on stderr
    assert capsys.readouterr() == (
        'proving ...\n[12:00:00] run 1 of 2: a-1 (baseline)\n{\n  "remedies": []\n}\n'
        'results: %s\n' % out, "jtr ab: a notice\n")

