# SPDX-License-Identifier: GPL-2.0-only
"""jtr import in-process: what it refuses, the summary line it prints (max in us
for the rt-tests, in ns for a log), the results folder it writes (the original
kept beside result.json, -o or results/DATE-HOST-TOOL from the file's own time
and host), and the notes it passes on."""
import json
import os
import time

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.commands.import_ import summary_line
from jtrpy.results.result import load_result

from ..formats.test_imports import CYC, OSLAT


@pytest.mark.parametrize("args,message", [
    ([], "give the file oslat or cyclictest wrote with --json=FILE, or an HdrHistogram log "
         "with --hlog FILE; see 'jtr import --help'"),
    (["--unit", "us", "x"], "--unit goes with --hlog (the unit of an HdrHistogram log's "
                            "values)"),
    (["-o", "out", "a", "b"], "-o names one folder: import one file at a time with -o, or "
                              "give no -o"),
])
def test_usage_errors(capsys, args, message):
    assert jtr(["import"] + args) == 2
    assert capsys.readouterr().err == "jtr import: %s\n" % message


def test_summary_line():
    r = {"tool": "oslat", "runs": [{"name": "cpu1", "max_ns": 12_999, "samples": 10},
                                   {"name": "cpu2", "max_ns": 2000, "samples": 5}]}
    assert summary_line("out", r) == "out: oslat, 2 runs (cpu1, cpu2), 15 samples, max 12 us"
    r = {"tool": "hlog", "runs": [{"name": "hlog", "max_ns": 12_999, "samples": 1}]}
    assert summary_line("o", r) == "o: hlog, 1 run (hlog), 1 samples, max 12999 ns"


def test_an_oslat_file_into_a_folder_of_its_own(tmp_path, capsys):
    src = tmp_path / "oslat.json"
    src.write_text(json.dumps(OSLAT))
    out = tmp_path / "o"
    assert jtr(["import", "-o", str(out), str(src)]) == 0
    r = load_result(str(out))
    assert r["tool"] == "oslat" and r["files"]["source"] == "oslat.json"
    assert (out / "oslat.json").read_text() == src.read_text()
    assert capsys.readouterr().out == summary_line(str(out), r) + "\n"


@pytest.fixture
def two_hours_east():
    """Local time UTC+2 (POSIX TZ), put back after."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = "XXX-2"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def test_the_default_folder_is_named_from_the_file(tmp_path, capsys, monkeypatch,
                                                   two_hours_east):
    """The file's start (07:42:21 UTC) in local time, and its host; a second
    import of the same beside the first."""
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "cyc.json"
    src.write_text(json.dumps(CYC))
    assert jtr(["import", str(src), str(src)]) == 0
    made = sorted(os.listdir(tmp_path / "results"))
    assert made == ["20261122-094221-elsewhere-cyclictest",
                    "20261122-094221-elsewhere-cyclictest-2"]
    out = capsys.readouterr().out
    assert out.count("results/20261122-094221-elsewhere-cyclictest") == 2
    # its notes are passed on, but for the host facts the result lists itself
    assert out.count("  note: cyclictest records no duration per thread") == 2
    assert "host facts" not in out
