# SPDX-License-Identifier: GPL-2.0-only
"""results.suite: suite.json is checked on load, and an item's folder is one
inside the suite's folder."""
import json
import os

import pytest

from jtrpy.errors import UsageError
from jtrpy.results.suite import FORMAT, NAME, SuiteIndex, is_suite, item_folder, load_suite


def suite(tmp_path, **kw):
    doc = {"format": FORMAT, "command": ["jtr suite"], "items": [
        {"name": "null", "tool": "null", "folder": "null", "status": "done", "exit_status": 0,
         "command": ["jtr", "null"]}], "pairs": []}
    doc.update(kw)
    (tmp_path / "suite.json").write_text(json.dumps(doc))
    return doc


@pytest.mark.parametrize("change, message", [
    ({"items": None}, "items: expected a list of item objects, got null"),
    ({"items": [{"tool": "null"}]}, "items[0].name: expected a string of at most 256 "
                                    "characters, got nothing (missing)"),
    ({"items": [{"name": "x", "exit_status": "0"}]},
     "items[0].exit_status: expected a whole number from -255 to 255 or null, got a string"),
    ({"pairs": [["a"]]}, "pairs[0]: expected a pair of item names, got a list of 1"),
    ({"pairs": [["a", 5]]}, "pairs[0]: expected a pair of item names, got [a string, 5]"),
    ({"command": "jtr suite"}, "command: expected a list of strings, got a string"),
])
def test_a_damaged_index_names_the_field(tmp_path, change, message):
    suite(tmp_path, **change)
    with pytest.raises(UsageError) as e:
        load_suite(str(tmp_path))
    assert str(e.value) == "%s: %s" % (tmp_path / "suite.json", message)


def test_binary_bytes(tmp_path):
    (tmp_path / "suite.json").write_bytes(b'{"format": "jtr-suite/1", \x00\xff}')
    with pytest.raises(UsageError, match="suite.json: not UTF-8 text"):
        load_suite(str(tmp_path))


def test_item_folders_stay_in_the_suite(tmp_path):
    doc = suite(tmp_path)
    assert item_folder(str(tmp_path), load_suite(str(tmp_path))["items"][0]) == \
        os.path.join(str(tmp_path), "null")
    assert item_folder(str(tmp_path), {"name": "x", "folder": None}) is None
    os.symlink("/etc", str(tmp_path / "link"))
    for folder in ("../elsewhere", "/etc", "link", "null/../.."):
        with pytest.raises(UsageError, match="item x: its folder is outside the suite's"):
            item_folder(str(tmp_path), dict(doc["items"][0], name="x", folder=folder))


def test_the_index_a_suite_writes_reads_back(tmp_path):
    s = SuiteIndex(str(tmp_path), ["jtr suite", "--quick"])
    s.doc["items"].append({"name": "null", "tool": "null", "folder": "null",
                           "command": ["jtr", "null"], "status": "not run", "exit_status": None})
    s.save()
    assert is_suite(str(tmp_path)) and (tmp_path / NAME).is_file()
    assert load_suite(str(tmp_path))["items"][0]["name"] == "null"
