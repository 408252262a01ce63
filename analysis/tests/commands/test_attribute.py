# SPDX-License-Identifier: GPL-2.0-only
"""jtr attribute in-process on folders written here (a gap result with its event
log, jtr watch's dump, an application's CSV beside a trace): its usage errors
(one line each), the table and the JSON, what is written into the result and
what --no-write leaves alone."""
import json
import os

import pytest

from jtrpy.cli.main import main as jtr

from ..drivers.test_attribute import CSV, result, trace


def err(capsys):
    return capsys.readouterr().err


@pytest.mark.parametrize("args,message", [
    ([], "give one results folder (the gap run to explain); see 'jtr attribute --help'"),
    (["a", "b"], "give one results folder (the gap run to explain); see 'jtr attribute "
                 "--help'"),
    (["nowhere"], "nowhere: not a results folder"),
    (["--outliers", "x.csv"], "--outliers x.csv: give the trace to charge them against with "
                              "--events DIR (a jtr trace folder)"),
    (["--outliers", "x.csv", "--events", "nowhere"], "--events nowhere: no such file or folder"),
])
def test_usage_errors(capsys, args, message):
    assert jtr(["attribute"] + args) == 2
    assert err(capsys) == "jtr attribute: %s\n" % message


def test_usage_errors_with_a_folder(tmp_path, capsys):
    d = result(tmp_path / "r")
    assert jtr(["attribute", "--events", str(tmp_path / "none"), str(d)]) == 2
    assert err(capsys) == "jtr attribute: --events %s: no such file or folder\n" % (
        tmp_path / "none")
    assert jtr(["attribute", "--sched-data", "x", str(d)]) == 2
    assert "--sched-data and --cross-check-min go with --cross-check" in err(capsys)
    assert jtr(["attribute", "--outliers", str(d / "outliers.csv"), str(d)]) == 2
    assert err(capsys) == ("jtr attribute: --outliers %s explains that file; give no results "
                           "folder beside it\n" % (d / "outliers.csv"))
    assert jtr(["attribute", "--outliers", str(d / "outliers.csv"), "--events", str(d),
                "--cross-check"]) == 2
    assert "--cross-check goes with a results folder, not --outliers" in err(capsys)


def test_a_result_attributed_and_written(tmp_path, capsys):
    d = result(tmp_path / "r")
    before = (d / "result.json").read_text()
    assert jtr(["attribute", "--json", str(d)]) == 0
    a = json.loads(capsys.readouterr().out)
    assert [(c["category"], c["total_ns"]) for c in a["causes"]] == [("timer tick", 10_000)]
    assert jtr(["attribute", "--no-write", str(d)]) == 0
    assert "timer tick" in capsys.readouterr().out
    assert (d / "result.json").read_text() == before and not (d / "attribution.txt").exists()
    assert jtr(["attribute", str(d)]) == 0
    out = capsys.readouterr().out
    stored = json.loads((d / "result.json").read_text())
    assert stored["attribution"]["causes"] == a["causes"]
    assert stored["files"]["attribution"] == "attribution.txt"
    assert (d / "attribution.txt").read_text() == out


def test_an_applications_csv_and_a_watch_dump(tmp_path, capsys):
    tr = tmp_path / "tr"
    trace(tr)
    (tmp_path / "app.csv").write_text(CSV)
    assert jtr(["attribute", "--json", "--outliers", str(tmp_path / "app.csv"), "--events",
                str(tr)]) == 0
    a = json.loads(capsys.readouterr().out)
    assert a["outliers"]["file"] == str(tmp_path / "app.csv")
    assert a["causes"][0]["category"] == "timer tick"
    # a dump of jtr watch: outliers.csv and events.bin, no result.json
    (tr / "outliers.csv").write_text(CSV)
    assert jtr(["attribute", str(tr)]) == 0
    lines = capsys.readouterr().out
    assert "timer tick" in lines and not os.path.exists(tr / "attribution.txt")
