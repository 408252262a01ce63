# SPDX-License-Identifier: GPL-2.0-only
"""jtr maxrate's lines: the heading, a step as it ends, the end of a run; its
tables: a row per size and per rate, columns in the order of their heads,
numbers as the records hold them."""
import types

from jtrpy.render import maxrate as table


def test_size_table():
    o = {"slack": 3.0, "max_late": 50.0, "method": "late"}
    sizes = [{"msg_len": 64, "state": "done", "max_rate_hz": 575000, "first_bad_hz": 600000,
              "mb_per_s": 36.8, "at": {"step": 10, "pub_rate_hz": 575001.2,
                                       "sub_rate_hz": 575002.0, "lost": 0, "late_pct": 20.1}},
             {"msg_len": 1500, "state": "none passed", "max_rate_hz": None,
              "first_bad_hz": 1000, "mb_per_s": None, "at": None}]
    lines = table.size_table(o, sizes)
    assert "within 3% of the rate asked" in lines[0] and "at most 50%" in lines[0]
    assert "no send that waited for room" in lines[0]
    # the seeds' method does not look at late sends
    assert "late" not in table.size_table(dict(o, method="seed"), sizes)[0]
    assert lines[1] == table.size_head()
    first = lines[2].split()
    assert first[:5] == ["64", "575,000", "36.8", "0", "20.1%"]
    assert lines[2].endswith("600,000 failed")
    assert lines[3].split()[:3] == ["1500", "-", "-"] and lines[3].endswith("no rate passed")


def test_sweep_table():
    rows = [{"step": 1, "msg_len": 64, "rate_hz": 10000, "achieved_hz": 9999.7,
             "pub_rate_hz": 10000.1, "lost": 0, "pass": True, "verdict": "pass",
             "min_ns": 2011, "mean_ns": 4210.6,
             "p50_ns": 3183, "p99_ns": 4358143, "p99.9_ns": 7536639, "max_ns": 9717771},
            {"step": 2, "msg_len": 64, "rate_hz": 20000, "achieved_hz": None, "lost": None,
             "pass": False, "verdict": "FAIL: sub exit 1, no result", "p50_ns": None,
             "p99_ns": None, "p99.9_ns": None, "max_ns": None}]
    lines = table.sweep_table(rows)
    assert lines[0].split()[:4] == ["size", "rate", "asked", "achieved"]
    # min and avg beside the percentiles, as the rows of the sweeps jtr replaces had
    assert lines[0].split()[4:8] == ["lost", "min", "ns", "avg"]
    assert lines[1].split() == ["64", "10,000", "10,000", "0", "2,011", "4,211", "3,183",
                                "4,358,143", "7,536,639", "9,717,771", "pass"]
    assert lines[2].split()[:10] == ["64", "20,000"] + ["-"] * 8
    assert lines[2].endswith("FAIL: sub exit 1, no result")
    # the columns line up under their heads
    assert len(lines[0]) - len("verdict") == len(lines[1]) - len("pass")


def settings(**kw):
    o = {"kind": "udp", "addr": None, "sizes": [64], "rates": None, "step_ns": 2 * 10**9,
         "from": 10000, "slack": 3.0, "max_late": 50.0, "method": "seed"}
    o.update(kw)
    return o


def test_heading_and_size_line():
    assert table.heading(settings()) == \
        "jtr maxrate: udp, 64-byte messages, 2 s steps, from 10,000 msgs/s, method seed"
    assert table.heading(settings(method="late")).endswith("method late")
    assert table.heading(settings(kind="tcp", addr="h:1", sizes=[64, 128],
                                  rates=[1000, 50000])) == \
        "jtr maxrate: tcp h:1, 64,128-byte messages, 2 s steps at 1,000, 50,000 msgs/s (latency " \
        "from the intended send time)"
    # the seeds' 25-byte row: no intended time in it, so its latency is from the send
    assert table.heading(settings(sizes=[25, 64], rates=[1000])) == \
        "jtr maxrate: udp, 25,64-byte messages, 2 s steps at 1,000 msgs/s (latency from the " \
        "intended send time; from the send at 25 bytes, which carry no intended time)"
    assert table.size_line(settings(sizes=[64, 128]), 1, 128) == \
        "-- 128-byte messages (size 2 of 2)"


def test_step_line():
    rec = {"step": 3, "rate_hz": 20000, "verdict": "pass"}
    assert table.step_line(settings(), rec, None) == table.step_row(rec)
    assert table.step_line(settings(rates=[20000]), rec, None) == \
        "step 3 at 20,000 msgs/s: interrupted"
    row = {"msg_len": 64, "rate_hz": 20000, "verdict": "pass"}
    assert table.step_line(settings(rates=[20000]), rec, row) == table.sweep_row(row)


def test_end_lines():
    def end(o, state, good=None, bad=None, steps=(), sizes=(), sweep=(), mode="search"):
        s = types.SimpleNamespace(steps=list(steps), sizes=list(sizes), sweep=list(sweep))
        return table.end_lines(o, types.SimpleNamespace(
            search=s, good=good, bad=bad, state=state, mode=mode, outdir="results/x"))
    o = settings()
    assert end(o, "done", 8000, 9000) == ["max sustainable rate: 8,000 msgs/s (9,000 failed)",
                                          "results: results/x"]
    assert end(o, "reached --to", 8000)[0] == "max sustainable rate: >= 8,000 msgs/s (--to " \
                                              "reached)"
    assert end(o, "none passed", None, 1)[0] == "no rate passed (lowest tried 1 msgs/s)"
    assert end(o, "interrupted", steps=[{}] * 4)[:2] == [
        "interrupted after 4 steps", "no rate passed (lowest tried - msgs/s)"]
    row = {"msg_len": 64, "rate_hz": 1000, "verdict": "pass"}
    # a sweep's rows were printed as they came: again at the end only with several sizes
    assert end(o, "done", sweep=[row], mode="rates") == ["results: results/x"]
    assert end(settings(sizes=[64, 128]), "done", sweep=[row], mode="rates")[:-1] == \
        table.sweep_table([row])
    sizes = [{"msg_len": 64, "state": "done", "max_rate_hz": 1000, "first_bad_hz": None}]
    assert end(o, "done", sizes=sizes, mode="sizes")[:-1] == table.size_table(o, sizes)
