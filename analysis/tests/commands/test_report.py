# SPDX-License-Identifier: GPL-2.0-only
"""jtr report in-process: what it refuses before writing anything, where the
report goes (RESULT/report, report-A-vs-B, -o), and which page it builds for
one result, two, or a suite folder; the pages themselves are stand-ins here
(render/test_report.py, test_suite_page.py and tests/test_report.py look at them)."""
import json
import os

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.commands import report as command
from jtrpy.render import report, suite_page
from jtrpy.results.result import Result

from ..synthetic import loops, make_result, make_run


def write(folder, doc=None):
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(doc or make_result(
        make_run(loops(1, n=3000), cpu=1))))
    return str(folder)


@pytest.fixture
def built(monkeypatch):
    """The pages built: [(kind, what it was given)]."""
    calls = []
    monkeypatch.setattr(report, "build", lambda results, paths, opts: calls.append(
        ("report", [r.folder for r in results], paths, opts)) or ({"p": b"png"}, "<html/>",
                                                                  {"a.gp": "gp"}))
    monkeypatch.setattr(suite_page, "build", lambda folder, doc, opts: calls.append(
        ("suite", folder, doc["command"], opts)) or ({}, "<suite/>", {}))
    return calls


@pytest.mark.parametrize("args", [[], ["a", "b", "c"]])
def test_one_or_two_results(capsys, args):
    assert jtr(["report"] + args) == 2
    assert capsys.readouterr().err == ("jtr report: give one result, or two to compare; see "
                                       "'jtr report --help'\n")


def test_default_out():
    one = Result({}, "runs/a/result.json")
    assert command.default_out([one]) == os.path.join("runs/a", "report")
    assert command.default_out([one, Result({}, "b/result.json")]) == "report-a-vs-b"
    assert command.default_out([one, Result({}, "./result.json")]) == "report-a-vs-%s" % \
        os.path.basename(os.path.abspath("."))


def test_one_result_into_its_folder(tmp_path, capsys, built):
    a = write(tmp_path / "a")
    assert jtr(["report", "--gnuplot", "--histo-buckets", "50", a]) == 0
    rep = tmp_path / "a" / "report"
    assert sorted(os.listdir(rep)) == ["a.gp", "p.png", "report.html"]
    assert capsys.readouterr().out == "jtr report: %s (p.png, a.gp)\n" % (rep / "report.html")
    assert built == [("report", [a], [a], {"gnuplot": True, "histo_buckets": 50,
                                           "quantity": None, "mixed": False})]


def test_two_results_next_to_where_it_runs(tmp_path, capsys, built, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a, b = write(tmp_path / "x" / "before"), write(tmp_path / "y" / "after")
    assert jtr(["report", a, b]) == 0
    assert (tmp_path / "report-before-vs-after" / "report.html").read_text() == "<html/>"
    assert jtr(["report", "-o", str(tmp_path / "mine"), a, b]) == 0
    assert (tmp_path / "mine" / "report.html").exists()


def test_refused_before_anything_is_written(tmp_path, capsys, built):
    a = write(tmp_path / "a")
    assert jtr(["report", "--quantity", "rtt", a]) == 2
    assert "no quantity 'rtt' in this gap result" in capsys.readouterr().err
    empty = make_result(dict(make_run(loops(2, n=100)), histogram=None))
    b = write(tmp_path / "b", empty)
    assert jtr(["report", a, b]) == 2
    assert capsys.readouterr().err == ("jtr report: %s: run 'cpu0' has no histogram; compare "
                                       "results of jtr gap or jtr null, which keep one per "
                                       "run\n" % b)
    assert built == [] and not os.path.exists(tmp_path / "a" / "report")


def test_a_suite_folder(tmp_path, capsys, built):
    s = tmp_path / "s"
    s.mkdir()
    (s / "suite.json").write_text(json.dumps({"format": "jtr-suite/1", "command": ["jtr suite"],
                                              "items": [], "pairs": []}))
    assert jtr(["report", str(s)]) == 0
    assert (s / "report" / "report.html").read_text() == "<suite/>"
    assert built == [("suite", str(s), ["jtr suite"], {"gnuplot": False, "histo_buckets": None,
                                                       "quantity": None, "mixed": False})]
    assert jtr(["report", "--quantity", "gap", str(s)]) == 2
    assert capsys.readouterr().err.endswith(
        "--quantity gap: a suite's page shows each item on its own tool's quantity; give a "
        "result of the suite instead (%s/ITEM)\n" % s)
