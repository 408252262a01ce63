# SPDX-License-Identifier: GPL-2.0-only
"""drivers/watch: the tracer's command line from jtr watch's options; the job's
checks in-process (the CPUs by default, the ring buffer's size, the most
applications the tracer takes), the watch itself a stand-in (nothing is traced);
the watch on a stand-in tracer's lines: the callbacks in order, watch.json and
the Outcome."""
import argparse
import json
import os

import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.drivers import watch as driver
from jtrpy.drivers.watch import tracer_args


@pytest.fixture
def watched(monkeypatch):
    """The options the watch was given; no isolated CPU."""
    got = []
    monkeypatch.setattr(driver, "watch", lambda o, started, dumped, progress: got.append(o)
                        or driver.Outcome(None, 0.0, None, False, 0))
    monkeypatch.setattr(driver, "isolated_cpus", lambda: [])
    return got


def test_tracer_args():
    o = argparse.Namespace(cpus=[2, 3], interval=10**9, keep=120 * 10**9, dump_max=20,
                           recorder=64 << 20, names=32, dump_above=200_000, duration=None,
                           trace_buffer=None, drain_interval=50 * 10**6, app=["myserver", "42"])
    assert tracer_args(o, "out") == [
        "--watch", "-c", "2-3", "-o", "out", "--state-interval", "1000000000ns", "--keep",
        "120000000000ns", "--dump-max", "20", "--recorder", "67108864", "--names", "32",
        "--app", "myserver", "--app", "42", "--dump-above", "200000ns", "-i", "50000000ns"]


def test_cpus_by_default_are_the_isolated_ones(watched, capsys, monkeypatch):
    assert jtr(["watch"]) == 2
    assert capsys.readouterr().err == ("jtr watch: no isolated CPU to watch by default: give "
                                       "the application's CPUs with -c LIST, e.g. -c 2-3\n")
    monkeypatch.setattr(driver, "isolated_cpus", lambda: [2, 3])
    assert jtr(["watch", "-q"]) == 0
    o = watched[0]
    assert o.cpus == [2, 3] and o.app == [] and o.dump_above is None
    assert (o.keep, o.recorder, o.dump_max, o.names, o.interval) == (
        120 * 10**9, 64 << 20, 20, 32, 10**9)


def test_ring_buffer_is_a_power_of_two(watched, capsys):
    assert jtr(["watch", "-c", "0", "--trace-buffer", "3M"]) == 2
    assert capsys.readouterr().err == ("jtr watch: --trace-buffer 3145728: the ring buffer must "
                                       "be a power of two from 4K to 1G, e.g. 4M\n")
    assert jtr(["watch", "-c", "0", "--trace-buffer", "4M"]) == 0


def test_the_recorder_fits_in_half_the_memory_available(watched, capsys, monkeypatch):
    """The recorder is kernel memory while it watches: more than half of what is
    available now is refused before the tracer starts (16G was locked on a 24 GB
    machine)."""
    monkeypatch.setattr(driver, "available_bytes", lambda: 8 << 30)
    assert jtr(["watch", "-c", "0", "--recorder", "4G", "-q"]) == 0
    assert jtr(["watch", "-c", "0", "--recorder", "5G"]) == 2
    assert capsys.readouterr().err == (
        "jtr watch: --recorder 5 GiB: more than half the memory available now (8 GiB); the "
        "recorder is kernel memory while it watches: give at most 4096M, or free memory\n")
    assert len(watched) == 1
    monkeypatch.setattr(driver, "available_bytes", lambda: None)     # unknown: not refused
    assert jtr(["watch", "-c", "0", "--recorder", "16G", "-q"]) == 0


def test_at_most_sixteen_comms_and_sixteen_pids(watched, capsys):
    comms = ",".join("c%d" % i for i in range(16))
    assert jtr(["watch", "-c", "0", "--app", comms]) == 0
    assert jtr(["watch", "-c", "0", "--app", comms + ",c16"]) == 2
    assert capsys.readouterr().err == "jtr watch: --app: 17 comms; at most 16\n"
    pids = ",".join([str(os.getpid())] * 17)
    assert jtr(["watch", "-c", "0", "--app", pids]) == 2
    assert capsys.readouterr().err == "jtr watch: --app: 17 PIDs; at most 16\n"


class Tracer:
    """A stand-in jtr-trace --watch: its stdout's lines, then its exit status."""

    def __init__(self, lines, rc=0):
        self.stdout = [(json.dumps(x) if isinstance(x, dict) else x).encode() + b"\n"
                       for x in lines]
        self.rc = rc

    def wait(self):
        return self.rc


def options(tmp_path, **kw):
    o = argparse.Namespace(cpus=[1], app=[], interval=10**9, keep=120 * 10**9, dump_max=20,
                           recorder=64 << 20, names=32, dump_above=None, duration=None,
                           trace_buffer=None, drain_interval=None, listen=None, textfile=None,
                           output=str(tmp_path / "out"))
    vars(o).update(kw)
    return o


def watch(monkeypatch, o, tracer):
    """The watch on @tracer's lines: (its Outcome, the callbacks' calls in order)."""
    monkeypatch.setattr(driver, "probe_path", lambda name: "jtr-" + name)
    monkeypatch.setattr(driver.signals, "spawn", lambda argv, **kw: tracer)
    got = []
    out = driver.watch(o, lambda: got.append("started"),
                       lambda d: got.append(("dump", d["dump"])),
                       lambda state, seconds: got.append(("state", state["records"],
                                                          seconds >= 0)))
    return out, got


def test_the_watch_hands_each_line_to_its_callback_in_order(monkeypatch, tmp_path):
    dump = {"dump": "out/dump-1", "records": 5, "outliers": 1}
    out, got = watch(monkeypatch, options(tmp_path), Tracer(
        [{"records": 1, "cpus": []}, dump, "not json", {"records": 2, "cpus": []}]))
    assert got == ["started", ("state", 1, True), ("dump", "out/dump-1"),
                   ("state", 2, True)]
    assert (out.state, out.folder, out.stopped, out.rc) == (
        {"records": 2, "cpus": []}, str(tmp_path / "out"), False, 0)
    doc = json.loads((tmp_path / "out" / "watch.json").read_text())
    assert doc["state"] == out.state and doc["dumps"] == [dump] and doc["cpus"] == [1]


def test_a_tracer_that_fails_leaves_no_state_and_no_folder(monkeypatch, tmp_path):
    out, got = watch(monkeypatch, options(tmp_path), Tracer([], rc=1))
    assert got == ["started"] and (out.state, out.rc) == (None, 1)
    assert not (tmp_path / "out").exists()
