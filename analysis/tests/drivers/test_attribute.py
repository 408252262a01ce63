# SPDX-License-Identifier: GPL-2.0-only
"""drivers.attribute: the keywords a result gives the attribution."""
import json

from jtrpy.drivers.attribute import ends_of
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
