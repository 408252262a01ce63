# SPDX-License-Identifier: GPL-2.0-only
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


def _ping(folder, seed, tail):
    runs = [make_run(loops(seed + k, n=20000, tail=t), cpu=1, name=n) for k, (n, t) in
            enumerate((("rtt_from_intended", tail), ("rtt_from_send", 1.0), ("send_call", 1.0)))]
    folder.mkdir()
    write_json(str(folder / "result.json"), make_result(*runs, tool="ping"))


def test_a_ping_experiment_is_compared_on_one_quantity(tmp_path, capsys):
    _ping(tmp_path / "a-1", 1, 1.0)
    _ping(tmp_path / "b-1", 11, 3.0)
    rec = _record([{"name": "a-1", "side": "a", "rc": 0, "result": True, "partial": False},
                   {"name": "b-1", "side": "b", "rc": 0, "result": True, "partial": False}])
    ab._finish(str(tmp_path), rec, lambda: False)
    out = capsys.readouterr().out
    assert "rtt_from_intended: 1 run, " in out and "verdict: worse" in out
    c = json.loads((tmp_path / "compare.json").read_text())
    assert c["a"]["quantity"] == "rtt_from_intended" and c["a"]["samples"] == 20000
    assert json.loads((tmp_path / "ab.json").read_text())["quantity"] == "rtt_from_intended"
    ab._finish(str(tmp_path), rec, lambda: False, "send_call")
    assert json.loads((tmp_path / "compare.json").read_text())["a"]["quantity"] == "send_call"


def test_each_run_prints_its_quantity(tmp_path):
    _ping(tmp_path / "p", 1, 1.0)
    r = json.loads((tmp_path / "p" / "result.json").read_text())
    line = ab._figures(r, None)
    assert line.startswith("rtt_from_intended: p99 ")
    assert ab._figures(r, "send_call").startswith("send_call: p99 ")
    assert "lost" in ab._figures(make_result(make_run(loops(1, n=20000))), None)
