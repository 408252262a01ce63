# SPDX-License-Identifier: GPL-2.0-only
"""Container labels: a task that preempts the probe or the watched application
is named with the container, pod or systemd unit its cgroup shows (ebpf/cgroups.h).
The tests make the cgroups themselves, in the layouts the label rules read: a
systemd scope in the cgroup v2 hierarchy, and Docker's cgroupfs layout
(docker/ID) in the v1 memory controller's hierarchy where the machine has one
(else in v2); the FIFO spinner joins one, and jtr run and jtr watch must name it."""
import json
import os
import secrets
import subprocess
import sys
import time

import pytest
from conftest import BIN, need_tracing
from injection import FIFO_SPIN_US, cpus, fifo_args, in_cgroups, run_folder
from test_watch import INJECT, SPIN, cpu_state, watched_app

from jtrpy.trace.events import SWITCH, TASK, read_events

pytestmark = pytest.mark.measures


def mounts():
    """(the cgroup v2 mount, the v1 memory controller's mount); None for none."""
    v2 = v1 = None
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, path, kind, opts = line.split()[:4]
            if kind == "cgroup2" and v2 is None:
                v2 = path
            elif kind == "cgroup" and "memory" in opts.split(",") and v1 is None:
                v1 = path
    return v2, v1


@pytest.fixture
def groups():
    """Two cgroups made here: "scope", /jtr-test-PID.scope in v2, and "docker",
    /docker/ID (64 hex digits) in v1's memory hierarchy, or /jtr-test-PID/docker/ID
    in v2 where there is none; {name: (folder, the label jtr must give)}. Removed
    after the test (once the tasks in them have ended)."""
    v2, v1 = mounts()
    if v2 is None:
        pytest.skip("no cgroup v2 hierarchy is mounted (/proc/self/mounts): the "
                    "test makes its cgroups there")
    cid = secrets.token_hex(32)
    made = []

    def make(*parts):
        path = os.path.join(*parts)
        if not os.path.isdir(path):
            os.mkdir(path)
            made.append(path)
        return path

    try:
        scope = make(v2, "jtr-test-%d.scope" % os.getpid())
        if v1 is not None:
            docker = make(make(v1, "docker"), cid)
        else:
            docker = make(make(make(v2, "jtr-test-%d" % os.getpid()), "docker"), cid)
        yield {"scope": (scope, os.path.basename(scope)),
               "docker": (docker, "docker " + cid[:12])}
    finally:
        for path in reversed(made):
            for _ in range(50):         # its last task may take a moment to go
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)


def procs(folder):
    return os.path.join(folder, "cgroup.procs")


def test_run_names_the_container_of_the_task_that_preempted(tmp_path, groups):
    """jtr run beside the FIFO spinner started in a systemd scope: the spinner's
    cause carries the scope (result.json's containers, each task's container,
    the summary's cause name), trace.json resolves its cgroup to the path."""
    need_tracing()
    cpu, _ = cpus()
    folder, label = groups["scope"]
    out, res, inside, stdout = run_folder(tmp_path, cpu, fifo_args(cpu), enter=[procs(folder)])
    assert len(inside) >= 5, inside
    rows = [c for c in res["attribution"]["causes"] if c["name"] == "jtr-inject"
            and any(t["prio"] == 89 for t in c["tasks"])]
    assert rows, [c["name"] for c in res["attribution"]["causes"]]
    (spinner,) = rows
    assert spinner["containers"] == [label], spinner
    assert all(t.get("container") == label for t in spinner["tasks"] if t["prio"] == 89)
    assert spinner["total_ns"] >= len(inside) * FIFO_SPIN_US * 1000 // 2, spinner
    assert "[%s]" % label in stdout, stdout
    with open(os.path.join(str(out), "trace.json")) as f:
        trace = json.load(f)
    paths = {g["path"]: g["label"] for g in trace["cgroups"]["v2"].values()}
    assert paths.get("/" + label) == label, trace["cgroups"]


def test_watch_labels_the_preempting_task_by_its_container(tmp_path, groups):
    """jtr watch --app PID on the application's CPU while the spinner, started in
    Docker's layout, preempts it 20 times: its row carries the container (the
    fifth field of the state's names, Prometheus' container label), with every
    preemption."""
    need_tracing()
    cpu, other = cpus()
    folder, label = groups["docker"]
    doc = watched_app(tmp_path, cpu, other, in_cgroups([procs(folder)], [
        "taskset", "-c", str(other), "unshare", "--pid", "--fork", "--kill-child",
        "--mount-proc", sys.executable, INJECT, str(cpu), "--other", str(other),
        "--max-s", "60", "--no-app", "--spinner-comm", SPIN, "--spins", "20",
        "--period-ms", "50", "--spin-us", "300", "--out", str(tmp_path / "spans.csv")]))
    _, cats = cpu_state(doc, cpu)
    spin = [n for n in cats["task preemption"]["names"] if n[0] == SPIN]
    assert spin and all(n[4:] == [label] for n in spin), spin
    assert sum(n[3] for n in spin) == 20, spin     # each spin preempted it once
    prom = (tmp_path / "w.prom").read_text()
    assert 'container="%s"' % label in prom


def test_a_task_moved_to_another_cgroup_is_described_again(tmp_path, groups):
    """A task switching in on the traced CPU all along, described once and then
    remembered by that CPU with its set of cgroups (trace.bpf.c note_task: no
    lookup a switch), is described again once it joins another cgroup: the log
    has its record before the move and one after, and labels it by the new
    group."""
    need_tracing()
    cpu, _ = cpus()
    folder, label = groups["docker"]
    sleeper = subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, "-c",
                                "import time\nwhile True: time.sleep(0.001)"])
    out = tmp_path / "tr"
    try:
        tracer = subprocess.Popen([os.path.join(BIN, "jtr-trace"), "-c", str(cpu), "-d", "3",
                                   "-o", str(out)], stdout=subprocess.PIPE, text=True)
        assert tracer.stdout.readline().startswith("tracing ")
        time.sleep(1)       # its switches in the log, with the group it began in
        moved_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        with open(procs(folder), "w") as f:
            f.write(str(sleeper.pid))
        moved_by_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)     # a move takes ms
        tracer.communicate(timeout=60)
        assert tracer.returncode == 0
    finally:
        sleeper.kill()
        sleeper.wait()
    log = read_events(str(out))
    told = [e.ts_ns for e in log.of_type(TASK) if e.a & 0xffffffff == sleeper.pid]
    assert told and told[0] < moved_ns < told[-1], (told, moved_ns)
    # by its first switch in after the move (or the second: the move may land
    # while one is under way), not when another task takes its place in the
    # CPU's memory
    ins = [e.ts_ns for e in log.of_type(SWITCH)
           if e.a >> 32 == sleeper.pid and e.ts_ns > moved_by_ns]
    after = [t for t in told if t > moved_ns]
    assert len(ins) > 10 and after[0] < ins[1], (after, ins[:3])
    assert log.task_groups().get(sleeper.pid) == label
