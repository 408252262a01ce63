# SPDX-License-Identifier: GPL-2.0-only
"""drivers.import_: nothing is read before the job is iterated; each file becomes
a results folder with the original beside result.json, -o or one named from the
file's own time and host; an HdrHistogram log's unit is applied; a file that
cannot be read stops the job after the folders already written."""
import json
import os

import pytest

from jtrpy.drivers.import_ import import_job
from jtrpy.errors import UsageError
from jtrpy.formats import hdrlog
from jtrpy.results.result import load_result

from ..formats.test_imports import CYC, OSLAT


def test_nothing_is_read_until_iterated(tmp_path):
    job = import_job([str(tmp_path / "none.json")], str(tmp_path / "o"))
    assert not os.path.exists(tmp_path / "o")
    with pytest.raises(UsageError, match="none.json"):
        next(job)


def test_into_the_folder_given(tmp_path):
    src = tmp_path / "oslat.json"
    src.write_text(json.dumps(OSLAT))
    out = str(tmp_path / "o")
    ((folder, doc),) = list(import_job([str(src)], out))
    assert folder == out and doc["tool"] == "oslat"
    r = load_result(out)
    assert r["files"] == {"source": "oslat.json"} and r["runs"] == doc["runs"]
    assert (tmp_path / "o" / "oslat.json").read_text() == src.read_text()


def test_default_folders_and_a_bad_file_after_good_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "cyc.json"
    src.write_text(json.dumps(CYC))
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    got = []
    with pytest.raises(UsageError, match="bad.json: unknown format"):
        for folder, _ in import_job([str(src), str(src), str(bad)]):
            got.append(folder)
    assert len(got) == 2 and got[1] == got[0] + "-2"
    assert got[0].startswith("results/2026112") and got[0].endswith("-elsewhere-cyclictest")
    assert sorted(os.listdir("results")) == sorted(os.path.basename(g) for g in got)
    assert load_result(got[1])["host"]["hostname"] == "elsewhere"


def test_an_hlog_in_its_unit(tmp_path):
    src = tmp_path / "app.hlog"
    src.write_text("Tag=svc,0.0,1.0,0.1,%s\n" % hdrlog.encode([(30, 5)], 2))
    (_, ns), = import_job([str(src)], str(tmp_path / "ns"), hlog=True)
    (_, us), = import_job([str(src)], str(tmp_path / "us"), hlog=True, unit="us")
    assert ns["tool"] == us["tool"] == "hlog"
    # 30 us, at the highest value of its bucket on the grid of 2 significant digits
    assert ns["runs"][0]["max_ns"] == 30 and us["runs"][0]["max_ns"] // 1000 == 30
    assert (tmp_path / "us" / "source.hlog").read_text() == src.read_text()
