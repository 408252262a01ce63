"""The perf backend: the same events through `perf record`, the same attribution;
jtr run falls back to it when BPF is not available."""
import json
import shutil
import subprocess
import time

import pytest

from conftest import JTR, load, need_tracing, run_jtr
from test_attribution import charged, cpus, part_of, run_with


def need_perf():
    need_tracing()
    if not shutil.which("perf"):
        pytest.skip("perf is not installed (Debian: linux-perf)")


def injector_count(res, spans):
    return charged(res, spans, lambda o: part_of(o, "task preemption",
                                                prefix="jtr-inject (pid ") > 0)


def test_fifo_injection_same_cause_through_both_backends(tmp_path):
    need_perf()
    cpu, _ = cpus()
    args = ["fifo", str(cpu), "--prio", "10", "--spin-us", "300", "--period-ms", "20"]
    got = {}
    for backend in ("perf", "ebpf"):
        d = tmp_path / backend
        d.mkdir()
        res, spans, _ = run_with(d, cpu, args, ["--backend", backend])
        assert res["attribution"]["tracer"]["backend"] == backend
        n = injector_count(res, spans)
        assert n >= 0.95 * len(spans), "%s: %d of %d spins" % (backend, n, len(spans))
        cause = next(c for c in res["attribution"]["causes"]
                     if c["category"] == "task preemption" and c["name"].startswith("jtr-inject"))
        got[backend] = (n / len(spans), cause["name"].split(" (pid")[0])
    assert abs(got["perf"][0] - got["ebpf"][0]) <= 0.05, got
    assert got["perf"][1] == got["ebpf"][1] == "jtr-inject"


def test_run_falls_back_to_perf_without_bpf(tmp_path, validate):
    need_perf()
    cpu, _ = cpus()
    out = tmp_path / "fb"
    p = run_jtr("run", "-c", cpu, "-d", "2", "-o", out, env={"JTR_NO_BPF": "1"}, check=True)
    assert "eBPF tracer unavailable (BPF is switched off" in p.stderr
    assert "tracing with perf" in p.stderr
    res = validate(load(out))
    att = res["attribution"]
    assert att["tracer"]["backend"] == "perf" and att["tracer"]["events"] > 0
    assert sum(c["total_ns"] for c in att["causes"]) == att["outliers"]["total_ns"]
    assert any(c["category"] == "timer tick" for c in att["causes"])
    t = json.load(open(out / "trace.json"))
    assert t["backend"] == "perf" and "local_timer" in t["vectors"]
    # the kernel refuses irq_work_exit to perf: left out with its pair, and said so
    assert all(not m.startswith("irq_vectors:local_timer") for m in t["missing"])


def test_backend_option_errors(tmp_path):
    p = run_jtr("run", "--backend", "dtrace", "-d", "1", "-o", tmp_path / "x")
    assert p.returncode == 2 and "--backend dtrace: use ebpf, perf or auto" in p.stderr
    assert not (tmp_path / "x").exists()


def test_perf_backend_reads_events_of_exiting_tasks(tmp_path):
    """perf script prints tid -1 for the events of a task that is exiting (its
    pid is already gone); they are read, not counted as unreadable lines."""
    need_perf()
    cpu, _ = cpus()
    out = tmp_path / "exits"
    run = subprocess.Popen([JTR, "run", "--backend", "perf", "-c", str(cpu), "-d", "3",
                            "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    time.sleep(1.5)
    for _ in range(20):     # short-lived tasks on the traced CPU
        subprocess.run(["taskset", "-c", str(cpu), "true"], check=True)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    t = json.load(open(out / "trace.json"))
    assert not [w for w in t["warnings"] if "could not be read" in w], t["warnings"]
    assert load(out)["attribution"]["tracer"]["events"] > 0
