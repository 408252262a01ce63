# SPDX-License-Identifier: GPL-2.0-only
"""drivers.attribute: the keywords a result gives the attribution; jtr
attribute's job on a results folder (the table written into it, or the document
or the table without writing), on jtr watch's dump and on an application's
outlier log, and which folder is a dump."""
import json
import os

import pytest

from jtrpy.drivers.attribute import attribute_job, ends_of, is_dump
from jtrpy.errors import UsageError
from jtrpy.trace import events as E

from ..synthetic import make_result
from .test_advise import T0, TICK_FN, tick

META = {"cpus": [1], "backend": "ebpf", "symbols": {"0x%x" % TICK_FN: "tick_sched_timer"}}
CSV = "cpu,start_ns,length_ns\n1,%d,10000\n" % (T0 + 10**6)


def trace(folder):
    folder.mkdir(parents=True, exist_ok=True)
    E.write_events(str(folder), tick(T0 + 10**6 + 500, TICK_FN), T0, T0 + 10**9, meta=META)


def result(folder):
    run = {"cpu": 1, "start_mono_ns": T0, "end_mono_ns": T0 + 10**9, "duration_ns": 10**9,
           "min_ns": 30, "max_ns": 10_000, "percentiles_ns": {"50": 30},
           "outliers": {"threshold_ns": 1000, "count": 1, "log": "outliers.csv"}}
    trace(folder)
    (folder / "result.json").write_text(json.dumps(make_result(run)))
    (folder / "outliers.csv").write_text(CSV)
    return folder


def test_a_one_sided_probe_names_its_program_on_each_cpu():
    """gap's thread is jtr-gap: a busy loop pinned beside it, switched out as often
    as the probe, is never taken for the probe."""
    r = {"tool": "gap", "runs": [{"cpu": 1}, {"cpu": 3}]}
    assert ends_of(r) == {"programs": {1: "jtr-gap", 3: "jtr-gap"}}
    assert ends_of({"tool": "oslat", "runs": [{"cpu": 1}]}) == {}


def test_two_ends_name_both_programs():
    r = {"tool": "ping", "sides": {"ping": [1], "pong": [0]}, "runs": []}
    assert ends_of(r) == {"sides": {"ping": [1], "pong": [0]},
                          "programs": {1: "jtr-ping", 0: "jtr-pong"}}


OPTS = {"outliers": None, "events": None, "slack_ns": None, "top": None, "by_pid": False,
        "json": False, "write": True, "cross_check": False, "sched_data": None,
        "cross_check_min": None}


def test_is_dump(tmp_path):
    tr = tmp_path / "tr"
    trace(tr)
    (tr / "outliers.csv").write_text(CSV)
    assert is_dump(str(tr)) and not is_dump(str(result(tmp_path / "r")))
    assert not is_dump(str(tmp_path))


def test_a_results_folder(tmp_path):
    d = result(tmp_path / "r")
    before = (d / "result.json").read_text()
    a = attribute_job([str(d)], dict(OPTS, json=True))
    assert [(c["category"], c["total_ns"]) for c in a["causes"]] == [("timer tick", 10_000)]
    lines = attribute_job([str(d)], dict(OPTS, write=False))
    assert any("timer tick" in line for line in lines)
    assert (d / "result.json").read_text() == before and not (d / "attribution.txt").exists()
    assert attribute_job([str(d)], OPTS) == lines
    assert (d / "attribution.txt").read_text() == "\n".join(lines) + "\n"
    assert json.loads((d / "result.json").read_text())["attribution"]["causes"] == a["causes"]
    with pytest.raises(UsageError, match="^--sched-data and --cross-check-min go with "):
        attribute_job([str(d)], dict(OPTS, cross_check_min=10))
    with pytest.raises(UsageError, match="^--cross-check: .*sched.data: no such file"):
        attribute_job([str(d)], dict(OPTS, cross_check=True, write=False))


def test_a_dump_and_an_applications_log(tmp_path):
    tr = tmp_path / "tr"
    trace(tr)
    (tr / "outliers.csv").write_text(CSV)
    a = attribute_job([str(tr)], dict(OPTS, json=True))
    assert a["outliers"]["file"] == os.path.join(str(tr), "outliers.csv")
    assert a["causes"][0]["category"] == "timer tick"
    assert not (tr / "attribution.txt").exists()
    app = dict(OPTS, outliers=str(tr / "outliers.csv"), events=str(tr))
    assert attribute_job([], app) == attribute_job([str(tr)], OPTS)
    for dirs, opts, message in (
            ([str(tr)], app, "explains that file; give no results folder beside it"),
            ([], dict(app, events=None), "give the trace to charge them against"),
            ([], dict(app, events=str(tmp_path / "no")), "no such file or folder"),
            ([], dict(app, cross_check=True), "--cross-check goes with a results folder")):
        with pytest.raises(UsageError, match=message):
            attribute_job(dirs, opts)
