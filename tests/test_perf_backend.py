# SPDX-License-Identifier: GPL-2.0-only
"""The perf backend: the same events through `perf record`, the same attribution;
jtr run falls back to it when BPF is not available."""
import glob
import json
import os
import subprocess

import pytest
from conftest import JTR, load, run_jtr, wait_for
from injection import charged, cpus, fifo_args, need_perf, part_of, run_with

# the tests that time or attribute real runs are marked measures (alone, after
# the rest); the others judge what the commands write and say, which holds beside
# other tests


def injector_count(res, spans):
    return charged(res, spans, lambda o: part_of(o, "task preemption",
                                                name="jtr-inject") > 0)


def check_cost(res, stdout, backend, cpu):
    """The run says which backend traced it and what that cost, measured: the
    tracer's process ran off the traced CPU, used CPU time, and (eBPF) the
    programs ran at least once per event written, (perf) the conversion took time."""
    tr = res["attribution"]["tracer"]
    cost = tr["cost"]
    assert cost["setup_cpu_ns"] >= 0 and cost["tracing_cpu_ns"] >= 0, cost
    assert str(cpu) not in cost["process_cpus"].split(","), cost
    window_ns = tr["end_ns"] - tr["start_ns"]
    # one tracer process cannot use more than the CPUs it may run on
    assert cost["tracing_cpu_ns"] < window_ns * (1 + cost["process_cpus"].count(",")), cost
    name = {"ebpf": "eBPF (jtr trace)", "perf": "perf (perf record)"}[backend]
    assert "tracer: %s, %d events, %d dropped" % (name, tr["events"], tr["dropped"]) in stdout
    line = next(x for x in stdout.splitlines() if x.strip().startswith("cost: "))
    if backend == "ebpf":
        assert cost["kernel_runs"] >= tr["events"] and cost["kernel_ns"] > 0, cost
        assert "convert_ns" not in cost
        assert "BPF programs " in line and "the tracer process " in line
    else:
        assert cost["convert_ns"] > 0 and "kernel_ns" not in cost, cost
        assert "perf record " in line and "converting after the run" in line
        assert "not measured per run" in line


@pytest.mark.measures
def test_fifo_injection_same_cause_through_both_backends(tmp_path, fifo_injected):
    """The FIFO spinner through perf, against the shared eBPF-traced run of it."""
    need_perf()
    cpu, _ = cpus()
    perf = run_with(tmp_path, cpu, fifo_args(cpu), ["--backend", "perf"])
    got = {}
    for backend, (res, spans, stdout) in (("perf", perf), ("ebpf", fifo_injected[1:])):
        assert res["attribution"]["tracer"]["backend"] == backend
        check_cost(res, stdout, backend, cpu)
        n = injector_count(res, spans)
        assert n >= 0.95 * len(spans), "%s: %d of %d spins" % (backend, n, len(spans))
        names = {c["name"].split(" (pid")[0] for c in res["attribution"]["causes"]
                 if c["category"] == "task preemption" and c["name"].startswith("jtr-inject")}
        got[backend] = (n / len(spans), names)
    assert abs(got["perf"][0] - got["ebpf"][0]) <= 0.05, got
    assert got["perf"][1] == got["ebpf"][1] == {"jtr-inject"}, got


@pytest.mark.measures
def test_run_falls_back_to_perf_without_bpf(tmp_path, validate):
    """BPF switched off: jtr run picks perf and still attributes. Short-lived tasks
    run on the traced CPU meanwhile: perf script prints tid -1 for the events of a
    task that is exiting (its pid is already gone); they are read, not counted as
    unreadable lines."""
    need_perf()
    cpu, _ = cpus()
    out = tmp_path / "fb"
    run = subprocess.Popen([JTR, "run", "-c", str(cpu), "-d", "2", "-o", str(out)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, JTR_NO_BPF="1"))
    # the probe makes its hidden results folder once perf records (starting perf
    # took 1.7 s here): the tasks below are traced, and the probe runs 2 s more
    wait_for(lambda: glob.glob(str(tmp_path / ".fb.partial-*")) or run.poll() is not None)
    for _ in range(20):     # short-lived tasks on the traced CPU
        subprocess.run(["taskset", "-c", str(cpu), "true"], check=True)
    stdout, stderr = run.communicate(timeout=120)
    assert run.returncode == 0, stderr
    assert "eBPF tracer unavailable (BPF is switched off" in stderr
    assert "tracing with perf" in stderr
    res = validate(load(out))
    att = res["attribution"]
    assert att["tracer"]["backend"] == "perf" and att["tracer"]["events"] > 0
    check_cost(res, stdout, "perf", cpu)
    assert sum(c["total_ns"] for c in att["causes"]) == att["outliers"]["total_ns"]
    assert any(c["category"] == "timer tick" for c in att["causes"])
    t = json.load(open(out / "trace.json"))
    assert t["backend"] == "perf" and "local_timer" in t["vectors"]
    # the kernel refuses irq_work_exit to perf: left out with its pair, and said so
    assert all(not m.startswith("irq_vectors:local_timer") for m in t["missing"])
    assert not [w for w in t["warnings"] if "could not be read" in w], t["warnings"]


def test_backend_option_errors(tmp_path):
    p = run_jtr("run", "--backend", "dtrace", "-d", "1", "-o", tmp_path / "x")
    assert p.returncode == 2 and "--backend dtrace: use ebpf, perf or auto" in p.stderr
    assert not (tmp_path / "x").exists()


def test_perf_backend_mounts_tracefs(tmp_path):
    """On a machine where nothing has mounted tracefs yet, the perf backend mounts it
    (as the eBPF tracer does) instead of refusing; in a mount namespace of its own."""
    need_perf()
    cpu, _ = cpus()
    out = tmp_path / "m"
    p = subprocess.run(["unshare", "--mount", "sh", "-c",
                        "mount --make-rprivate / && umount -l /sys/kernel/tracing 2>/dev/null; "
                        "mount -t tmpfs none /sys/kernel/tracing && "
                        "test ! -e /sys/kernel/tracing/events && "
                        "%s run --backend perf -c %d -d 1 -o %s && "
                        "test -d /sys/kernel/tracing/events" % (JTR, cpu, out)],
                       text=True, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert load(out)["attribution"]["tracer"]["backend"] == "perf"
