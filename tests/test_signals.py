# SPDX-License-Identifier: GPL-2.0-only
"""The stop rule under the signals a terminal, `timeout`, systemd and CI runners
send: to the front end alone, to its whole process group, twice, and SIGKILL.
Whatever comes, the measured data is kept, the exit status is 130, and no
probe, tracer, BPF program or temporary folder outlives jtr (docs/reliability.md).
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import time

import pytest
from conftest import JTR, ROOT, comm, free_port, load, need_tracing, wait_for

# not marked measures: real runs judged by what arrives and how they end, not by
# timing, so they run beside other tests (docs/testing.md)





def _started_by(pid):
    """Pids of the programs front end @pid started (JTR_PARENT_PID=@pid in their
    environment), wherever they are now (reparented after a SIGKILL too)."""
    found = []
    mark = b"JTR_PARENT_PID=%d\0" % pid
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                if mark in f.read() + b"\0":
                    found.append(int(d))
        except OSError:
            pass
    return found




def _bpf_programs():
    """The ids of the BPF programs loaded now (None without bpftool: not checked)."""
    if not shutil.which("bpftool"):
        return None
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    return {p["id"] for p in json.loads(out.stdout or "[]")} if out.returncode == 0 else set()


def _trace_dirs(where):
    """The tracer folders in @where, the TMPDIR of the jtr _start gives it (the
    machine's /tmp holds those of the other files' runs beside this one)."""
    return set(glob.glob(os.path.join(where, "tmp", "jtr-trace-*")))


def _start(args, cwd):
    os.makedirs(os.path.join(cwd, "tmp"), exist_ok=True)
    return subprocess.Popen([JTR] + args, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, TMPDIR=os.path.join(cwd, "tmp")))


def _send(p, sig, group):
    try:
        if group:
            os.killpg(p.pid, sig)
        else:
            p.send_signal(sig)
    except ProcessLookupError:
        pass


def _nothing_left(pid, bpf_before, dirs_before, where):
    """No program of front end @pid still runs, no BPF program and no tracer
    folder of it is left (within a few seconds: an orphan gets SIGTERM)."""
    assert wait_for(lambda: not _started_by(pid), 10), \
        [(p, comm(p)) for p in _started_by(pid)]
    if bpf_before is not None:
        assert wait_for(lambda: not (_bpf_programs() - bpf_before), 10), \
            "BPF programs left: %s" % (_bpf_programs() - bpf_before)
    assert _trace_dirs(where) <= dirs_before, _trace_dirs(where) - dirs_before


def _measuring(p, name):
    """True once front end @p's probe @name (comm) runs."""
    return any(comm(c) == name for c in _started_by(p.pid))


@pytest.mark.parametrize("group", [False, True], ids=["to-jtr", "to-group"])
@pytest.mark.parametrize("when", ["tracer-starting", "measuring", "measuring-twice"])
def test_jtr_run_stopped_by_sigterm(tmp_path, group, when):
    """SIGTERM to `jtr run` (or to its process group) at any moment: the probe
    gets one stop, writes its partial result, the tracer records until it has
    and is detached, the partial run is attributed, exit 130, nothing left."""
    need_tracing()
    bpf, dirs = _bpf_programs(), _trace_dirs(tmp_path)
    out = tmp_path / "run"
    p = _start(["run", "-c", "1", "-d", "30", "-o", str(out)], tmp_path)
    if when == "tracer-starting":
        assert wait_for(lambda: any(comm(c) == "jtr-trace" for c in _started_by(p.pid)))
    else:
        assert wait_for(lambda: _measuring(p, "jtr-gap"))
        time.sleep(1.0)
    _send(p, signal.SIGTERM, group)
    if when == "measuring-twice":
        time.sleep(0.005)
        _send(p, signal.SIGTERM, group)
        _send(p, signal.SIGHUP, group)
    so, se = p.communicate(timeout=60)
    assert p.returncode == 130, se
    _nothing_left(p.pid, bpf, dirs, tmp_path)
    if when == "tracer-starting":
        # stopped before the probe ran: nothing measured, nothing written
        assert se.rstrip().splitlines()[-1] == "jtr run: interrupted"
        assert not out.exists()
        return
    assert se.rstrip().splitlines()[-1] == "jtr run: interrupted; partial results in %s/" % out
    res = load(out)
    assert res["partial"] is True
    assert res["attribution"]["tracer"]["complete"] is True
    assert (out / "events.bin").is_file() and "causes of" in so
    assert not [n for n in os.listdir(tmp_path) if ".partial-" in n]


@pytest.mark.parametrize("sig", ["INT", "TERM"])
def test_jtr_run_app_stopped(tmp_path, sig):
    """Ctrl-C (to the group, as a terminal sends it) or SIGTERM (to jtr) while jtr
    run app times a program it started: the program and the tracer stop once,
    the calls timed so far are kept and attributed, marked partial, exit 130,
    nothing left running or loaded."""
    need_tracing()
    target = os.path.join(ROOT, "build", "tests", "jtr-app-target")
    bpf, dirs = _bpf_programs(), _trace_dirs(tmp_path)
    out = tmp_path / "run"
    p = _start(["run", "app", "--func", target + ":on_tick", "-c", "1", "-o", str(out), "--",
                target, "-c", "1", "-d", "30"], tmp_path)
    assert wait_for(lambda: _measuring(p, "jtr-app-target"))     # let go: probes in
    time.sleep(1.0)
    _send(p, getattr(signal, "SIG" + sig), sig == "INT")
    so, se = p.communicate(timeout=60)
    assert p.returncode == 130, se
    _nothing_left(p.pid, bpf, dirs, tmp_path)
    assert se.rstrip().splitlines()[-1] == "jtr run: interrupted; partial results in %s/" % out
    res = load(out)
    assert res["tool"] == "app" and res["partial"] is True
    assert res["runs"][0]["calls"] > 500 and "attribution" in res
    assert not [n for n in os.listdir(tmp_path) if ".partial-" in n]


def test_jtr_run_killed_leaves_no_tracer(tmp_path):
    """SIGKILL of `jtr run` (nothing can be caught): its probe and tracer get
    SIGTERM from the kernel (PR_SET_PDEATHSIG), the tracer detaches and keeps
    nothing in its temporary folder, the probe writes what it measured."""
    need_tracing()
    bpf, dirs = _bpf_programs(), _trace_dirs(tmp_path)
    out = tmp_path / "run"
    p = _start(["run", "-c", "1", "-d", "30", "-o", str(out)], tmp_path)
    assert wait_for(lambda: _measuring(p, "jtr-gap"))
    time.sleep(1.0)
    kids = _started_by(p.pid)
    assert sorted(comm(k) for k in kids) == ["jtr-gap", "jtr-trace"]
    p.kill()
    p.communicate(timeout=30)
    _nothing_left(p.pid, bpf, dirs, tmp_path)
    assert load(out)["partial"] is True


def test_jtr_run_ping_killed_leaves_pongs_folder_to_the_next_run(tmp_path):
    """SIGKILL of `jtr run ping`: pong's working folder beside the results
    (.jtr-pong-...) cannot be removed by the dead front end; the next jtr run
    there removes it (its owner's lock is gone) and leaves none of its own."""
    p = _start(["run", "ping", "--no-trace", "-c", "1", "--pong-cpu", "0", "-r", "1K",
                "-d", "30", "-o", str(tmp_path / "a")], tmp_path)
    assert wait_for(lambda: _measuring(p, "jtr-ping"))
    left = glob.glob(str(tmp_path / ".jtr-pong-*"))
    assert len(left) == 1
    p.kill()
    p.communicate(timeout=30)
    _nothing_left(p.pid, None, set(), tmp_path)
    assert glob.glob(str(tmp_path / ".jtr-pong-*")) == left
    q = _start(["run", "ping", "--no-trace", "-c", "1", "--pong-cpu", "0", "-r", "1K",
                "-d", "200ms", "-o", str(tmp_path / "b")], tmp_path)
    _, err = q.communicate(timeout=60)
    assert q.returncode == 0, err
    assert not glob.glob(str(tmp_path / ".jtr-*")), os.listdir(tmp_path)


def test_suite_stopped_by_its_group_keeps_the_running_item(tmp_path):
    """SIGTERM to the process group of `jtr suite` while gap runs: gap gets one
    stop (not two), so what it measured is kept and the suite is partial."""
    out = tmp_path / "suite"
    dirs = _trace_dirs(tmp_path)
    p = _start(["suite", "--only", "gap", "-d", "30", "--cpus", "1", "-o", str(out)], tmp_path)
    assert wait_for(lambda: _measuring(p, "jtr-gap"))
    assert wait_for(lambda: glob.glob(str(out / ".gap.partial-*")))
    time.sleep(0.5)
    _send(p, signal.SIGTERM, True)
    time.sleep(0.005)
    _send(p, signal.SIGTERM, True)
    so, se = p.communicate(timeout=60)
    assert p.returncode == 130, se
    _nothing_left(p.pid, None, dirs, tmp_path)
    doc = json.loads((out / "suite.json").read_text())
    gap = [i for i in doc["items"] if i["name"] == "gap"][0]
    assert gap["status"] == "interrupted" and gap["exit_status"] == 130, gap
    assert load(out / "gap")["partial"] is True
    assert not [n for n in os.listdir(out) if ".partial-" in n]
    assert doc["partial"] is True


def test_ipc_stopped_by_its_group_fails_no_row(tmp_path):
    """SIGTERM to the process group of `jtr ipc`: its readers leave the stop to
    the coordinator, which ends the run in order; no row is FAILED."""
    p = _start(["ipc", "-n", "1G", "--methods", "shm-lockless", "--readers", "1", "-o",
                str(tmp_path / "ipc")], tmp_path)
    assert wait_for(lambda: len([c for c in os.listdir("/proc") if c.isdigit() and
                                  comm(int(c)) == "jtr-ipc"]) >= 3)
    time.sleep(1.0)
    _send(p, signal.SIGTERM, True)
    so, se = p.communicate(timeout=60)
    assert p.returncode == 130, se
    assert "FAILED" not in so and "died of signal" not in so + se, so + se
    assert load(tmp_path / "ipc")["partial"] is True


def test_maxrate_stopped_by_its_group_keeps_the_table(tmp_path):
    """SIGTERM to the process group of `jtr maxrate` mid-step: pub and sub get
    one stop each, the step is marked interrupted (no verdict), maxrate.json
    keeps the steps so far, exit 130, no pub or sub left."""
    out = tmp_path / "mr"
    dirs = _trace_dirs(tmp_path)
    # a port of its own: the default (17391) may be another test's beside it
    p = _start(["maxrate", "-T", "udp", "-P", "127.0.0.1:%d" % free_port(), "--from", "2000",
                "--step", "3s", "-o", str(out)], tmp_path)
    assert wait_for(lambda: _measuring(p, "jtr-pub"))
    time.sleep(0.5)
    _send(p, signal.SIGTERM, True)
    so, se = p.communicate(timeout=60)
    assert p.returncode == 130, se
    _nothing_left(p.pid, None, dirs, tmp_path)
    doc = json.loads((out / "maxrate.json").read_text())
    assert doc["state"] == "interrupted"
    assert doc["steps"] and doc["steps"][-1]["verdict"] == "interrupted"
