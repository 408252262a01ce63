# SPDX-License-Identifier: GPL-2.0-only
"""tune.knobs: the cpu_dma_latency holder (recorded before it holds anything) and
the cpuset folder (right under the cgroup mount, nowhere else)."""
import os
import subprocess
import sys
import time

import pytest

from jtrpy.tune import knobs as K


def test_holder_leaves_without_holding_when_the_gate_closes():
    """The applier died before it recorded the holder: the gate reads end-of-file
    and the holder exits without opening /dev/cpu_dma_latency."""
    gate_r, gate_w = os.pipe()
    st_r, st_w = os.pipe()
    p = subprocess.Popen([sys.executable, "-c", K.HOLDER, "1", str(gate_r), str(st_w)],
                         pass_fds=(gate_r, st_w), stderr=subprocess.PIPE)
    os.close(gate_r)
    os.close(st_w)
    os.close(gate_w)                        # no "go"
    with os.fdopen(st_r) as f:
        assert f.read() == ""               # never said "ok"
    assert p.wait(10) == 1 and p.stderr.read() == b""


@pytest.fixture
def dma(tmp_path, monkeypatch):
    """Root and the device: the value before, put back whatever happens."""
    if os.geteuid() != 0 or not os.access(K.DMA_LATENCY, os.W_OK):
        pytest.skip("holding %s needs root and the device" % K.DMA_LATENCY)
    monkeypatch.setenv("JTR_STATE_DIR", str(tmp_path))
    before = K.read_dma_latency()
    try:
        yield before
    finally:
        pid = K.holder_pid()
        K.stop_dma_holder()
        if pid and K.task_stat(pid):
            os.kill(pid, 9)


@pytest.mark.machine   # the device is the machine's: a tuning test reads it
def test_holder_is_recorded_holds_and_stops(dma, tmp_path):
    K.start_dma_holder(7)
    pid = K.holder_pid()
    assert pid and K.read_dma_latency() == 7
    with open(tmp_path / "cpu_dma_latency.pid") as f:
        assert int(f.read().split()[0]) == pid
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        assert K.HOLDER_TAG.encode() in f.read()
    K.stop_dma_holder()
    assert K.holder_pid() is None and K.read_dma_latency() == dma
    assert os.listdir(tmp_path) == []


@pytest.mark.machine   # the device is the machine's: a tuning test reads it
def test_a_holder_never_recorded_is_ended_by_the_next_stop(dma, tmp_path):
    """The applier was killed after it started its holder and before it wrote the
    pidfile: the holder waits at its gate holding nothing; stop_dma_holder (what
    revert calls) ends it too, and leaves another state folder's holder alone."""
    gate_r, gate_w = os.pipe()
    st_r, st_w = os.pipe()
    strays = []
    for pidfile in (K.dma_pidfile(), str(tmp_path / "elsewhere" / "cpu_dma_latency.pid")):
        strays.append(subprocess.Popen(
            [sys.executable, "-c", K.HOLDER, "1", str(gate_r), str(st_w), K.HOLDER_TAG,
             pidfile], pass_fds=(gate_r, st_w)))
    os.close(gate_r)
    os.close(st_w)
    try:
        mine, other = strays
        deadline = time.monotonic() + 10
        while K.unrecorded_holders() != [mine.pid] and time.monotonic() < deadline:
            time.sleep(0.01)                # their python starting
        assert K.unrecorded_holders() == [mine.pid]
        K.stop_dma_holder()
        assert mine.wait(5) == -9 and other.poll() is None
        assert K.read_dma_latency() == dma
    finally:
        os.close(gate_w)
        os.close(st_r)
        for p in strays:
            p.kill()
            p.wait()


@pytest.mark.parametrize("name", ["../x", "a/b", "..", ".", "", "x" * 101, "-x/"])
def test_cpuset_names_outside_the_mount_are_refused(name):
    assert K.cpuset_name_problem(name)
    if K.cpuset_root()[0] is None:
        return
    with pytest.raises(K.KnobError):
        K.cpuset_path(name)
    assert K.cpuset_dir({"name": name}) is None
    with pytest.raises(K.KnobError):
        K.make_cpuset({"name": name}, "0")


def test_cpuset_path_is_right_under_the_mount():
    assert K.cpuset_name_problem("jtr-isolated") is None
    ver, root = K.cpuset_root()
    if ver is None:
        pytest.skip(root)
    assert K.cpuset_path("jtr-isolated") == (ver, root, os.path.join(root, "jtr-isolated"))
