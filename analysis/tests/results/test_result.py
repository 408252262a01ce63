# SPDX-License-Identifier: GPL-2.0-only
"""results.result: loading a result once and handing it on."""
import json
import os

import pytest

from jtrpy.errors import UsageError
from jtrpy.results.result import (
    DEFAULT_FILES,
    NAME,
    RESULT_FILES,
    Result,
    check_output_dir,
    load_result,
    make_output_dir,
    make_results_dir,
    new_results_dir,
    write_result_folder,
)


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
        assert r.file("stats") == str(tmp_path / "stats.csv")
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


def test_files_a_result_names_stay_in_its_folder(tmp_path):
    d = tmp_path / "r"
    d.mkdir()
    (d / "result.json").write_text(json.dumps({"format": "jtr-result/1", "runs": [], "files": {
        "outliers": "/dev/zero", "events": "../../etc/shadow", "summary": "sub/../s.txt"}}))
    r = load_result(str(d))
    for role in ("outliers", "events"):
        with pytest.raises(UsageError) as e:
            r.file(role)
        assert str(e.value) == "%s: files.%s: expected a file in the results folder, got a " \
                               "path outside it" % (d / "result.json", role)
    assert r.file("summary") == str(d / "sub/../s.txt")
    os.symlink("/dev/zero", str(d / "trace.json"))
    with pytest.raises(UsageError, match="leads out of the results folder"):
        r.check_file("trace", "trace description")


def test_writing_into_a_result_that_cannot_be_written(tmp_path):
    (tmp_path / "result.json").write_text(json.dumps({"format": "jtr-result/1"}))
    (tmp_path / "attribution.txt").mkdir()
    r = load_result(str(tmp_path))
    with pytest.raises(UsageError) as e:
        r.write_text("attribution", "attribution.txt", "causes\n")
    assert str(e.value) == "%s: cannot write: Is a directory; it is a folder: remove or " \
                           "rename it" % (tmp_path / "attribution.txt")
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]


# --- -o DIR: one rule for every command, in the C probes' words --------------

CANNOT_CREATE = "cannot create the results folder: %s; choose a folder whose parent " \
                "exists and that you can write to"


def test_output_folder_rules(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("")
    (tmp_path / "old").mkdir()
    cases = [
        ("", "-o '': give a folder name, e.g. -o run1"),
        ("/proc/x/y", "-o /proc/x/y: " + CANNOT_CREATE % "No such file or directory"),
        ("file/sub", "-o file/sub: " + CANNOT_CREATE % "Not a directory"),
        ("no/such/parent", "-o no/such/parent: " + CANNOT_CREATE % "No such file or directory"),
        ("file", "-o file: exists and is not a folder; give a new or existing folder"),
    ]
    for out, message in cases:
        for call, args in ((check_output_dir, ()), (make_output_dir, ()),
                           (write_result_folder, ({"format": "jtr-result/1"},))):
            with pytest.raises(UsageError) as e:
                call(*(args + (out,)))
            assert str(e.value) == message
    assert not (tmp_path / "no").exists() and not os.path.exists("/proc/x")
    check_output_dir("old")                                 # an existing folder is written into
    assert make_output_dir("new") == "new" and (tmp_path / "new").is_dir()
    with pytest.raises(UsageError, match="cannot create the report folder"):
        make_output_dir("no/r", what="report folder")
    # a folder of many results (ab, maxrate, suite) must be new; its parent must exist
    with pytest.raises(UsageError, match="-o old: exists; give a new folder"):
        new_results_dir("suite", out="old")
    with pytest.raises(UsageError, match="-o /proc/x/y: cannot create"):
        new_results_dir("ab", out="/proc/x/y")
    with pytest.raises(UsageError, match="-o '': give a folder name"):
        new_results_dir("maxrate", out="")
    assert new_results_dir("ab", out="fresh") == "fresh" and not os.path.exists("fresh")
    d = make_results_dir("maxrate")                         # the default: results/ created
    assert d.startswith("results/") and os.path.isdir(d)
    assert make_results_dir("maxrate", "fresh") == "fresh" and os.path.isdir("fresh")


def test_a_new_result_in_an_old_folder_leaves_nothing_of_the_old_one(tmp_path):
    old = tmp_path / "old-run"
    old.mkdir()
    for name in ("result.json", "summary.txt", "outliers.csv", "events.bin", "trace.json",
                 "attribution.txt", "sched.data", "notes.txt"):
        (old / name).write_text("earlier\n")
    (old / "report").mkdir()
    src = tmp_path / "oslat.json"
    src.write_text("{}")
    write_result_folder({"format": "jtr-result/1", "runs": []}, str(old),
                        [("oslat.json", str(src))])
    assert sorted(os.listdir(old)) == ["notes.txt", "oslat.json", "report", "result.json"]
    assert load_result(str(old))["runs"] == []


def test_result_files_are_the_roles_and_the_writers_names():
    assert set(DEFAULT_FILES.values()) <= set(RESULT_FILES)
    assert RESULT_FILES[0] == NAME
