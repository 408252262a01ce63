# SPDX-License-Identifier: GPL-2.0-only
"""drivers.ls: the results found (./results need not exist; a damaged one kept
with why), their rows newest first on a quantity, and the jtr-ls/1 document or
why there is none."""
import json

import pytest

from jtrpy.drivers.ls import FORMAT, find, list_results, rows
from jtrpy.errors import UsageError

from ..synthetic import loops, make_result, make_run


def _write(folder, doc, started):
    doc["started_at"] = started
    folder.mkdir(parents=True)
    (folder / "result.json").write_text(json.dumps(doc))
    return str(folder)


@pytest.fixture
def folder(tmp_path):
    ping = make_result(make_run(loops(1, n=3000), name="rtt_from_intended"),
                       make_run(loops(2, n=3000), name="send_call"), tool="ping")
    _write(tmp_path / "r" / "a", make_result(make_run(loops(3, n=3000))),
           "2026-01-01T00:00:00Z")
    _write(tmp_path / "r" / "b", ping, "2026-02-01T00:00:00Z")
    (tmp_path / "r" / "empty").mkdir()
    (tmp_path / "r" / "bad").mkdir()
    (tmp_path / "r" / "bad" / "result.json").write_text("{")
    return tmp_path / "r"


def test_find(folder, tmp_path, monkeypatch):
    found = find([str(folder)])
    assert sorted(r.folder for r in found.results) == [str(folder / "a"), str(folder / "b")]
    assert found.skipped == [str(folder / "empty")]
    assert [p for p, _ in found.damaged] == [str(folder / "bad")]
    monkeypatch.chdir(tmp_path)             # no ./results: nothing, no error
    assert find([]) == ([], [], [])
    with pytest.raises(UsageError, match="^nowhere: no such folder$"):
        find(["nowhere"])


def test_rows_newest_first_and_those_without_the_quantity(folder):
    found = find([str(folder)])
    items, without = rows(found.results)
    assert [(f["path"], f["quantity"]) for f in items] == [
        (str(folder / "b"), "rtt_from_intended"), (str(folder / "a"), "gap")]
    items, without = rows(found.results, "send_call")
    assert [f["path"] for f in items] == [str(folder / "b")]
    assert [r.folder for r in without] == [str(folder / "a")]


def test_list_results(folder):
    found = find([str(folder)])
    doc = list_results(found, "send_call")
    assert list(doc) == ["format", "results", "skipped", "damaged", "without_quantity"]
    assert doc["format"] == FORMAT and [f["quantity"] for f in doc["results"]] == ["send_call"]
    assert doc["skipped"] == [str(folder / "empty")]
    assert doc["damaged"][0]["path"] == str(folder / "bad") and doc["damaged"][0]["error"]
    assert doc["without_quantity"] == [str(folder / "a")]
    with pytest.raises(UsageError, match="^no result here has the quantity 'rtt'; they have "
                                         "gap, rtt_from_intended, send_call$"):
        list_results(found, "rtt")
    assert list_results(find([str(folder / "empty")]), "rtt")["results"] == []
