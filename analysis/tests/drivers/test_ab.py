"""drivers.ab: the ABBA order, and the end of an experiment: what was measured is
compared (partial runs too) and ab.json says how it ended."""
import json

from jtrpy.drivers import ab
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


def test_a_partial_run_is_compared(tmp_path, capsys):
    _result(tmp_path / "a-1", 1)
    _result(tmp_path / "b-1", 2, partial=True)
    rec = _record([{"name": "a-1", "side": "a", "rc": 0, "result": True, "partial": False},
                   {"name": "b-1", "side": "b", "rc": 130, "result": True, "partial": True}])
    ab._finish(str(tmp_path), rec, lambda: True)
    out = capsys.readouterr().out
    assert "compared: baseline 1 run, tuned 1 run (1 partial)" in out
    assert "was stopped early" in out and "verdict: " in out
    doc = json.loads((tmp_path / "ab.json").read_text())
    assert doc["interrupted"] is True and doc["compare"] == "compare.json"
    c = json.loads((tmp_path / "compare.json").read_text())
    assert len(c["a"]["results"]) == 1 and len(c["b"]["results"]) == 1


def test_too_few_runs_are_counted_not_hidden(tmp_path, capsys):
    _result(tmp_path / "a-1", 1)
    _result(tmp_path / "a-2", 3)
    rec = _record([{"name": "a-1", "side": "a", "rc": 0, "result": True, "partial": False},
                   {"name": "b-1", "side": "b", "rc": -15, "result": False, "partial": True},
                   {"name": "a-2", "side": "a", "rc": 0, "result": True, "partial": False}])
    ab._finish(str(tmp_path), rec, lambda: False)
    assert "not enough runs to compare (baseline 2 runs, tuned 0 runs)" in \
        capsys.readouterr().out
    doc = json.loads((tmp_path / "ab.json").read_text())
    assert doc["interrupted"] is False and doc["compare"] is None
    assert not (tmp_path / "compare.json").exists()
