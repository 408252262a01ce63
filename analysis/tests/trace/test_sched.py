# SPDX-License-Identifier: GPL-2.0-only
"""trace.sched: perf sched timehist's lines read as slices, and sched.data read
back through a stand-in perf (the lines perf prints here, given by the test):
the slices sorted per CPU, the names and exiting threads taken from the
sched_switch records, a failing timehist said in one line."""
import json
import os
import sys

import pytest

from jtrpy.errors import UsageError
from jtrpy.trace import perf, sched
from jtrpy.trace.sched import LINE, timehist_slice


def test_timehist_lines():
    """The lines perf sched timehist prints here: a thread, a process, idle, an
    exiting thread (its sample's tid is -1)."""
    rows = {
        "   12117.186312 [0001]  bash[6817/6774]                     0.000      0.032"
        "      0.077 ": ("12117", "186312", "0001", "bash", "6817", "6774", "0", "077"),
        "   12116.260063 [0001]  kcompactd0[36]                      0.000      0.000"
        "      3.225 ": ("12116", "260063", "0001", "kcompactd0", "36", None, "3", "225"),
        "   12180.410497 [0000]  <idle>                              0.000      0.000"
        "      7.095 ": ("12180", "410497", "0000", "<idle>", None, None, "7", "095"),
        "   12315.490837 [0001]  :-1[-1/8867]                        0.000      0.000"
        "    234.127 ": ("12315", "490837", "0001", ":-1", "-1", "8867", "234", "127"),
        "   12117.832039 [0001]  rcu tasks[1]                      522.255      0.000"
        "      1.000 ": ("12117", "832039", "0001", "rcu tasks", "1", None, "1", "000"),
    }
    for line, want in rows.items():
        m = LINE.match(line)
        assert m and tuple(x.strip() if x else x for x in m.groups()) == want, line
    assert not LINE.match("           time    cpu  task name     wait time  sch delay   run time")
    assert not LINE.match("--------------- ------  ------------------------------  ---------")


def test_timehist_slices():
    """Slices from the lines: a thread perf cannot name (one of another pid
    namespace, as the injector here) is ":TID" with no brackets in perf 6.1,
    and keeps its tid; idle is tid 0; an exiting thread's sample tid is -1."""
    assert timehist_slice("     618.708318 [0001]  :8167                               0.000"
                          "     34.825      0.199 ") == (
        1, 8167, 8167, ":8167", 618_708_318_000 - 199_000, 618_708_318_000)
    assert timehist_slice("   12180.410497 [0000]  <idle>                              0.000"
                          "      0.000      7.095 ")[1:3] == (0, 0)
    assert timehist_slice("   12117.186312 [0001]  bash[6817/6774]                     0.000"
                          "      0.032      0.077 ")[1:4] == (6817, 6774, "bash")
    assert timehist_slice("   12315.490837 [0001]  :-1[-1/8867]                        0.000"
                          "      0.000    234.127 ")[1:3] == (-1, 8867)
    assert timehist_slice("Samples do not have callchains.") is None


def test_a_task_it_cannot_place_is_tid_minus_one():
    """A bare name that is neither ':TID' nor idle: tid and pid -1."""
    s = timehist_slice("   10.000002 [0002]  mystery        0.000      0.000      0.001 ")
    assert s == (2, -1, -1, "mystery", 10_000_001_000, 10_000_002_000)


# --- reading sched.data through a stand-in perf ----------------------------------

FAKE = """#!%s
import json, os, sys
with open(os.environ["FAKE_ARGS"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:3] == ["sched", "timehist"]:
    if sys.argv[4].endswith("bad.data"):
        print("perf: sched.data: not a perf.data file", file=sys.stderr)
        print("  ", file=sys.stderr)
        sys.exit(1)
    print("           time    cpu  task name     wait time  sch delay   run time")
    print("     100.000050 [0002]  app[40/40]          0.000      0.000      0.040 ")
    print("     100.000020 [0001]  :-1[-1/55]          0.000      0.000      0.010 ")
    print("     100.000030 [0002]  :41                 0.000      0.000      0.005 ")
    print("     100.000010 [0001]  <idle>              0.000      0.000      0.010 ")
elif sys.argv[1] == "script":
    print("      41 [002]   100.000030000: sched:sched_switch: prev_comm=my app prev_pid=41 "
          "prev_prio=120 prev_state=R ==> next_comm=app next_pid=40 next_prio=120")
    print("      -1 [001]   100.000020499: sched:sched_switch: prev_comm=leaving prev_pid=55 "
          "prev_prio=120 prev_state=X ==> next_comm=swapper/1 next_pid=0 next_prio=120")
    print("       7 [001]   100.000001000: sched:sched_wakeup: comm=x pid=8 prio=120 "
          "target_cpu=001")
    print("garbage")
elif sys.argv[1] == "report":
    print("Aggregated stats:\\n          LOST events:          3  ( 0.1%%)")
"""


@pytest.fixture
def fake_perf(tmp_path, monkeypatch):
    path = tmp_path / "perf"
    path.write_text(FAKE % sys.executable)
    path.chmod(0o755)
    monkeypatch.setattr(perf, "perf_path", lambda: str(path))
    args = tmp_path / "args"
    monkeypatch.setenv("FAKE_ARGS", str(args))
    return lambda: [json.loads(x) for x in args.read_text().splitlines()]


def test_read_timehist_sorts_per_cpu_and_names_the_cpus(fake_perf):
    slices = sched.read_timehist("x/sched.data", [2, 1])
    assert [(s[0], s[5]) for s in slices] == [(1, 100_000_010_000), (1, 100_000_020_000),
                                             (2, 100_000_030_000), (2, 100_000_050_000)]
    assert slices[3] == (2, 40, 40, "app", 100_000_010_000, 100_000_050_000)
    assert fake_perf()[0] == ["sched", "timehist", "-i", "x/sched.data", "-C", "1,2"]
    sched.read_timehist("x/sched.data", None)
    assert fake_perf()[1] == ["sched", "timehist", "-i", "x/sched.data"]


def test_a_failing_timehist_says_its_last_line(fake_perf):
    with pytest.raises(UsageError) as e:
        sched.read_timehist("bad.data", [1])
    assert str(e.value) == ("perf sched timehist -i bad.data failed: perf: sched.data: not "
                            "a perf.data file; " + sched.HOW_TO_RECORD)


def test_read_sched_puts_back_names_and_exiting_threads(fake_perf):
    slices, comms, lost = sched.read_sched("x/sched.data", [1, 2])
    # the comm with a space, and the exiting thread's pid and name from its record
    # (its time truncated to the us, as timehist prints it)
    assert comms == {41: "my app", 40: "app", 55: "leaving", 0: "swapper/1"}
    assert slices[1] == (1, 55, 55, "leaving", 100_000_010_000, 100_000_020_000)
    assert slices[2][1:4] == (41, 41, ":41")     # timehist's own name is kept
    assert lost == 3
    assert [a[0] for a in fake_perf()] == ["sched", "script", "report"]


def test_why_it_cannot_run(monkeypatch):
    monkeypatch.setenv("JTR_NO_PERF", "1")
    assert sched.unavailable() == sched.record_unavailable() == (
        "--cross-check needs perf sched record: perf is switched off for this run "
        "(JTR_NO_PERF is set)")
    monkeypatch.setattr(perf, "perf_path", lambda: None)
    assert sched.timehist_unavailable().startswith(
        "--cross-check needs perf sched timehist: perf is not installed (")
    monkeypatch.setattr(perf, "perf_path", lambda: "/usr/bin/perf")
    assert sched.timehist_unavailable() is None


def test_recorder_command(monkeypatch):
    monkeypatch.setattr(perf, "perf_path", lambda: "/x/perf")
    rec = sched.SchedRecorder("1-2")
    try:
        assert rec.command() == ["/x/perf", "sched", "record", "-q", "-k", "CLOCK_MONOTONIC",
                                 "-C", "1-2", "-o", os.path.join(rec.dir, sched.NAME)]
    finally:
        rec.cleanup()
    assert not os.path.exists(rec.dir)
