# SPDX-License-Identifier: GPL-2.0-only
"""jtr ipc, the IPC comparison, through the front end: every method moves every
object intact to 1 and to 3 readers; a dropped or spoiled object fails the run;
the sweep gives one row per batch size; a paced writer makes readers wait on an
empty queue and a paced reader makes the writer wait on a full one (both hold
by construction); --repeat gives each row's average, stdev, min and max over
its repetitions (also when Ctrl-C cuts them short); bad input exits 2; Ctrl-C
and a dead reader leave a result, no process and nothing in /dev/shm."""
import json
import os
import signal
import statistics
import subprocess
import time

import jsonschema
import pytest
from conftest import JTR, ROOT, load, run_jtr, steal_ns, stolen_ns

# not marked measures: real runs judged by what arrives and how they end, not by
# timing, so they run beside other tests (docs/testing.md)

METHODS = ["shm-mutex", "shm-adaptive", "shm-lockless", "tcp", "tcp-epoll"]
SHM = METHODS[:3]
SWEEP = [1000, 5000, 10000, 20000, 50000, 100000, 1000000]

with open(os.path.join(ROOT, "docs", "ipc.schema.json")) as f:
    SCHEMA = json.load(f)


def ipc(tmp_path, *args, name="out", timeout=120):
    """Run `jtr ipc ARGS -q -o DIR`; (CompletedProcess, result or None)."""
    out = tmp_path / name
    p = run_jtr("ipc", *args, "-q", "-o", out, timeout=timeout)
    res = load(out) if (out / "result.json").exists() else None
    if res is not None:
        jsonschema.Draft202012Validator(SCHEMA).validate(res)
    return p, res


def shm_segments(pid):
    return [f for f in os.listdir("/dev/shm") if f.startswith("jtr-ipc-%d-" % pid)]


def processes_with(word):
    """pids whose command line holds @word (jtr ipc's children carry its argv)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if word.encode() in f.read():
                    pids.append(int(d))
        except OSError:
            pass
    return pids


@pytest.mark.parametrize("readers", [1, 3])
def test_every_method_moves_every_object(tmp_path, readers):
    n = 200000
    p, res = ipc(tmp_path, "-n", n, "--readers", readers)
    assert p.returncode == 0, p.stderr
    assert res["format"] == "jtr-ipc/1" and res["tool"] == "ipc" and not res["partial"]
    assert [r["method"] for r in res["rows"]] == METHODS
    for r in res["rows"]:
        assert r["ok"] and r["error"] is None, r
        assert r["readers"] == readers and len(r["per_reader"]) == readers
        assert r["objects_sent"] == r["objects_received"] == n
        assert r["bytes_per_reader"] == n * 50
        assert r["batch_bytes"] == 100000 and r["objects_per_batch"] == 2000
        assert r["writer"][0]["batches"] == n // 2000
        for rd in r["per_reader"]:
            assert rd["objects"] == n
            assert rd["lost"] == rd["duplicates"] == rd["corrupted"] == 0
        assert r["elapsed_s"] > 0
        # elapsed_s has 6 decimals: at 0.4 ms that rounding alone is 0.1 %
        assert r["objects_per_s"] == pytest.approx(
            n / r["elapsed_s"], rel=max(1e-3, 1e-6 / r["elapsed_s"]))
        assert r["empty_waits"] == sum(rd["empty_waits"] for rd in r["per_reader"])
        assert r["full_waits"] == r["writer"][0]["full_waits"]
        assert (r["queue_slots"] is None) == r["method"].startswith("tcp")
    # without --repeat every row ran once: its stats are its own figures
    assert res["params"]["repeat"] == 1
    assert [r["repetition"] for r in res["rows"]] == [1] * len(METHODS)
    for r, st in zip(res["rows"], res["stats"]):
        assert (st["method"], st["runs"], st["finished"]) == (r["method"], 1, 1)
        assert st["elapsed_s"]["stdev"] is None
        assert st["elapsed_s"]["avg"] == pytest.approx(r["elapsed_s"], abs=1e-6)
    # the table: a header, one line per row, the shm/tcp line
    text = (tmp_path / "out" / "summary.txt").read_text()
    lines = text.splitlines()
    assert lines[1].split()[:4] == ["method", "readers", "batch", "elapsed_s"]
    for m in METHODS:
        row = next(line.split() for line in lines if line.startswith(m + " "))
        assert row[1] == str(readers) and row[2] == "100000" and row[-1] == "ok"
    assert "shm/tcp" in text


@pytest.mark.parametrize("switch,field", [("--drop-every", "lost"),
                                          ("--corrupt-every", "corrupted")])
def test_damage_is_caught(tmp_path, switch, field):
    n = 50000
    p, res = ipc(tmp_path, "-n", n, "--readers", "1,3", switch, 997)
    assert p.returncode == 1
    assert len(res["rows"]) == 2 * len(METHODS)
    for r in res["rows"]:
        assert not r["ok"] and "integrity check failed" in r["error"], r
        for rd in r["per_reader"]:
            assert rd[field] == n // 997 if field == "corrupted" else rd[field] > 0
        assert "%s, %d reader" % (r["method"], r["readers"]) in p.stderr
    assert p.stderr.count("integrity check failed") == 2 * len(METHODS)
    assert "Traceback" not in p.stderr


def test_sweep_one_row_per_batch_size(tmp_path):
    p, res = ipc(tmp_path, "--sweep", "--methods", "shm-lockless,tcp", "--readers", 1, "-n", 200000)
    assert p.returncode == 0, p.stderr
    assert res["params"]["batch_bytes"] == SWEEP
    for m in ("shm-lockless", "tcp"):
        rows = [r for r in res["rows"] if r["method"] == m]
        assert [r["batch_bytes"] for r in rows] == SWEEP
        for r in rows:
            assert r["objects_per_batch"] == r["batch_bytes"] // 50
            assert r["objects_received"] == 200000 and r["ok"]
            assert r["writer"][0]["batches"] == -(-200000 // r["objects_per_batch"])
    # a queue never passes 64 MiB: 1 MB batches get 64 slots, the rest 128
    q = {r["batch_bytes"]: r["queue_slots"] for r in res["rows"] if r["method"] == "shm-lockless"}
    assert q[1000000] == 64 and q[100000] == 128


def check_stats(res, repeat):
    """Every entry of stats is what its row's finished repetitions give; those
    rows are the first ones of that row, numbered from 1."""
    assert res["params"]["repeat"] == repeat
    for st in res["stats"]:
        key = (st["method"], st["readers"], st["batch_bytes"])
        reps = [r for r in res["rows"] if (r["method"], r["readers"], r["batch_bytes"]) == key]
        assert [r["repetition"] for r in reps] == list(range(1, len(reps) + 1))
        assert st["runs"] == len(reps)
        done = [r for r in reps if r["ok"] and not r["partial"]]
        assert st["finished"] == len(done)
        assert st["ok"] == all(r["ok"] for r in reps)
        assert st["partial"] == any(r["partial"] for r in reps)
        e = [r["elapsed_s"] for r in done]
        if not e:
            assert st["elapsed_s"]["avg"] is None and st["objects_per_s"] is None
            continue
        # rows carry 6 decimals, stats full precision
        assert st["elapsed_s"]["avg"] == pytest.approx(statistics.mean(e), abs=2e-6)
        assert st["elapsed_s"]["min"] == pytest.approx(min(e), abs=1e-6)
        assert st["elapsed_s"]["max"] == pytest.approx(max(e), abs=1e-6)
        if len(e) > 1:
            assert st["elapsed_s"]["stdev"] == pytest.approx(statistics.stdev(e), abs=2e-6)
        else:
            assert st["elapsed_s"]["stdev"] is None
        assert st["objects_per_s"] == pytest.approx(      # 1 decimal
            done[0]["objects_received"] / st["elapsed_s"]["avg"], rel=1e-6, abs=0.051)
        assert st["empty_waits"] == pytest.approx(
            statistics.mean(r["empty_waits"] for r in done), abs=1e-3)
        assert st["full_waits"] == pytest.approx(
            statistics.mean(r["full_waits"] for r in done), abs=1e-3)
        assert st["cpu_s"] == pytest.approx(statistics.mean(r["cpu_s"] for r in done),
                                            abs=1e-5)


def table_rows(text):
    """The table's rows by (method, readers, batch): their columns."""
    return {(w[0], int(w[1]), int(w[2])): w for w in map(str.split, text.splitlines())
            if w and w[0] in METHODS}


def test_repeat_gives_each_rows_stats(tmp_path):
    p, res = ipc(tmp_path, "-n", 200000, "--readers", "1,3", "--methods", "shm-lockless,tcp",
                 "--repeat", 3)
    assert p.returncode == 0, p.stderr
    assert len(res["rows"]) == 2 * 2 * 3 and len(res["stats"]) == 4
    check_stats(res, 3)
    assert all(st["finished"] == 3 and st["ok"] for st in res["stats"])
    assert len({r["elapsed_s"] for r in res["rows"]}) > 1     # really run three times
    text = (tmp_path / "out" / "summary.txt").read_text()
    assert text.splitlines()[1].split()[:8] == ["method", "readers", "batch", "runs", "avg_s",
                                                "stdev_s", "min_s", "max_s"]
    rows = table_rows(text)
    for st in res["stats"]:
        w = rows[(st["method"], st["readers"], st["batch_bytes"])]
        assert w[3] == "3" and w[-1] == "ok"
        for col, k in zip(w[4:8], ("avg", "stdev", "min", "max")):
            assert float(col) == pytest.approx(st["elapsed_s"][k], abs=0.0006)
    assert "best shm (shm-lockless) avg " in text


def test_a_failed_repetition_ends_the_row(tmp_path):
    p, res = ipc(tmp_path, "-n", 50000, "--readers", 1, "--methods", "shm-mutex,tcp",
                 "--drop-every", 997, "--repeat", 3)
    assert p.returncode == 1
    assert [r["repetition"] for r in res["rows"]] == [1, 1]
    check_stats(res, 3)
    assert all(not st["ok"] and st["finished"] == 0 for st in res["stats"])
    assert "shm-mutex, 1 reader, 100000-byte batches, run 1 of 3: integrity check failed" \
        in p.stderr
    rows = table_rows((tmp_path / "out" / "summary.txt").read_text())
    assert " ".join(rows[("tcp", 1, 100000)][-6:]) == "FAILED (0 of 3 runs finished)"


def start_running(args, out, processes):
    """`jtr ipc ARGS -o OUT` in the background, returned once @processes programs
    write into @out (the readers are up and objects move) and a second more."""
    env = dict(os.environ)
    env.pop("JTR_PROG", None)
    proc = subprocess.Popen([JTR, "ipc"] + args + ["-o", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 30
    while time.time() < deadline and len(processes_with(str(out))) < processes:
        time.sleep(0.05)
    time.sleep(1.0)
    return proc


def test_ctrl_c_mid_repeat_keeps_the_finished_runs(tmp_path):
    """A paced writer makes every run last 20 x 10 ms: Ctrl-C after about a
    second falls in the middle of a later run."""
    out = tmp_path / "rep"
    proc = start_running(["-n", "2000", "-B", "5000", "--pace", "10ms", "--readers", "1",
                          "--methods", "shm-adaptive", "--repeat", "50"], out, 3)
    try:
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    res = load(out)
    jsonschema.Draft202012Validator(SCHEMA).validate(res)
    assert res["partial"]
    check_stats(res, 50)
    (st,) = res["stats"]
    assert st["partial"] and st["ok"] and 1 <= st["finished"] < 50, st
    assert st["runs"] == st["finished"] + 1 and res["rows"][-1]["partial"]
    assert "(partial: %d of 50 runs finished)" % st["finished"] in stdout
    assert not shm_segments(proc.pid)
    assert not processes_with(str(out))


@pytest.mark.parametrize("readers", [1, 3])
def test_paced_writer_readers_find_queue_empty(tmp_path, readers):
    """20 batches, 2 ms apart: a reader that has taken a batch finds the queue
    empty unless it was off the CPU for the whole 2 ms after every one of
    them; the writer never finds it full (20 batches < 128 slots, and 100 KB in
    all is less than a socket's receive buffer)."""
    for attempt in range(3):
        (tmp_path / str(attempt)).mkdir()
        before = steal_ns()
        p, res = ipc(tmp_path / str(attempt), "-n", 2000, "-B", 5000, "--pace", "2ms",
                     "--readers", readers)
        # a reader the host held off its CPU for the 40 ms of the run misses every
        # empty queue: such a run is made again
        if res is None or stolen_ns(before) < 40 * 10**6 or \
                min(rd["empty_waits"] for r in res["rows"] for rd in r["per_reader"]):
            break
    assert p.returncode == 0, p.stderr
    for r in res["rows"]:
        assert r["writer"][0]["batches"] == 20
        for rd in r["per_reader"]:
            assert rd["empty_waits"] >= 1, r
            assert rd["empty_waits"] <= rd["batches"] + 1
        if r["method"] in SHM:
            assert r["full_waits"] == 0, r
        else:
            assert r["rcvbuf"] > 2000 * 50
            assert r["full_waits"] == 0, r


def test_paced_reader_writer_finds_queue_full(tmp_path):
    """shm: 20 batches through 2 slots to a reader that sleeps 2 ms after each;
    tcp: 80 MB to a reader that sleeps 5 ms after each read of at most 1 MB,
    more than the largest send and receive buffers (tcp_wmem, tcp_rmem) hold."""
    p, res = ipc(tmp_path, "-n", 2000, "-B", 5000, "-Q", 2, "--reader-pace", "2ms",
                 "--methods", ",".join(SHM), "--readers", "1,3", name="shm")
    assert p.returncode == 0, p.stderr
    for r in res["rows"]:
        assert r["queue_slots"] == 2 and r["full_waits"] >= 1, r
        assert r["low_water"] in (1, None)
    with open("/proc/sys/net/ipv4/tcp_rmem") as f:
        rmem = int(f.read().split()[2])
    with open("/proc/sys/net/ipv4/tcp_wmem") as f:
        wmem = int(f.read().split()[2])
    n = max(1600000, 2 * (rmem + wmem) // 50)
    p, res = ipc(tmp_path, "-n", n, "-B", "1M", "--reader-pace", "5ms",
                 "--methods", "tcp,tcp-epoll", "--readers", 1, name="tcp", timeout=300)
    assert p.returncode == 0, p.stderr
    for r in res["rows"]:
        assert r["full_waits"] >= 1 and r["objects_received"] == n, r


@pytest.mark.parametrize("args,word", [
    (["-m", "shm-fast"], "shm-fast"),
    (["-n", "0"], "-n 0"),
    (["-B", "40"], "smaller than one 50-byte object"),
    (["-r", "0"], "-r 0"),
    (["-r", "1,0"], "0 readers"),
    (["-r", "9"], "9 readers"),
    (["-s", "8"], "at least 16"),
    (["-Q", "100"], "power of two"),
    (["--low-water", "128"], "--low-water 128"),
    (["-n", "lots"], "lots"),
    (["--bogus"], "--bogus"),
    (["--fifo", "50"], "--fifo"),
    (["--repeat", "0"], "--repeat 0"),
    (["--repeat", "x"], "--repeat x"),
    (["--repeat", "101"], "--repeat 101"),
])
def test_bad_input_exits_2(tmp_path, args, word):
    out = tmp_path / "never"
    p = run_jtr("ipc", *args, "-o", out)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jtr ipc: ") and word in lines[0], p.stderr
    assert not out.exists()


@pytest.mark.parametrize("method", SHM + ["tcp-epoll"])
def test_ctrl_c_keeps_a_partial_result(tmp_path, method):
    out = tmp_path / ("int-" + method)
    # once objects move (the children are up), interrupt
    proc = start_running(["-n", "1G", "--readers", "3", "--methods", method], out, 5)
    try:
        assert not shm_segments(proc.pid), "the segment's name outlives the start"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert stderr.splitlines()[-1] == "jtr ipc: interrupted; partial results in %s/" % out
    res = load(out)
    assert res["partial"]
    (r,) = res["rows"]
    assert r["partial"] and r["ok"], r
    # what was sent before the stop reached every reader, intact
    assert 0 < r["objects_sent"] < 10**9
    assert all(rd["objects"] == r["objects_sent"] for rd in r["per_reader"])
    assert "(partial)" in stdout
    assert not shm_segments(proc.pid)
    assert not processes_with(str(out))


@pytest.mark.parametrize("method", ["shm-adaptive", "shm-lockless", "tcp"])
def test_dead_reader_fails_the_row(tmp_path, method):
    out = tmp_path / ("dead-" + method)
    env = dict(os.environ)
    env.pop("JTR_PROG", None)
    proc = subprocess.Popen([JTR, "ipc", "-n", "1G", "--readers", "3", "--methods", method,
                             "-o", str(out), "-q"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and len(processes_with(str(out))) < 5:
            time.sleep(0.05)
        time.sleep(0.5)
        victim = max(processes_with(str(out)))  # the last child forked: a reader
        assert victim != proc.pid
        os.kill(victim, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1
    (r,) = load(out)["rows"]
    assert not r["ok"]
    assert "signal 9" in r["error"] or "sending failed" in r["error"], r["error"]
    assert stderr.startswith("jtr ipc: %s, 3 readers" % method)
    assert not shm_segments(proc.pid)
    assert not processes_with(str(out))


def test_help():
    h = run_jtr("ipc", "--help", check=True).stdout
    assert h.startswith("usage: jtr ipc") and "\nexamples:\n" in h and "--sweep" in h
    assert run_jtr("ipc", "-h", check=True).stdout == h
    assert "\n  ipc " in run_jtr("--help", check=True).stdout
