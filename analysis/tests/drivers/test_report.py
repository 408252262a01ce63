# SPDX-License-Identifier: GPL-2.0-only
"""drivers.report: jtr report's job with the pages stubbed (where the page goes,
what each page is given: the results, their outlier rows, the comparison, a
suite's items loaded; what is refused before anything is written).
render/test_report.py, test_suite_page.py and tests/test_report.py look at the
pages themselves."""
import json
import os

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.cli.progress import Progress
from jtrpy.drivers import report as D
from jtrpy.render import compare_page, report, suite_page
from jtrpy.results.result import Result, load_result

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

    def seen(opts):
        """The options, the command's progress line told as a yes (it is given)."""
        return {k: isinstance(v, Progress) if k == "progress" else v for k, v in opts.items()}
    monkeypatch.setattr(D, "pages", lambda results, paths, opts: calls.append(
        ("report", [r.folder for r in results], paths, seen(opts))) or (
            {"p": b"png"}, "<html/>", {"a.gp": "gp"}))
    monkeypatch.setattr(suite_page, "build", lambda folder, doc, opts, loaded, why: calls.append(
        ("suite", folder, doc["command"], seen(opts), loaded, why)) or ({}, "<suite/>", {}))
    return calls


@pytest.mark.parametrize("args", [[], ["a", "b", "c"]])
def test_one_or_two_results(capsys, args):
    assert jtr(["report"] + args) == 2
    assert capsys.readouterr().err == ("jtr report: give one result, or two to compare; see "
                                       "'jtr report --help'\n")


def test_default_out():
    one = Result({}, "runs/a/result.json")
    assert D.default_out([one]) == os.path.join("runs/a", "report")
    assert D.default_out([one, Result({}, "b/result.json")]) == "report-a-vs-b"
    assert D.default_out([one, Result({}, "./result.json")]) == "report-a-vs-%s" % \
        os.path.basename(os.path.abspath("."))


def test_one_result_into_its_folder(tmp_path, capsys, built):
    a = write(tmp_path / "a")
    assert jtr(["report", "--gnuplot", "--histo-buckets", "50", a]) == 0
    rep = tmp_path / "a" / "report"
    assert sorted(os.listdir(rep)) == ["a.gp", "p.png", "report.html"]
    assert capsys.readouterr().out == "jtr report: %s (p.png, a.gp)\n" % (rep / "report.html")
    assert built == [("report", [a], [a], {"gnuplot": True, "histo_buckets": 50,
                                           "quantity": None, "mixed": False,
                                           "progress": True})]


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
                                                       "quantity": None, "mixed": False,
                                                       "progress": True},
                      {}, {})]
    assert jtr(["report", "--quantity", "gap", str(s)]) == 2
    assert capsys.readouterr().err.endswith(
        "--quantity gap: a suite's page shows each item on its own tool's quantity; give a "
        "result of the suite instead (%s/ITEM)\n" % s)


def test_suite_items_say_why_one_has_no_result(tmp_path):
    for name in ("a", "b"):
        write(tmp_path / name)
    items = [{"name": n, "folder": n} for n in ("a", "b")] + [
        {"name": "evil", "folder": "../elsewhere"}, {"name": "x", "folder": None}]
    (tmp_path / "suite.json").write_text("{}")
    loaded, why = D.suite_items(str(tmp_path), items)
    assert list(loaded) == ["a", "b"] and list(why) == ["evil"]
    assert why["evil"].endswith("items: item evil: its folder is outside the suite's folder")


def attributed(folder, rows):
    """A result with an attribution and an outlier log of @rows (None: no log)."""
    r = make_result(make_run(loops(1, n=3000), cpu=1))
    r["attribution"] = {"causes": [], "worst": []}
    r["files"] = {"outliers": "outliers.csv"}
    write(folder, r)
    if rows is not None:
        (folder / "outliers.csv").write_text(rows)
    return load_result(str(folder))


def test_outlier_rows_for_the_timeline(tmp_path):
    good = attributed(tmp_path / "good", "cpu,start_ns,length_ns\n1,100,20\n1,300,40\n")
    assert [list(r)[:3] for r in D.outlier_rows(good)] == [[1, 100, 20], [1, 300, 40]]
    # none, damaged, or a result without attribution: the worst outliers only
    assert D.outlier_rows(attributed(tmp_path / "none", None)) == []
    assert D.outlier_rows(attributed(tmp_path / "bad", "cpu,start_ns,length_ns\n1,x,2\n")) == []
    write(tmp_path / "plain")
    assert D.outlier_rows(load_result(str(tmp_path / "plain"))) == []


def test_the_pages_are_given_what_they_show(tmp_path, monkeypatch):
    got = []
    monkeypatch.setattr(report, "single_page", lambda result, given, opts, rows: got.append(
        ("single", given, rows)) or "one")
    monkeypatch.setattr(compare_page, "build", lambda results, given, opts, summary, c:
                        got.append(("pair", given, summary, c["verdict"])) or "two")
    one = attributed(tmp_path / "one", "cpu,start_ns,length_ns\n1,100,20\n")
    assert D.pages([one], ["one"], {}) == "one"
    assert got[0][:2] == ("single", "one") and len(got[0][2]) == 1
    a, b = (load_result(write(tmp_path / n)) for n in ("a", "b"))
    assert D.pages([a, b], ["A", "B"], {"quantity": None}) == "two"
    assert got[1][:3] == ("pair", ["A", "B"], report.summary_section)
    assert got[1][3]        # the comparison's verdict, computed for the page
