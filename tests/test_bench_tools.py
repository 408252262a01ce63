# SPDX-License-Identifier: GPL-2.0-only
"""The benchmarks' own tools (docs/bench.md): build/bench/cacheline_rtt,
build/bench/memcpy_bw, build/bench/switch_storm, `jtr ping --one-thread` and the sockperf reading of
bench/transport_bench.py. They run, their output parses and holds together;
no timing goals here (the machine is shared)."""
import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT, load, run_jtr
from test_transports import addr_for, check_percentiles, finish, kill_all, spawn

BENCH = os.path.join(ROOT, "build", "bench")
PCT_KEYS = ["50", "90", "99", "99.9", "99.99", "99.999"]

sys.path.insert(0, os.path.join(ROOT, "bench"))


def two_cpus():
    from jtrpy.system.cpus import online_cpus
    cpus = [c for c in online_cpus() if c in os.sched_getaffinity(0)]
    if len(cpus) < 2:
        pytest.skip("needs two CPUs this process may use; has %s" % cpus)
    return cpus[0], cpus[-1]


@pytest.fixture(scope="module", autouse=True)
def built():
    p = subprocess.run(["make", "-s", "build/bench/cacheline_rtt", "build/bench/memcpy_bw",
                        "build/bench/switch_storm"], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def tool(name, *args):
    p = subprocess.run([os.path.join(BENCH, name)] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=120)
    return p


def check_stats(d, count):
    """samples, min <= percentiles (monotone) <= max, mean inside."""
    assert d["samples"] == count
    pcts = [d["percentiles_ns"][k] for k in PCT_KEYS]
    assert pcts[0] > 0
    assert d["min_ns"] <= pcts[0]
    assert pcts == sorted(pcts), pcts
    assert pcts[-1] <= d["max_ns"]
    assert d["min_ns"] <= d["mean_ns"] <= d["max_ns"]


@pytest.mark.parametrize("pause", [False, True], ids=["plain", "pause"])
def test_cacheline_rtt_runs_and_parses(pause):
    a, b = two_cpus()
    p = tool("cacheline_rtt", "-a", a, "-b", b, "-n", "50K", *(["--pause"] if pause else []))
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["tool"] == "cacheline_rtt" and (d["cpu_a"], d["cpu_b"]) == (a, b)
    assert d["pause"] is pause and d["tsc_hz"] > 0
    check_stats(d, 50000)


def test_memcpy_bw_runs_and_parses():
    a, b = two_cpus()
    p = tool("memcpy_bw", "-a", a, "-b", b, "-n", "2K", "-s", "64K", "-k", "3")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert (d["block_bytes"], d["slots"], d["blocks"]) == (65536, 3, 2000)
    assert d["seconds"] > 0
    # the bandwidth is the blocks over the time they took
    assert d["bytes_per_s"] == pytest.approx(2000 * 65536 / d["seconds"], rel=1e-3)
    check_stats(d, 2000)
    # a block's time at the consumer is part of the run: their mean times the
    # count cannot exceed the run (plus rounding of each sample's ns)
    assert d["mean_ns"] * 2000 <= d["seconds"] * 1e9 * 1.01 + 2000


def test_switch_storm_switches_at_each_call():
    """Its threads on one CPU: the kernel counts a switch for (about) each
    sched_yield, and the rate is the calls over the time."""
    _, b = two_cpus()
    p = tool("switch_storm", "-c", b, "-d", "300ms", "-t", "3")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert (d["cpu"], d["threads"]) == (b, 3)
    assert 0.3 <= d["seconds"] < 5
    assert d["calls"] > 0
    assert d["calls_per_s"] == pytest.approx(d["calls"] / d["seconds"], rel=1e-3)
    # a yield with another thread runnable on the CPU hands it over (the
    # first and last may not); other tasks on a busy CPU preempt them too, so
    # there may be more switches than calls, never far fewer
    assert d["calls"] * 0.9 - 10 <= d["switches"] <= d["calls"] * 2 + 1000, d


@pytest.mark.parametrize("name,args,msg", [
    ("cacheline_rtt", ["-a", "1", "-b", "1"], "two different CPUs"),
    ("cacheline_rtt", ["-n", "0"], "-n 0"),
    ("cacheline_rtt", ["-a", "9999"], "-a 9999"),
    ("cacheline_rtt", ["--bogus"], "--bogus"),
    ("memcpy_bw", ["-s", "12"], "-s 12"),
    ("memcpy_bw", ["-k", "1"], "-k 1"),
    ("memcpy_bw", ["extra"], "takes no arguments"),
    ("switch_storm", ["-d", "0"], "-d 0"),
    ("switch_storm", ["-t", "17"], "-t 17"),
    ("switch_storm", ["-c", "9999"], "-c 9999"),
    ("switch_storm", ["extra"], "takes no arguments"),
])
def test_bench_tools_bad_input_exit_2(name, args, msg):
    p = tool(name, *args)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert msg in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stdout == ""


@pytest.mark.parametrize("kind,busy", [("shm", True), ("udp", False), ("tcp", True)])
def test_ping_one_thread(tmp_path, validate, kind, busy):
    """--one-thread: one message in flight, every reply back, both round trips
    recorded, the thread on the CPU asked for."""
    a, b = two_cpus()
    addr = addr_for(kind, tmp_path)
    common = ["-T", kind, "-P", addr] + (["-b"] if busy else [])
    pong = spawn("pong", *common, "-c", b, "-q", "--wait", "30")
    try:
        out = tmp_path / "ping"
        p = run_jtr("ping", *common, "--one-thread", "-c", a, "-r", "max", "-n", 2000,
                    "-w", 20, "-o", out, "-q", "--wait", 20, timeout=120)
        assert p.returncode == 0, p.stderr
        rc, _, err = finish(pong)
        assert rc == 0, err
        res = validate(load(out))
    finally:
        kill_all([pong])
        if kind == "shm":
            for f in os.listdir("/dev/shm"):
                if f.startswith("jtr-" + addr):
                    os.unlink(os.path.join("/dev/shm", f))
    assert res["params"]["one_thread"] is True
    assert res["params"]["send_cpu"] == res["params"]["recv_cpu"] == a
    t = res["transport"]
    assert t["sent"] == 2000 and t["received"] == 2020 and t["lost"] == 0 and t["peer"] == "ok"
    fi, fs, sc = res["runs"]
    for r in res["runs"]:
        assert r["samples"] == 2000
        check_percentiles(r)
    # -r max: each message is sent when the last reply is in, so its intended
    # time is its send time; a round trip holds its send call
    assert fi["percentiles_ns"] == fs["percentiles_ns"]
    assert fs["min_ns"] >= sc["min_ns"]


def test_ping_one_thread_two_cpus_is_usage_error():
    p = run_jtr("ping", "--one-thread", "-A", "0", "-a", "1")
    assert p.returncode == 2
    assert "give -a CPU only" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_sockperf_round_reads_round_trips():
    """bench/transport_bench.py reads sockperf's 50th percentile of round trips
    (--full-rtt) in ns; sockperf's own summary line agrees in scale."""
    if not shutil.which("sockperf"):
        pytest.skip("sockperf is not installed (make deps installs it)")
    import transport_bench as tb
    a, b = two_cpus()
    r, cmds = tb.sockperf_round("udp", False, a, b, 1)
    assert r["p50_ns"] > 0 and r["round_trips"] > 0
    assert "--full-rtt" in cmds[1] and cmds[0].startswith("taskset -c %d sockperf server" % b)


def test_bench_item_selection_rejects_unknown():
    env = dict(os.environ, BENCH="transports,bogus")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench.py")],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 2
    assert "BENCH=transports,bogus: unknown item bogus" in p.stderr


def test_floor_ratios_pair_each_program_with_its_floor():
    """bench/floor_bench.py: jtr's program on a tracepoint against the empty one on
    the same tracepoint, the irq_vectors programs together against theirs; a
    tracepoint with too few runs is left out; the program that reads the clock
    once against the same floor where it ran; the means and the dearest."""
    import floor_bench as fb

    def prog(runs, ns):
        return {"run_count": runs, "run_time_ns": runs * ns}
    programs = {"btf_sched_switch": prog(5000, 300), "floor_sched_switch": prog(5000, 50),
                "btf_softirq_entry": prog(4000, 100), "floor_softirq_entry": prog(4000, 50),
                "btf_nmi_handler": prog(10, 900), "floor_nmi_handler": prog(10, 40),
                "vec_entry_1": prog(3000, 200), "vec_exit_1": prog(1000, 40),
                "floor_vectors": prog(4000, 40), "btf_page_fault_user": prog(9000, 80),
                "clock_sched_switch": prog(5000, 90), "clock_vectors": prog(4000, 60),
                "clock_softirq_entry": prog(10, 70)}
    r = fb.ratios(programs)
    assert set(r) == {"sched_switch", "softirq_entry", "irq_vectors"}
    assert r["sched_switch"] == {"runs": 5000, "jtr_ns": 300.0, "floor_ns": 50.0, "ratio": 6.0,
                                 "clock_ns": 90.0, "clock_ratio": 1.8}
    assert r["irq_vectors"]["jtr_ns"] == 160.0 and r["irq_vectors"]["ratio"] == 4.0
    assert r["irq_vectors"]["clock_ratio"] == 1.5
    assert r["softirq_entry"]["clock_ratio"] is None    # its clock program ran too few times
    s = fb.summarise([r, dict(r, sched_switch=dict(r["sched_switch"], ratio=4.0))])
    assert s["tracepoints"]["sched_switch"]["ratio"] == 5.0
    assert s["mean_ratio"] == pytest.approx((5.0 + 2.0 + 4.0) / 3)
    assert s["weighted_ratio"] == pytest.approx((5.0 * 5000 + 2.0 * 4000 + 4.0 * 4000) / 13000)
    assert s["dearest"][0] == "sched_switch"
    assert s["clock_mean_ratio"] == pytest.approx((1.8 + 1.5) / 2)
    assert s["clock_weighted_ratio"] == pytest.approx((1.8 * 5000 + 1.5 * 4000) / 9000)
