"""render/watch: the table, the progress and dump lines people read."""
from jtrpy.render import watch as show


def st():
    def cat(name, rows):
        return {"category": name, "count": sum(r[1] for r in rows),
                "ns": sum(r[2] for r in rows), "hist": [], "names": rows}
    return {"records": 10, "dropped": 0, "longest_ns": 300_000, "cpus": [{"cpu": 2, "categories": [
        cat("timer tick", [["local timer", 100, 1_000_000, 100]]),
        cat("task preemption", [["jtr-inject", 20, 6_000_000, 20], ["kworker", 0, 0, 3]]),
        cat("page fault", [["user", 5, 0, 5]])]}]}


def test_table_largest_time_first_and_only_what_interrupted():
    lines = show.table(st(), 10.0)
    assert lines[0].split() == ["cpu", "category", "name", "count", "per", "s", "time",
                                "share"]
    assert lines[1].split()[:5] == ["2", "task", "preemption", "jtr-inject", "20"]
    assert "85.7 %" in lines[1] and "2.0" in lines[1]
    assert "local timer" in lines[2] and "page fault" in lines[3]
    assert not any("kworker" in line for line in lines)   # events only, no interruption


def test_empty_table():
    assert show.table({"cpus": []}, 1) == ["no interruption seen"]


def test_progress_and_dump_lines():
    p = show.progress_line(st(), 65.2)
    assert p.startswith("watch 1m05s: interruptions CPU 2 125, 7.00 ms;")
    d = show.dump_line({"dump": "out/dump-x", "records": 5, "outliers": 2, "trigger": {
        "cpu": 2, "category": "task preemption", "name": "spin", "length_ns": 1_500_000}})
    assert d == ("dump: out/dump-x (task preemption spin, 1.50 ms on CPU 2; 5 events, "
                 "2 interruptions): jtr attribute out/dump-x")
