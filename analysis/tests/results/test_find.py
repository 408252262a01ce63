# SPDX-License-Identifier: GPL-2.0-only
"""results.find: jtr ls's walk; a result that cannot be loaded is reported with
why, and the others are still found."""
import json

from jtrpy.results.find import find_results

from ..synthetic import make_result, make_run


def test_a_damaged_result_does_not_hide_the_others(tmp_path):
    good = make_result(make_run([40, 41, 9000] * 20, cpu=1))
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "result.json").write_text(json.dumps(good))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "result.json").write_bytes(json.dumps(good).encode()[:-3] + b"\xff}")
    (tmp_path / "typed").mkdir()
    (tmp_path / "typed" / "result.json").write_text(json.dumps(dict(good, runs="x")))
    (tmp_path / "empty").mkdir()
    found, skipped, damaged = find_results([str(tmp_path)])
    assert sorted(r.folder for r in found) == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert skipped == [str(tmp_path / "empty")]
    assert [p for p, _ in damaged] == [str(tmp_path / "bad"), str(tmp_path / "typed")]
    assert damaged[0][1].startswith("%s: not UTF-8 text" % (tmp_path / "bad" / "result.json"))
    assert damaged[1][1] == "%s: runs: expected a list of run objects, got a string" % (
        tmp_path / "typed" / "result.json")


def test_a_killed_jtr_runs_probe_document_is_its_result(tmp_path):
    # jtr run killed after its probe wrote .probe-result.json, before it wrote
    # result.json: the folder is a result all the same; result.json first when both
    doc = make_result(make_run([40, 41, 9000] * 20, cpu=1))
    d = tmp_path / "killed"
    d.mkdir()
    (d / ".probe-result.json").write_text(json.dumps(doc))
    (found,), skipped, damaged = find_results([str(tmp_path)])
    assert found.path == str(d / ".probe-result.json") and skipped == damaged == []
    (d / "result.json").write_text(json.dumps(dict(doc, tool="null")))
    (found,), _, _ = find_results([str(tmp_path)])
    assert found.path == str(d / "result.json") and found["tool"] == "null"
