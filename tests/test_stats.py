# SPDX-License-Identifier: GPL-2.0-only
"""Periodic statistics (stats.csv and transport.stats), the run's phases
(start-up, steady state, whole run), the per-sample latency file, the CPU each
receive mode costs, the epoll receive mode, IPv6 addresses, pong's results
folder, and a peer killed mid-run, through the front end."""
import csv
import datetime
import math
import os
import re
import signal
import socket
import time

import numpy
import pytest
from conftest import assert_usage_errors, load, run_jtr
from test_transports import addr_for, finish, free_port, kill_all, spawn, wait_ready

from jtrpy.results.result import load_result

# what is counted and written (rows adding up to the totals, files, phases) holds
# beside the other tests (all passed beside a busy loop on each CPU); the CPU
# share a receiver takes is measured alone

HEADER = ("t_s,utc,mono_ns,msgs_sent,bytes_sent,msgs_recv,bytes_recv,lat_samples,lat_avg_ns,"
          "lat_stddev_ns,lat_min_ns,lat_max_ns,cpu_pct,send_cpu_pct,recv_cpu_pct,rss_mb")
COUNTS = ("msgs_sent", "bytes_sent", "msgs_recv", "bytes_recv", "lat_samples")
PCTS = [("50", 50), ("90", 90), ("99", 99), ("99.9", 99.9), ("99.99", 99.99),
        ("99.999", 99.999)]
DGRAM = ("udp", "mcast", "unix-dgram")


def read_stats(folder, name="stats.csv"):
    """The stats file as a list of dicts (empty fields: None), after checking the header."""
    with open(os.path.join(folder, name)) as f:
        assert f.readline().rstrip("\n") == HEADER
        rows = []
        for rec in csv.reader(f):
            row = {}
            for k, v in zip(HEADER.split(","), rec):
                row[k] = None if v == "" else v if k == "utc" else int(v) if k == "mono_ns" \
                    else float(v)
            rows.append(row)
    return rows


def same_rows(csv_rows, json_rows):
    """The CSV and result.json hold the same rows (the CSV rounds to its decimals)."""
    assert len(csv_rows) == len(json_rows)
    for c, j in zip(csv_rows, json_rows):
        assert c.keys() == j.keys()
        for k, v in c.items():
            w = j[k]
            if v is None or w is None or k == "utc":
                assert v == w, (k, c, j)
            else:
                assert abs(v - w) <= 0.01 + 1e-9 * abs(w), (k, v, w)


def epoch(utc):
    """An ISO 8601 UTC time with milliseconds and Z, as seconds since 1970."""
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", utc), utc
    t = datetime.datetime.strptime(utc, "%Y-%m-%dT%H:%M:%S.%fZ")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp()


def check_times(res):
    """Each row's utc and mono_ns: increasing, read at the same moment, inside the
    run, the same instant as t_s, --stats-every apart (the last row is the short
    one at the end). A row comes when the hot thread answers, at most its idle
    slice (100 ms) late."""
    rows, every = res["transport"]["stats"], res["transport"]["stats_every_ns"]
    mono = [r["mono_ns"] for r in rows]
    wall = [epoch(r["utc"]) for r in rows]
    assert mono == sorted(set(mono)) and wall == sorted(wall)
    start, end = epoch(res["started_at"]), epoch(res["ended_at"])
    # CLOCK_REALTIME read with CLOCK_MONOTONIC: each row's offset between them
    # (utc in ms) where the program's own start and end put it; on CI's host
    # CLOCK_REALTIME was stepped all along (its offset grew 100 ms in 18 s), so
    # it may move between the two, never outside
    offsets = (start - res["started_mono_ns"] / 1e9, end - res["ended_mono_ns"] / 1e9)
    for r, w in zip(rows, wall):
        assert start - 1 <= w <= end + 1, (r, res["started_at"], res["ended_at"])
        assert res["started_mono_ns"] <= r["mono_ns"] <= res["ended_mono_ns"]
        assert min(offsets) - 0.003 < w - r["mono_ns"] / 1e9 < max(offsets) + 0.003, \
            (r, offsets)
        assert abs((r["mono_ns"] - mono[0]) / 1e9 - (r["t_s"] - rows[0]["t_s"])) < 0.0011
    gaps = [b - a for a, b in zip(mono[:-2], mono[1:-1])]
    assert gaps, rows
    assert all(abs(g - every) <= 0.1 * every + 110e6 for g in gaps), gaps
    assert abs(sum(gaps) - len(gaps) * every) <= 0.01 * len(gaps) * every + 110e6, gaps


def check_phases(res, text=None):
    """transport.phases against the rows: the start-up is the rows whose middle
    lies within the first startup_ns of traffic, the steady state the rest up to
    the last row with traffic; start-up + steady = whole; the whole run's latency
    is the rows' combined; rates are counts over durations. @text: the summary,
    whose whole-run line must say the same."""
    t = res["transport"]
    rows, su, st, wh = t["stats"], *(t["phases"][k] for k in ("startup", "steady", "whole"))
    busy = [i for i, r in enumerate(rows) if r["msgs_sent"] or r["msgs_recv"]]
    first, last = busy[0], busy[-1]
    ends = [r["mono_ns"] for r in rows]
    if first:
        assert wh["start_mono_ns"] == ends[first - 1]
    assert wh["start_mono_ns"] < ends[first] and wh["end_mono_ns"] == ends[last]
    assert wh["rows"] == last - first + 1
    starts = [wh["start_mono_ns"]] + ends[first:last]
    mids = [(a + b) / 2 - wh["start_mono_ns"] for a, b in zip(starts, ends[first:last + 1])]
    n_su = sum(m < t["startup_ns"] for m in mids)
    assert (su["rows"] if su else 0) == n_su, (mids, t["startup_ns"])
    assert (st is None) == (n_su == wh["rows"])
    parts = [p for p in (su, st) if p]
    for k in ("rows", "duration_ns") + COUNTS:
        assert sum(p[k] for p in parts) == wh[k], k
    for k in COUNTS:
        assert wh[k] == sum(r[k] for r in rows), k
    assert parts[0]["start_mono_ns"] == wh["start_mono_ns"]
    assert parts[-1]["end_mono_ns"] == wh["end_mono_ns"]
    if su and st:
        assert su["end_mono_ns"] == st["start_mono_ns"] == ends[first + su["rows"] - 1]
    for p in parts + [wh]:
        secs = p["duration_ns"] / 1e9
        assert p["duration_ns"] == p["end_mono_ns"] - p["start_mono_ns"]
        for d in ("sent", "recv"):
            assert p["msgs_%s_per_s" % d] == pytest.approx(p["msgs_" + d] / secs, abs=0.001)
            assert p["mb_%s_per_s" % d] == pytest.approx(p["bytes_" + d] / 1e6 / secs,
                                                         abs=1e-6)
    # CPU: the rows' process CPU time over the phase's time
    spans = [b - a for a, b in zip(starts, ends[first:last + 1])]
    cpu = sum(r["cpu_pct"] * s for r, s in zip(rows[first:last + 1], spans)) / sum(spans)
    assert wh["cpu_pct"] == pytest.approx(cpu, abs=0.02)
    # latency: min, max, and the mean and deviation combined from n, mean and sd
    lat = [r for r in rows if r["lat_samples"]]
    if not lat:
        assert wh["lat_samples"] == 0 and wh["lat_avg_ns"] is None
    else:
        n = sum(r["lat_samples"] for r in lat)
        mean = sum(r["lat_samples"] * r["lat_avg_ns"] for r in lat) / n
        var = sum(r["lat_samples"] * (r["lat_stddev_ns"] ** 2 + r["lat_avg_ns"] ** 2)
                  for r in lat) / n - mean ** 2
        assert wh["lat_min_ns"] == min(r["lat_min_ns"] for r in lat)
        assert wh["lat_max_ns"] == max(r["lat_max_ns"] for r in lat)
        assert wh["lat_avg_ns"] == pytest.approx(mean, abs=0.1)
        # the rows round mean and sd to 0.1 ns: the squares to about 0.1 x their size
        slack = 0.1 * (max(r["lat_avg_ns"] + r["lat_stddev_ns"] for r in lat) + mean) + 1
        assert abs(wh["lat_stddev_ns"] ** 2 - var) <= slack + 0.1 * wh["lat_stddev_ns"]
    if text is not None:
        check_whole_line(text, wh)


def check_whole_line(text, wh):
    """summary's "whole run:" line: seconds, then messages, MB, MB/s and Mbit/s of
    each way, as the phase says."""
    line = [ln for ln in text.splitlines() if ln.startswith("whole run: ")]
    assert len(line) == 1, text
    secs = float(re.match(r"whole run: ([\d.]+) s", line[0]).group(1))
    assert secs == pytest.approx(wh["duration_ns"] / 1e9, abs=0.0006)
    ways = re.findall(r"(sent|received) (\d+) msgs, ([\d.]+) MB, ([\d.]+) MB/s "
                      r"\(([\d.]+) Mbit/s\)", line[0])
    assert ways, line
    for way, msgs, mb, mbs, mbit in ways:
        d = "sent" if way == "sent" else "recv"
        assert int(msgs) == wh["msgs_" + d]
        assert round(float(mb) * 1e6) == wh["bytes_" + d]
        assert float(mbs) == pytest.approx(wh["mb_%s_per_s" % d], abs=0.0006)
        assert float(mbit) == pytest.approx(8 * wh["mb_%s_per_s" % d], abs=0.0006)


def pubsub(tmp_path, kind, validate, count=2000, rate=20000, addr=None, pub_args=(),
           sub_args=(), tag="", outs=None):
    """One publisher and one subscriber; (pub result, sub result, pub dir, sub dir).
    @outs: a list to append the subscriber's stdout to."""
    addr = addr or addr_for(kind, tmp_path)
    sdir, pdir = tmp_path / ("sub" + tag), tmp_path / ("pub" + tag)
    sub = spawn("sub", "-T", kind, "-P", addr, "--wait", "20", "-o", sdir, *sub_args)
    procs = [sub]
    try:
        if kind in DGRAM:
            wait_ready(sub)
        pub = spawn("pub", "-T", kind, "-P", addr, "--wait", "20", "-n", count, "-r", rate,
                    "-w", "100", "-q", "-o", pdir, *pub_args)
        procs.append(pub)
        rc, _, err = finish(pub)
        assert rc == 0, err
        rc, out, err = finish(sub)
        assert rc == 0, err
        if outs is not None:
            outs.append(out)
        return validate(load(pdir)), validate(load(sdir)), pdir, sdir
    finally:
        kill_all(procs)


def pingpong(tmp_path, kind, validate, count=500, rate=2000, addr=None, args=(), pong_args=()):
    """One ping through one pong; (ping result, ping dir)."""
    addr = addr or addr_for(kind, tmp_path)
    pong = spawn("pong", "-T", kind, "-P", addr, "-q", "--wait", "30", *pong_args)
    try:
        out = tmp_path / "ping"
        p = run_jtr("ping", "-T", kind, "-P", addr, "-n", count, "-r", rate, "-w", "20", "-o",
                    out, "-q", "--wait", "20", *args, timeout=120)
        assert p.returncode == 0, p.stderr
        rc, _, err = finish(pong)
        assert rc == 0, err
        return validate(load(out)), out
    finally:
        kill_all([pong])


def check_sub_rows(res, folder, msg_len=64):
    """A subscriber's rows add up to its totals and agree with its histogram."""
    t = res["transport"]
    rows = read_stats(folder)
    same_rows(rows, t["stats"])
    run = res["runs"][0]
    assert sum(r["msgs_recv"] for r in rows) == t["received"]
    assert sum(r["bytes_recv"] for r in rows) == t["received"] * msg_len
    assert sum(r["msgs_sent"] for r in rows) == 0
    n = sum(r["lat_samples"] for r in rows)
    assert n == run["samples"] == t["measured"]
    with_lat = [r for r in t["stats"] if r["lat_samples"]]
    assert min(r["lat_min_ns"] for r in with_lat) == run["min_ns"]
    assert max(r["lat_max_ns"] for r in with_lat) == run["max_ns"]
    mean = sum(r["lat_avg_ns"] * r["lat_samples"] for r in with_lat) / n
    assert abs(mean - run["mean_ns"]) <= 0.05 * len(with_lat) + 1e-6 * run["mean_ns"]
    for r in with_lat:
        assert r["lat_min_ns"] <= r["lat_avg_ns"] + 0.05 <= r["lat_max_ns"] + 0.1
    for r in t["stats"]:
        assert r["rss_mb"] > 0 and r["cpu_pct"] >= 0 and r["recv_cpu_pct"] >= 0
        assert r["send_cpu_pct"] is None
    assert [r["t_s"] for r in t["stats"]] == sorted(r["t_s"] for r in t["stats"])
    check_times(res)
    check_phases(res, (folder / "summary.txt").read_text())
    assert t["phases"]["whole"]["msgs_recv"] == t["received"]
    return rows


def test_stats_rows_add_up_to_the_totals(tmp_path, validate):
    # 6000 messages at 2000/s: at least 3 s of receiving, so at least 5 rows of 0.5 s
    outs = []
    pub, sub, pdir, sdir = pubsub(tmp_path, "udp", validate, count=6000, rate=2000,
                                  pub_args=["--stats-every", "500ms"],
                                  sub_args=["--stats-every", "500ms", "--legacy-output"],
                                  outs=outs)
    rows = check_sub_rows(sub, sdir)
    assert len(rows) >= 5
    assert sub["transport"]["stats_every_ns"] == 500 * 10**6
    # the start-up by default: one stats interval, at least 1 s; then a steady state
    assert sub["transport"]["startup_ns"] == pub["transport"]["startup_ns"] == 10**9
    for res in (sub, pub):
        ph = res["transport"]["phases"]
        assert ph["startup"]["rows"] >= 2 and ph["steady"]["rows"] >= 2, ph
        assert ph["startup"]["duration_ns"] == pytest.approx(10**9, abs=0.3e9)
    # the table in summary.txt and on stdout (no -q, --legacy-output), the same lines
    text = (sdir / "summary.txt").read_text()
    table = text[text.index("\nphases ("):text.index("\nCPU: process")]
    assert table in outs[0]
    assert re.search(r"\n  phase +start-up +steady +whole\n", table), table
    for want in ("MB = 10^6 bytes", "the first 1.000 s of traffic", "received MB/s",
                 "latency stddev us", "CPU % (process)"):
        assert want in table, want
    assert "sent msgs" not in table
    assert sub["files"]["stats"] == "stats.csv"
    assert sub["transport"]["rss_max_mb"] >= max(r["rss_mb"] for r in rows) - 0.01
    prow = read_stats(pdir)
    same_rows(prow, pub["transport"]["stats"])
    pt = pub["transport"]
    assert len(prow) >= 5
    assert sum(r["msgs_sent"] for r in prow) == pt["sent_total"] == 6100
    assert sum(r["bytes_sent"] for r in prow) == 6100 * 64
    assert all(r["msgs_recv"] == 0 and r["lat_samples"] == 0 and r["recv_cpu_pct"] is None
               for r in prow)
    check_times(pub)
    check_phases(pub, (pdir / "summary.txt").read_text())
    assert pub["transport"]["phases"]["whole"]["msgs_sent"] == 6100
    # the sending thread's CPU is counted
    assert pt["send_cpu_pct"] > 0 and pt["cpu_pct"] > 0
    text = (sdir / "summary.txt").read_text()
    for want in ("--- inputs ---", "command:", "receive:", "stats every:", "CPU: process",
                 "receiving thread", "CPU/memory samples:"):
        assert want in text, want


LEGACY = ("Percentiles: 90=", "actual_sends=", "result_rate=", "\nphases (",
          "CPU/memory samples:", "o_rate=")


def test_the_predecessors_lines_only_with_legacy_output(tmp_path, validate):
    """On stdout the answer: the table, the counts, the outliers, the CPU; the
    predecessors' lines (Percentiles:, actual_sends=, result_rate=, the phases
    table, CPU/memory samples, um_perf's o_rate=) only with --legacy-output;
    summary.txt always has them (a script reading it finds them)."""
    outs = {}
    for tag, extra in (("new", []), ("old", ["--legacy-output"])):
        addr = addr_for("udp", tmp_path)
        pong = spawn("pong", "-T", "udp", "-P", addr, "-q", "--wait", "30")   # one ping each
        try:
            p = run_jtr("ping", "-T", "udp", "-P", addr, "-n", 300, "-r", 2000, "-w", "20",
                        "-o", tmp_path / tag, "--wait", "20", *extra, timeout=120)
            assert p.returncode == 0, p.stderr
            outs[tag] = p.stdout
            rc, _, err = finish(pong)
            assert rc == 0, err
        finally:
            kill_all([pong])
    res = validate(load(tmp_path / "new"))
    t = res["transport"]
    # the rate as result.json keeps it (2 decimals) and as the line prints it (1,
    # from the unrounded rate: 2005.85 printed 2005.9 once), each within its rounding
    m = re.search(r"\nsent 300 at ([\d.]+)/s, (\d+) late; (\d+) replies: (\d+) lost, (\d+) "
                  r"duplicates, (\d+) reordered\n", outs["new"])
    assert m and abs(float(m.group(1)) - t["rate_hz"]) <= 0.06, outs["new"]
    assert [int(x) for x in m.groups()[1:]] == [
        t["late_sends"], t["received"], t["lost"], t["duplicates"], t["reordered"]], outs["new"]
    for old in LEGACY[:5]:
        assert old not in outs["new"], old
        assert old in outs["old"], old
        assert old in (tmp_path / "new" / "summary.txt").read_text(), old
    assert "CPU: process" in outs["new"]
    # pub and sub alike
    subs = []
    pubsub(tmp_path, "udp", validate, count=300, rate=2000, outs=subs)
    assert "received at " in subs[0] and "phases (" not in subs[0] and \
        "result_rate=" not in subs[0], subs[0]
    # the latency table before the counts: the answer first
    assert subs[0].index("latency ns") < subs[0].index("received=")
    for name in ("pub", "sub"):
        text = (tmp_path / name / "summary.txt").read_text()
        for old in LEGACY[2:5] + (("o_rate=", "actual_sends=") if name == "pub" else ()):
            assert old in text, (name, old)


def test_ping_rows_add_up(tmp_path, validate):
    """Also --startup and the files' names: --stats-file, --summary-file."""
    res, out = pingpong(tmp_path, "udp", validate, count=1500, rate=1000,
                        args=["--stats-every", "250ms", "--startup", "500ms",
                              "--stats-file", "ping-stats.csv",
                              "--summary-file", "ping-summary.txt"])
    t = res["transport"]
    assert res["files"]["stats"] == "ping-stats.csv"
    assert res["files"]["summary"] == "ping-summary.txt"
    assert sorted(os.listdir(out)) == ["outliers.csv", "ping-stats.csv", "ping-summary.txt",
                                       "result.json"]
    rows = read_stats(out, "ping-stats.csv")
    same_rows(rows, t["stats"])
    text = (out / "ping-summary.txt").read_text()
    assert "stats every:           0.250 s (ping-stats.csv)" in text
    assert "start-up:              0.500 s\n" in text
    check_times(res)
    check_phases(res, text)
    # 0.5 s of start-up: the two rows whose middles are 0.125 and 0.375 s in
    assert t["startup_ns"] == 500 * 10**6 and t["phases"]["startup"]["rows"] == 2
    assert "sent msgs/s" in text and "received msgs/s" in text and "latency max us" in text
    # the front end finds the files by their names in result.json
    r = load_result(str(out))
    assert r.check_file("stats", "statistics") == str(out / "ping-stats.csv")
    assert r.check_file("summary", "summary") == str(out / "ping-summary.txt")
    p = run_jtr("report", "-o", tmp_path / "rep", out, timeout=120)
    assert p.returncode == 0 and "report.html" in p.stdout, p.stderr
    assert len(rows) >= 5   # 1.5 s in 0.25 s rows
    assert sum(r["msgs_sent"] for r in rows) == t["sent"] + t["sent_warmup"] == 1520
    assert sum(r["msgs_recv"] for r in rows) == t["received"] == 1520
    assert sum(r["lat_samples"] for r in rows) == res["runs"][1]["samples"] == 1500
    with_lat = [r for r in t["stats"] if r["lat_samples"]]
    assert max(r["lat_max_ns"] for r in with_lat) == res["runs"][1]["max_ns"]
    assert min(r["lat_min_ns"] for r in with_lat) == res["runs"][1]["min_ns"]
    assert t["send_cpu_pct"] is not None and t["recv_cpu_pct"] is not None


def test_stats_print_shows_each_row(tmp_path, validate):
    """--stats-print: one line on stdout per stats.csv row, with the same counts."""
    addr = addr_for("udp", tmp_path)
    pong = spawn("pong", "-T", "udp", "-P", addr, "-q", "--wait", "30")
    try:
        out = tmp_path / "ping"
        p = run_jtr("ping", "-T", "udp", "-P", addr, "-n", "1000", "-r", "1000", "-w", "20",
                    "-o", out, "-q", "--wait", "20", "--stats-every", "250ms", "--stats-print",
                    timeout=120)
        assert p.returncode == 0, p.stderr
        finish(pong)
    finally:
        kill_all([pong])
    rows = read_stats(out)
    validate(load(out))
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("stats ")]
    assert len(lines) == len(rows) >= 4
    for ln, r in zip(lines, rows):
        m = re.match(r"stats +([\d.]+) s: sent (\d+) \([\d.]+ MB\), received (\d+) ", ln)
        assert m, ln
        assert float(m.group(1)) == pytest.approx(r["t_s"], abs=0.001)
        assert (int(m.group(2)), int(m.group(3))) == (r["msgs_sent"], r["msgs_recv"])
        assert ("latency us avg" in ln) == (r["lat_samples"] > 0) and "RSS" in ln


def test_stats_off(tmp_path, validate):
    pub, sub, pdir, sdir = pubsub(tmp_path, "udp", validate, sub_args=["--stats-every", "0"],
                                  pub_args=["--stats-every", "0"])
    for res, d in ((pub, pdir), (sub, sdir)):
        t = res["transport"]
        assert not (d / "stats.csv").exists() and "stats" not in res["files"]
        assert t["stats"] == [] and t["stats_every_ns"] is None and t["startup_ns"] is None
        assert t["cpu_pct"] is not None and t["rss_max_mb"] > 0
        # no rows, no phases: only the whole run, from the threads' totals
        ph = t["phases"]
        assert ph["startup"] is None and ph["steady"] is None and ph["whole"]["rows"] == 0
        assert ph["whole"]["cpu_pct"] == pytest.approx(t["cpu_pct"], abs=0.02)
        text = (d / "summary.txt").read_text()
        assert "phases: none (--stats-every 0: the phases are made of the stats rows)" in text
        check_whole_line(text, ph["whole"])
    assert pub["transport"]["phases"]["whole"]["msgs_sent"] == pub["transport"]["sent_total"]
    assert sub["transport"]["phases"]["whole"]["msgs_recv"] == sub["transport"]["received"]
    assert sub["transport"]["phases"]["whole"]["lat_samples"] == sub["runs"][0]["samples"]
    assert sub["transport"]["phases"]["whole"]["lat_max_ns"] == sub["runs"][0]["max_ns"]


def read_latency(folder):
    with open(os.path.join(folder, "latency.csv")) as f:
        assert f.readline().rstrip("\n") == "seq,sent_ns,received_ns,latency_ns"
        return [tuple(int(x) for x in line.split(",")) for line in f]


def check_against_histogram(lat, run):
    """Every percentile of the exact samples lies within the histogram's bucket."""
    rel = 2.0 ** -7     # --hist-error 1 % chooses 7 sub-bucket bits
    vals = sorted(lat)
    assert len(vals) == run["samples"]
    assert vals[0] == run["min_ns"] and vals[-1] == run["max_ns"]
    for key, pct in PCTS:
        exact = vals[max(1, math.ceil(pct / 100.0 * len(vals) - 1e-9)) - 1]
        hist = run["percentiles_ns"][key]
        assert exact <= hist <= exact * (1 + rel) + 1, (key, exact, hist)


def test_sub_latency_file_matches_histogram(tmp_path, validate):
    pub, sub, _, sdir = pubsub(tmp_path, "tcp", validate, count=3000,
                               sub_args=["--latency-file"])
    recs = read_latency(sdir)
    t = sub["transport"]
    assert len(recs) == 3000 == t["latency_file"]["samples"] and t["latency_file"]["not_kept"] == 0
    assert sub["files"]["latency"] == "latency.csv"
    assert [r[0] for r in recs] == list(range(100, 3100))    # measured ones, in order
    for _, sent, recv, lat in recs:
        assert lat == max(recv - sent, 0)
    check_against_histogram([r[3] for r in recs], sub["runs"][0])
    # 3000 messages at 20000/s: a run shorter than its 1 s start-up has no steady state
    ph = t["phases"]
    assert ph["steady"] is None and ph["startup"] == ph["whole"]
    text = (sdir / "summary.txt").read_text()
    assert "steady: none: the run was shorter than the start-up" in text
    check_phases(sub, text)
    # the whole run's latency is every sample's: numpy over latency.csv agrees
    lat = numpy.array([r[3] for r in recs], dtype=numpy.float64)
    w = ph["whole"]
    assert w["lat_samples"] == len(lat)
    assert (w["lat_min_ns"], w["lat_max_ns"]) == (lat.min(), lat.max())
    assert w["lat_avg_ns"] == pytest.approx(lat.mean(), abs=0.051)
    assert w["lat_stddev_ns"] == pytest.approx(lat.std(), abs=0.051)


def test_ping_latency_file_matches_histogram(tmp_path, validate):
    res, out = pingpong(tmp_path, "udp", validate, count=800, args=["--latency-file"])
    recs = read_latency(out)
    assert len(recs) == 800 == res["transport"]["latency_file"]["samples"]
    assert sorted(r[0] for r in recs) == list(range(20, 820))
    # TSC stamps converted to CLOCK_MONOTONIC: within the run, and received after sent.
    # The stamps go through the line between the run's first and last (TSC, clock)
    # pairs, the latency through the calibrated rate: a round trip RT throttling
    # held 57.8 ms differed by 6 ns (0.1 ppm), beside the 2 ns of two roundings
    for _, sent, recv, lat in recs:
        assert res["started_mono_ns"] - 10**9 <= sent <= recv <= res["ended_mono_ns"] + 10**9
        assert abs((recv - sent) - lat) <= 2 + lat // 10**6
    check_against_histogram([r[3] for r in recs], res["runs"][1])


def test_latency_file_full_is_said(tmp_path, validate):
    pub, sub, _, sdir = pubsub(tmp_path, "udp", validate, count=1000,
                               sub_args=["--latency-file", "--latency-max", "300"])
    lf = sub["transport"]["latency_file"]
    assert len(read_latency(sdir)) == 300 == lf["samples"] == lf["capacity"]
    assert lf["not_kept"] == 700
    assert any("first 300 of 1000" in w for w in sub["warnings"])


@pytest.mark.measures
def test_busy_poll_costs_more_cpu_than_blocking(tmp_path, validate):
    """At 1000 msgs/s a blocking receiver sleeps nearly all the time; a busy-poll
    one spins all the time: its thread's CPU % is far higher."""
    cpu = {}
    for mode in ("blocking", "busy", "epoll"):
        pub, sub, _, sdir = pubsub(tmp_path, "udp", validate, count=1000, rate=1000,
                                   sub_args=["--recv", mode], tag=mode)
        t = sub["transport"]
        assert t["received"] == 1100 and t["lost"] == 0
        cpu[mode] = t["recv_cpu_pct"]
        assert "(%s receive)" % t["receive"] in (sdir / "summary.txt").read_text()
    print("receiving thread CPU %% at 1000 msgs/s: %s" % cpu)
    assert cpu["blocking"] < 50 and cpu["epoll"] < 50
    assert cpu["busy"] > 2 * max(cpu["blocking"], cpu["epoll"])


@pytest.mark.parametrize("kind", ["tcp", "udp", "unix", "unix-dgram"])
def test_epoll_moves_every_message_in_order(tmp_path, validate, kind):
    pub, sub, _, _ = pubsub(tmp_path, kind, validate, count=5000, sub_args=["--recv", "epoll"])
    t = sub["transport"]
    assert t["receive"] == "epoll" and t["end_of_stream"] and t["peer"] == "ok"
    assert t["received"] == 5100 and t["measured"] == 5000
    assert t["lost"] == t["duplicates"] == t["reordered"] == t["stale"] == 0


@pytest.mark.parametrize("kind", ["tcp", "udp"])
def test_epoll_ping_pong(tmp_path, validate, kind):
    res, _ = pingpong(tmp_path, kind, validate, args=["--recv", "epoll"],
                      pong_args=["--recv", "epoll"])
    t = res["transport"]
    assert t["receive"] == "epoll" and t["received"] == 520 and t["lost"] == 0


def need_ipv6():
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.bind(("::1", 0))
        s.close()
    except OSError as e:
        pytest.skip("no IPv6 loopback here (::1: %s)" % e)


@pytest.mark.parametrize("kind", ["tcp", "udp"])
def test_ipv6_loopback(tmp_path, validate, kind):
    need_ipv6()
    addr = "[::1]:%d" % free_port()
    pub, sub, _, _ = pubsub(tmp_path, kind, validate, addr=addr)
    t = sub["transport"]
    assert t["address"] == addr and t["received"] == 2100 and t["lost"] == 0
    res, _ = pingpong(tmp_path, kind, validate, addr="[::1]:%d" % free_port())
    assert res["transport"]["received"] == 520 and res["transport"]["lost"] == 0


def test_pong_results_folder(tmp_path, validate):
    addr = addr_for("udp", tmp_path)
    pdir = tmp_path / "pong"
    pong = spawn("pong", "-T", "udp", "-P", addr, "--wait", "30", "-o", pdir,
                 "--stats-every", "200ms")
    try:
        p = run_jtr("ping", "-T", "udp", "-P", addr, "-n", 1500, "-r", 2000, "-w", 20, "-q",
                    "-o", tmp_path / "ping", "--wait", "20", timeout=120)
        assert p.returncode == 0, p.stderr
        rc, out, err = finish(pong)
        assert rc == 0, err
    finally:
        kill_all([pong])
    assert "reflected" in out and "results: %s/" % pdir in out
    res = validate(load(pdir))
    t = res["transport"]
    assert res["tool"] == "pong" and not res["partial"]
    # one run: the measured reflections (ping's hellos and warm-up not among them)
    assert [r["name"] for r in res["runs"]] == ["reflect"] and res["runs"][0]["samples"] == 1500
    assert t["end_of_stream"] and t["peer"] == "ok" and t["reflected"] >= 1520
    assert t["cpu_pct"] >= 0 and t["recv_cpu_pct"] >= 0 and t["rss_max_mb"] > 0
    # one thread receives and sends back: both columns are its
    assert t["send_cpu_pct"] is not None and t["send_cpu_pct"] >= 0
    text = (pdir / "summary.txt").read_text()
    assert "reflected=%d" % t["reflected"] in text and "--- inputs ---" in text
    assert "the thread that sends and receives" in text and "sending thread" not in text
    # stats.csv: a row every 200 ms over the 0.75 s run, the same rows as the result,
    # adding up to what was reflected; pong measures no latency
    rows = read_stats(pdir)
    same_rows(rows, t["stats"])
    assert t["stats_every_ns"] == 200_000_000 and res["files"]["stats"] == "stats.csv"
    assert len(rows) >= 3, rows
    msg_len = load(tmp_path / "ping")["transport"]["msg_len"]
    assert sum(r["msgs_recv"] for r in rows) == sum(r["msgs_sent"] for r in rows) \
        == t["reflected"]
    assert sum(r["bytes_sent"] for r in rows) == sum(r["bytes_recv"] for r in rows) \
        == t["reflected"] * msg_len
    assert all(r["lat_samples"] == 0 and r["lat_avg_ns"] is None for r in rows), rows
    check_phases(res, text)
    assert t["phases"]["whole"]["msgs_sent"] == t["reflected"]
    # the statistics go into the results folder: without -o they are refused
    p = run_jtr("pong", "-T", "udp", "-P", addr, "--stats-every", "1s")
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "--stats-every and --stats-print write stats.csv into the results folder: " \
        "add -o DIR" in p.stderr
    # without -o pong writes nothing, as before
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    addr = addr_for("udp", tmp_path)
    pong = spawn("pong", "-T", "udp", "-P", addr, "--wait", "30", "-q")
    try:
        p = run_jtr("ping", "-T", "udp", "-P", addr, "-n", 100, "-r", 2000, "-q",
                    "-o", tmp_path / "ping2", "--wait", "20", cwd=cwd, timeout=120)
        assert p.returncode == 0, p.stderr
        assert finish(pong)[0] == 0
    finally:
        kill_all([pong])
    assert os.listdir(cwd) == []


@pytest.mark.parametrize("mode", ["blocking", "epoll"])
def test_publisher_killed_mid_run_keeps_rows(tmp_path, validate, mode):
    addr = addr_for("tcp", tmp_path)
    sub = spawn("sub", "-T", "tcp", "-P", addr, "--recv", mode, "--timeout", "1", "--wait", "20",
                "--stats-every", "250ms", "-o", tmp_path / "s")
    pub = spawn("pub", "-T", "tcp", "-P", addr, "-r", "2000", "-n", "1M", "-q",
                "-o", tmp_path / "p")
    try:
        time.sleep(1.5)
        pub.send_signal(signal.SIGKILL)
        pub.communicate()
        rc, out, err = finish(sub, timeout=30)
        assert rc == 1, err
        assert "went away" in err
        res = validate(load(tmp_path / "s"))
        t = res["transport"]
        assert res["partial"] and t["peer"] == "gone" and not t["end_of_stream"]
        assert t["received"] > 500
        rows = check_sub_rows(res, tmp_path / "s")
        assert len(rows) >= 3
    finally:
        kill_all([sub, pub])


def test_bad_input_exit_2(tmp_path):
    cases = [
        (["sub", "--recv", "nope"], "unknown receive mode"),
        (["sub", "-T", "shm", "--recv", "epoll"], "no file descriptor"),
        (["ping", "-T", "tcp", "-P", "::1:80"], "in brackets"),
        (["ping", "-T", "udp", "-P", "[::1]"], "in brackets"),
        (["sub", "-T", "udp", "-P", "[::g]:80"], "not an IPv6 address"),
        (["sub", "-T", "tcp", "-P", "[::1]:0"], "port must be 1-65535"),
        (["sub", "-T", "mcast", "-P", "[ff15::1]:5000"], "IPv4 only"),
        (["sub", "--stats-every", "1ms"], "at least 10ms"),
        (["sub", "--stats-every", "soon"], "--stats-every"),
        (["pub", "--latency-file"], "give --latency-file to 'jtr sub'"),
        (["sub", "-f", "--latency-file"], "measures no latency"),
        (["ping", "--latency-max", "0"], "--latency-max"),
        (["sub", "--startup", "soon"], "--startup"),
        (["ping", "--stats-every", "0", "--startup", "2s"], "--startup with --stats-every 0"),
        (["ping", "--stats-file", ""], "--stats-file '': give a file name"),
        (["sub", "--stats-file", "x/s.csv"], "give a file name, not a path"),
        (["pub", "--summary-file", ".."], "give a file name, not a path"),
        (["pub", "--summary-file", "result.json"], "uses that name for another file"),
        (["sub", "--stats-file", "summary.txt"], "uses that name for another file"),
        (["ping", "--stats-file", "latency.csv"], "uses that name for another file"),
        (["ping", "--stats-file", "a", "--summary-file", "a"], "the same name as the"),
        (["pub", "--stats-file", "s.csv", "--stats-every", "0"], "no rows to write"),
    ]
    assert_usage_errors(tmp_path, cases)


def test_help_lists_the_new_options():
    for prog in ("ping", "pub", "sub"):
        out = run_jtr(prog, "--help", timeout=30).stdout
        for opt in ("--stats-every", "--recv MODE", "[IPV6]:PORT", "--startup DUR",
                    "--stats-file NAME", "--summary-file NAME"):
            assert opt in out, (prog, opt)
    for prog in ("ping", "sub"):
        assert "--latency-file" in run_jtr(prog, "--help", timeout=30).stdout
    out = run_jtr("pong", "--help", timeout=30).stdout
    assert "-o, --output DIR" in out and "--recv MODE" in out


def test_schema_checks_the_new_fields(tmp_path, validate):
    pub, sub, _, _ = pubsub(tmp_path, "udp", validate, count=500, sub_args=["--latency-file"])
    bad = [
        lambda r: r["transport"]["stats"][0].pop("lat_max_ns"),
        lambda r: r["transport"]["stats"][0].update(msgs_recv=-1),
        lambda r: r["transport"].update(receive="poll"),
        lambda r: r["transport"].pop("recv_cpu_pct"),
        lambda r: r["transport"]["latency_file"].pop("not_kept"),
        lambda r: r["transport"]["stats"][0].pop("utc"),
        lambda r: r["transport"]["stats"][0].update(utc="2026-11-26 19:52:03"),
        lambda r: r["transport"]["stats"][0].update(mono_ns=1.5),
        lambda r: r["transport"].pop("phases"),
        lambda r: r["transport"]["phases"].pop("steady"),
        lambda r: r["transport"]["phases"]["whole"].pop("bytes_recv"),
        lambda r: r["transport"]["phases"]["whole"].update(duration_ns=-1),
    ]
    for spoil in bad:
        r = load(tmp_path / "sub")
        spoil(r)
        with pytest.raises(AssertionError):
            validate(r)
