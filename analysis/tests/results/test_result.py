"""results.result: loading a result once and handing it on."""
import json

import pytest

from jtrpy.errors import UsageError
from jtrpy.results.result import Result, load_result, new_results_dir


def test_load_result_errors(tmp_path):
    with pytest.raises(UsageError, match="no such result"):
        load_result(str(tmp_path / "missing"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UsageError, match="not a JSON file"):
        load_result(str(bad))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "oslat"}))
    with pytest.raises(UsageError, match="expected 'jtr-result/1'"):
        load_result(str(other))
    d = tmp_path / "dir"
    d.mkdir()
    (d / "result.json").write_text(json.dumps({"format": "jtr-result/1", "runs": []}))
    assert load_result(str(d))["runs"] == []


def test_a_result_knows_its_folder_and_files(tmp_path):
    (tmp_path / "result.json").write_text(json.dumps(
        {"format": "jtr-result/1", "runs": [], "files": {"outliers": "o.csv"}}))
    for given in (str(tmp_path), str(tmp_path / "result.json")):
        r = load_result(given)
        assert isinstance(r, dict) and r.folder == str(tmp_path)
        assert r.file("outliers") == str(tmp_path / "o.csv")      # as the result names it
        assert r.file("events") == str(tmp_path / "events.bin")   # else the usual name
    r.write_text("attribution", "a.txt", "hello\n")
    r["note"] = 1
    r.save()
    back = load_result(str(tmp_path))
    assert back["files"]["attribution"] == "a.txt" and back["note"] == 1
    assert (tmp_path / "a.txt").read_text() == "hello\n"
    assert not [n for n in tmp_path.iterdir() if n.name.startswith(".")]
    assert Result({"format": "jtr-result/1"}).folder is None


def test_new_results_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = new_results_dir("ab", host="h/x")
    assert a.startswith("results/") and a.endswith("-h_x-ab")
    (tmp_path / a).mkdir(parents=True)
    assert new_results_dir("ab", host="h/x") == a + "-2"
    with pytest.raises(UsageError, match="-o .*: exists; give a new folder"):
        new_results_dir("ab", out=a)
