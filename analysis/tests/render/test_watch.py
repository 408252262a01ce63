# SPDX-License-Identifier: GPL-2.0-only
"""render/watch: the table, the first, progress, dump and last lines people read."""
import argparse

from jtrpy.drivers.watch import Outcome
from jtrpy.render import watch as show


def st():
    def cat(name, rows):
        return {"category": name, "count": sum(r[1] for r in rows),
                "ns": sum(r[2] for r in rows), "hist": [], "names": rows}
    return {"records": 10, "dropped": 0, "longest_ns": 300_000, "cpus": [{
        "cpu": 2, "app": "myserver", "app_ns": 9_500_000_000, "categories": [
            cat("timer tick", [["local timer", 100, 1_000_000, 100]]),
            cat("task preemption", [["jtr-inject", 20, 6_000_000, 20],
                                    ["kworker/2:1", 0, 0, 3]]),
            cat("page fault", [["user", 0, 0, 5], ["kernel", 0, 0, 2]])]}]}


def test_progress_counts_page_faults_apart():
    """A page fault is no interruption: the progress line counts it apart (a
    watch once said 13,989 interruptions, 12,977 of them page faults)."""
    s = st()
    s["cpus"][0]["categories"][2] = {"category": "page fault", "count": 12977, "ns": 0,
                                     "hist": [], "names": [["user", 12977, 0, 12977]]}
    p = show.progress_line(s, 5)
    assert p.startswith("watch 0m05s: interruptions CPU 2 120, 7.00 ms; page faults 12977;"), p


def test_table_largest_time_first_and_only_what_interrupted():
    lines = show.table(st(), 10.0)
    assert lines[0].split() == ["cpu", "category", "name", "count", "per", "s", "time",
                                "share"]
    assert lines[1].split()[:5] == ["2", "task", "preemption", "jtr-inject", "20"]
    assert "85.7 %" in lines[1] and "2.0" in lines[1]
    assert "local timer" in lines[2] and len(lines) == 4
    assert not any("kworker" in line for line in lines)   # events only, no interruption
    # page faults are kernel events without a duration: under the table, with the
    # application the watch saw
    assert lines[3] == ("CPU 2: application myserver ran 9.50 s; page faults (no duration): "
                        "5 user, 2 kernel")


def test_empty_table():
    assert show.table({"cpus": []}, 1) == ["no interruption seen"]
    assert show.table({"cpus": [{"cpu": 1, "app": "", "app_ns": 0, "categories": []}]}, 1) == [
        "no interruption seen", "CPU 1: the application was not seen"]


def test_app_text():
    assert show.app_text(["myserver", "4321"]) == "the application myserver, 4321"
    assert "longest-running comm" in show.app_text([])


def test_progress_and_dump_lines():
    p = show.progress_line(st(), 65.2)
    assert p.startswith("watch 1m05s: interruptions CPU 2 120, 7.00 ms;")
    d = show.dump_line({"dump": "out/dump-x", "records": 5, "outliers": 2, "trigger": {
        "cpu": 2, "category": "task preemption", "name": "spin", "length_ns": 1_500_000}})
    assert d == ("dump: out/dump-x (task preemption spin, 1.50 ms on CPU 2; 5 events, "
                 "2 interruptions): jtr attribute out/dump-x")


def test_first_line_says_what_is_watched_and_where_it_goes():
    o = argparse.Namespace(cpus=[2, 3], app=["myserver"], listen=None, textfile=None,
                           dump_above=None)
    assert show.watching_line(o) == ("watching CPUs 2, 3 for the application myserver: "
                                     "no --listen; Ctrl-C to stop")
    o = argparse.Namespace(cpus=[2], app=[], listen=("127.0.0.1", 9477), textfile="x.prom",
                           dump_above=100_000)
    assert show.watching_line(o) == (
        "watching CPU 2 for the application (each CPU's longest-running comm): metrics on "
        "http://127.0.0.1:9477/metrics, textfile x.prom, dumps above 100.0 us; Ctrl-C to stop")


def test_end_lines_are_the_table_then_how_it_ended():
    lines = show.end_lines(Outcome(st(), 10.0, "out", False, 0))
    assert lines == show.table(st(), 10.0) + ["watch: done; results: out"]
    assert show.end_lines(Outcome(st(), 10.0, "out", True, 130))[-1] == \
        "watch: stopped; results: out"
    # a full disk: the table is still shown, and the last line says watch.json is not
    lines = show.end_lines(Outcome(st(), 10.0, "out", False, 1,
                                   "cannot write out/watch.json: No space left on device"))
    assert lines[:-1] == show.table(st(), 10.0)
    assert lines[-1] == ("watch: done; watch.json not written (cannot write out/watch.json: "
                         "No space left on device): the counts above are all that is kept")
