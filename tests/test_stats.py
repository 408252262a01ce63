"""Periodic statistics (stats.csv and transport.stats), the per-sample latency
file, the CPU each receive mode costs, the epoll receive mode, IPv6 addresses,
pong's results folder, and a peer killed mid-run, through the front end."""
import csv
import math
import os
import re
import signal
import socket
import time

import pytest
from conftest import assert_usage_errors, load, run_jtr
from test_transports import addr_for, finish, free_port, kill_all, spawn, wait_ready

HEADER = ("t_s,msgs_sent,bytes_sent,msgs_recv,bytes_recv,lat_samples,lat_avg_ns,lat_stddev_ns,"
          "lat_min_ns,lat_max_ns,cpu_pct,send_cpu_pct,recv_cpu_pct,rss_mb")
PCTS = [("50", 50), ("90", 90), ("99", 99), ("99.9", 99.9), ("99.99", 99.99),
        ("99.999", 99.999)]
DGRAM = ("udp", "mcast", "unix-dgram")


def read_stats(folder):
    """stats.csv as a list of dicts (empty fields: None), after checking the header."""
    with open(os.path.join(folder, "stats.csv")) as f:
        assert f.readline().rstrip("\n") == HEADER
        rows = []
        for rec in csv.reader(f):
            row = {}
            for k, v in zip(HEADER.split(","), rec):
                row[k] = None if v == "" else float(v)
            rows.append(row)
    return rows


def same_rows(csv_rows, json_rows):
    """The CSV and result.json hold the same rows (the CSV rounds to its decimals)."""
    assert len(csv_rows) == len(json_rows)
    for c, j in zip(csv_rows, json_rows):
        for k, v in c.items():
            w = j["lat_samples" if k == "lat_samples" else k]
            if v is None or w is None:
                assert v is None and w is None, (k, c, j)
            else:
                assert abs(v - w) <= 0.01 + 1e-9 * abs(w), (k, v, w)


def pubsub(tmp_path, kind, validate, count=2000, rate=20000, addr=None, pub_args=(),
           sub_args=(), tag=""):
    """One publisher and one subscriber; (pub result, sub result, pub dir, sub dir)."""
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
        rc, _, err = finish(sub)
        assert rc == 0, err
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
    return rows


def test_stats_rows_add_up_to_the_totals(tmp_path, validate):
    # 6000 messages at 2000/s: at least 3 s of receiving, so at least 5 rows of 0.5 s
    pub, sub, pdir, sdir = pubsub(tmp_path, "udp", validate, count=6000, rate=2000,
                                  pub_args=["--stats-every", "500ms"],
                                  sub_args=["--stats-every", "500ms"])
    rows = check_sub_rows(sub, sdir)
    assert len(rows) >= 5
    assert sub["transport"]["stats_every_ns"] == 500 * 10**6
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
    # the sender busy-waits to each send: its thread is on a CPU most of the time
    assert pt["send_cpu_pct"] > 0 and pt["cpu_pct"] > 0
    text = (sdir / "summary.txt").read_text()
    for want in ("--- inputs ---", "command:", "receive:", "stats every:", "CPU: process",
                 "receiving thread", "CPU/memory samples:"):
        assert want in text, want


def test_ping_rows_add_up(tmp_path, validate):
    res, out = pingpong(tmp_path, "udp", validate, count=1500, rate=1000,
                        args=["--stats-every", "250ms"])
    t = res["transport"]
    rows = read_stats(out)
    same_rows(rows, t["stats"])
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
        assert not (d / "stats.csv").exists() and "stats" not in res["files"]
        assert res["transport"]["stats"] == [] and res["transport"]["stats_every_ns"] is None
        assert res["transport"]["cpu_pct"] is not None and res["transport"]["rss_max_mb"] > 0


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


def test_ping_latency_file_matches_histogram(tmp_path, validate):
    res, out = pingpong(tmp_path, "udp", validate, count=800, args=["--latency-file"])
    recs = read_latency(out)
    assert len(recs) == 800 == res["transport"]["latency_file"]["samples"]
    assert sorted(r[0] for r in recs) == list(range(20, 820))
    # TSC stamps converted to CLOCK_MONOTONIC: within the run, and received after sent
    for _, sent, recv, lat in recs:
        assert res["started_mono_ns"] - 10**9 <= sent <= recv <= res["ended_mono_ns"] + 10**9
        assert abs((recv - sent) - lat) <= 2
    check_against_histogram([r[3] for r in recs], res["runs"][1])


def test_latency_file_full_is_said(tmp_path, validate):
    pub, sub, _, sdir = pubsub(tmp_path, "udp", validate, count=1000,
                               sub_args=["--latency-file", "--latency-max", "300"])
    lf = sub["transport"]["latency_file"]
    assert len(read_latency(sdir)) == 300 == lf["samples"] == lf["capacity"]
    assert lf["not_kept"] == 700
    assert any("first 300 of 1000" in w for w in sub["warnings"])


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
    ]
    assert_usage_errors(tmp_path, cases)


def test_help_lists_the_new_options():
    for prog in ("ping", "pub", "sub"):
        out = run_jtr(prog, "--help", timeout=30).stdout
        for opt in ("--stats-every", "--recv MODE", "[IPV6]:PORT"):
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
    ]
    for spoil in bad:
        r = load(tmp_path / "sub")
        spoil(r)
        with pytest.raises(AssertionError):
            validate(r)
