# SPDX-License-Identifier: GPL-2.0-only
"""jtr null, gap and clock: short real runs, checked against the schema, the
legacy formats and each other."""
import csv
import math
import os
import re
import time

import pytest
from conftest import legacy_blocks, load, run_jtr

pytestmark = pytest.mark.measures

PCTS = ["50", "90", "99", "99.9", "99.99", "99.999"]


def hist_total(h):
    return sum(b[2] for b in h["buckets"])


def check_run_stats(r):
    """What must hold in any run: histogram totals, order of the statistics."""
    h = r["histogram"]
    assert h["total"] == r["samples"] == hist_total(h)
    assert r["min_ns"] <= r["mean_ns"] <= r["max_ns"]
    vals = [r["percentiles_ns"][k] for k in PCTS]
    assert vals == sorted(vals)
    assert r["min_ns"] <= vals[0] and vals[-1] <= r["max_ns"]
    # buckets ascend, do not overlap, and hold min and max
    prev = -1
    for lo, hi, n in h["buckets"]:
        assert lo > prev and hi >= lo and n > 0
        prev = hi
    assert h["buckets"][0][0] <= r["min_ns"] <= h["buckets"][0][1]
    assert h["buckets"][-1][0] <= r["max_ns"] <= h["buckets"][-1][1]
    # p50 from the buckets, independently of the C code
    need = math.ceil(0.5 * h["total"] - 1e-9)
    cum = 0
    for _, hi, n in h["buckets"]:
        cum += n
        if cum >= need:
            assert min(max(hi, r["min_ns"]), r["max_ns"]) == r["percentiles_ns"]["50"]
            break


def test_null_result_and_legacy_text_agree(tmp_path, validate):
    out = tmp_path / "null"
    p = run_jtr("null", "-n", "30K", "--runs", "2", "-B", "100", "-o", out, "--desc", "tst_null.sh",
                check=True)
    res = validate(load(out))
    assert res["tool"] == "null" and not res["partial"]
    assert res["params"]["samples"] == 30000 and len(res["runs"]) == 2
    for f in ("summary.txt", "null.gp", "outliers.csv", "result.json"):
        assert (out / f).is_file()
    text = (out / "summary.txt").read_text()
    assert text in p.stdout  # the summary is also what the user saw
    blocks = legacy_blocks(text)
    assert len(blocks) == 2
    err = res["runs"][0]["histogram"]["max_rel_error"]
    for b, r in zip(blocks, res["runs"]):
        check_run_stats(r)
        assert b["lead"] == "Busy_spins=100" and b["hdr"].startswith("tst_null.sh: ")
        assert b["n"] == r["samples"] == 30000
        assert b["cpu"] == r["cpu"] == res["params"]["cpu"]
        assert b["tb"] == 1 and res["calibration"]["timebase"] == "tsc"
        assert b["min"] == r["min_ns"] and b["max"] == r["max_ns"]
        # the text's Average is sum // samples; the JSON's mean has 3 decimals, so a
        # mean within 0.0005 below an integer reads as that integer (31.9996 -> 32.000)
        assert b["avg"] == int(r["mean_ns"]) or b["avg"] + 1 == r["mean_ns"]
        assert b["tps"] == round(res["calibration"]["tsc_hz"])
        for pct, json_key in ((90.0, "90"), (99.0, "99"), (99.9, "99.9"), (99.99, "99.99"),
                              (99.999, "99.999")):
            v = r["percentiles_ns"][json_key]
            # the summary's "below N": the end of the 10 ns bucket holding the value
            assert v * (1 - err) - 10 <= b["below"][pct] <= v * (1 + err) + 10, (pct, v, b)
        # overflows: samples at or beyond histo_buckets x 10 ns
        beyond = sum(n for lo, hi, n in r["histogram"]["buckets"] if lo >= b["hb"] * 10)
        assert b["over"] == beyond


def test_null_unoptimised_loop_is_the_seeds_workload(tmp_path, validate):
    """--unoptimised-loop times the seeds' loop (its counter in memory, as built
    without optimisation) where -B alone times jtr's register loop: longer for the
    same 100 iterations, and its 1000 iterations' cost, measured on the CPU, at
    least 1.25 times jtr's loop's (twice and more on the CPUs of earlier runs; 1.7
    times on a Xeon that forwards a store to the next load without the round trip
    through memory: 220 against 130 ns, p50 28-34 against 22 ns); that cost in the
    params and in the legacy header (the seeds' jtr_1000_loops_cost was of their
    loop), about ten times the 100-iteration p50."""
    runs = {}
    for name, extra in (("jtr", []), ("seed", ["--unoptimised-loop"])):
        out = tmp_path / name
        run_jtr("null", "-n", "20K", "--runs", "1", "-B", "100", *extra, "-o", out, check=True)
        runs[name] = validate(load(out))
    seed, jtr = runs["seed"], runs["jtr"]
    assert seed["params"]["unoptimised_loop"] is True
    assert jtr["params"]["unoptimised_loop"] is False
    assert "unoptimised_loop_1000_cost_ns" not in jtr["params"]

    def p50(r):
        return r["runs"][0]["percentiles_ns"]["50"]
    assert p50(seed) > p50(jtr), (p50(seed), p50(jtr))
    cost = seed["params"]["unoptimised_loop_1000_cost_ns"]
    assert cost >= 1.25 * jtr["calibration"]["loops_1000_cost_ns"], (
        cost, jtr["calibration"]["loops_1000_cost_ns"])
    assert 5 * p50(seed) <= cost <= 15 * p50(seed), (cost, p50(seed))
    [b] = legacy_blocks((tmp_path / "seed" / "summary.txt").read_text())
    assert int(b["lc"]) == round(cost)
    [b] = legacy_blocks((tmp_path / "jtr" / "summary.txt").read_text())
    assert int(b["lc"]) == round(jtr["calibration"]["loops_1000_cost_ns"])


def test_null_gnuplot_file_matches_runs(tmp_path):
    out = tmp_path / "g"
    run_jtr("null", "-n", "20K", "--runs", "3", "-H", "100", "-o", out, check=True)
    res = load(out)
    blocks = (out / "null.gp").read_text().split("\n\n\n")
    blocks = [b for b in blocks if b.strip()]
    assert len(blocks) == 3
    legacy = legacy_blocks((out / "summary.txt").read_text())
    for i, (blk, r, s) in enumerate(zip(blocks, res["runs"], legacy), 1):
        lines = blk.strip("\n").split("\n")
        assert lines[0].startswith('# title_%d = "jtr null: Busy\\_spins=100' % i)
        assert lines[0].endswith('Overflows=%d"' % s["over"])
        assert lines[1] == "# xrange_%d = 1000" % i
        counts = [tuple(map(int, ln.split())) for ln in lines[2:]]
        assert all(x % 10 == 0 and x < 1000 and n > 0 for x, n in counts)
        assert sum(n for _, n in counts) + s["over"] == r["samples"]


def test_null_clock_timebase(tmp_path, validate):
    out = tmp_path / "c"
    run_jtr("null", "-n", "10K", "--runs", "1", "-t", "clock", "-o", out, check=True)
    res = validate(load(out))
    assert res["calibration"]["timebase"] == "clock"
    assert legacy_blocks((out / "summary.txt").read_text())[0]["tb"] == 2


def test_null_outliers_logged_with_monotonic_time(tmp_path, validate):
    out = tmp_path / "o"
    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    # a threshold just above the typical sample logs plenty of samples
    run_jtr("null", "-n", "50K", "--runs", "1", "--threshold", "1ns", "--max-outliers", "1000",
            "-o", out, check=True)
    t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    r = validate(load(out))["runs"][0]
    o = r["outliers"]
    assert o["threshold_ns"] == 1
    assert o["logged"] == 1000 and o["dropped"] == o["count"] - 1000 > 0
    rows = list(csv.DictReader(open(out / "outliers.csv")))
    assert len(rows) == 1000
    starts = [int(x["start_ns"]) for x in rows]
    assert starts == sorted(starts)
    assert t0 <= starts[0] and starts[-1] <= t1
    assert r["start_mono_ns"] <= starts[0] <= starts[-1] <= r["end_mono_ns"]
    assert all(int(x["length_ns"]) > 1 for x in rows)


def test_gap_two_cpus(tmp_path, validate):
    out = tmp_path / "gap"
    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    p = run_jtr("gap", "-c", "0-1", "-d", "500ms", "-o", out, check=True)
    t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    res = validate(load(out))
    assert [r["cpu"] for r in res["runs"]] == [0, 1]
    assert res["params"]["duration_ns"] == 5 * 10**8
    rows = list(csv.DictReader(open(out / "outliers.csv")))
    for r in res["runs"]:
        check_run_stats(r)
        o = r["outliers"]
        # the loop ends at its first read at or after the deadline: the run is late
        # by at most its longest gap
        assert 0.475e9 <= r["duration_ns"] <= 5e8 + r["max_ns"] + 10**6
        assert t0 <= r["start_mono_ns"] < r["end_mono_ns"] <= t1
        assert o["threshold_ns"] == max(1000, 8 * r["pre_min_ns"])
        assert abs(o["per_s"] - o["count"] * 1e9 / r["duration_ns"]) < 0.01
        assert abs(r["loop_period_ns"] - r["duration_ns"] / r["samples"]) < 0.01
        mine = [x for x in rows if int(x["cpu"]) == r["cpu"]]
        assert len(mine) == o["logged"] == o["count"] - o["dropped"]
        lengths = [int(x["length_ns"]) for x in mine]
        assert all(n > o["threshold_ns"] for n in lengths)
        assert sum(lengths) == o["total_ns"] or o["dropped"]
        assert all(r["start_mono_ns"] <= int(x["start_ns"]) <= r["end_mono_ns"] for x in mine)
        # time lost: each interruption less one undisturbed loop, over the run
        lost = o["total_ns"] - o["count"] * r["min_ns"]
        assert o["lost_ns"] == lost
        assert abs(r["lost_time_pct"] - 100.0 * lost / r["duration_ns"]) < 1e-4
        # the interruption view agrees with the per-loop view
        above = sum(n for lo, hi, n in r["histogram"]["buckets"] if lo > o["threshold_ns"])
        assert above <= o["count"]
        if o["count"]:
            assert o["max_ns"] == r["max_ns"]
    assert "CPU 0" in p.stdout and "CPU 1" in p.stdout and "lost %" in p.stdout


def test_gap_loop_count_mode(tmp_path, validate):
    out = tmp_path / "j"
    p = run_jtr("gap", "-n", "2M", "-t", "clock", "-o", out, check=True)
    res = validate(load(out))
    r = res["runs"][0]
    assert r["samples"] == 2000000 and res["params"]["loops"] == 2000000
    assert res["calibration"]["timebase"] == "clock"
    assert "cpu=%d, ts_min_ns=%d, ts_max_ns=%d," % (r["cpu"], r["min_ns"], r["max_ns"]) in p.stdout


def test_clock_sources(tmp_path, validate):
    out = tmp_path / "clk"
    p = run_jtr("clock", "-n", "200K", "-o", out, check=True)
    res = validate(load(out))
    runs = {r["name"]: r for r in res["runs"]}
    assert set(runs) == {"rdtsc", "lfence_rdtsc", "rdtscp", "monotonic_vdso",
                         "monotonic_raw_vdso", "monotonic_syscall", "monotonic_coarse"}
    for name, r in runs.items():
        check_run_stats(r)
        assert r["samples"] >= 200000 and r["cost_ns"] > 0
        assert r["samples"] == 200000 or name == "monotonic_coarse"
        assert name in p.stdout
    # a system call costs more than the vDSO read of the same clock, where the
    # clocksource can be read from user space at all (hpet and acpi_pm cannot:
    # there the vDSO itself falls back to the system call)
    if res["host"]["clocksource"] in ("tsc", "kvm-clock", "hyperv_clocksource_tsc_page",
                                      "arch_sys_counter"):
        # medians of the back-to-back read gaps: cost_ns averages the loop's wall
        # time, where one stolen stretch of the vCPU can swap the two
        assert runs["monotonic_syscall"]["percentiles_ns"]["50"] > \
            runs["monotonic_vdso"]["percentiles_ns"]["50"]
    # the coarse clock is read until it has stepped 10 times; it steps by its
    # resolution, and most reads see no change
    c = runs["monotonic_coarse"]
    assert c["step_ns"] >= 0.5 * c["resolution_ns"] > 0
    assert c["samples"] * c["cost_ns"] >= 9 * c["resolution_ns"]
    assert c["zero_deltas"] > 0.9 * c["samples"]
    # TSC steps are at least one tick
    assert runs["rdtsc"]["step_ns"] >= 1e9 / res["calibration"]["tsc_hz"] - 1


def test_calibration_repeats_agree(tmp_path):
    hz = []
    for i in range(2):
        out = tmp_path / ("cal%d" % i)
        run_jtr("clock", "-n", "1K", "-o", out, check=True)
        hz.append(load(out)["calibration"]["tsc_hz"])
    ppm = abs(hz[0] - hz[1]) / hz[0] * 1e6
    assert ppm < 20, hz
    # written as a number with decimals (a kernel on the TSC clocksource can make
    # the ratio a whole number of Hz, so the value itself may have no fraction)
    assert all(isinstance(h, float) for h in hz), hz


def test_no_tsc_falls_back_to_clock_gettime(tmp_path, validate):
    out = tmp_path / "notsc"
    p = run_jtr("gap", "-d", "100ms", "-o", out, env={"JTR_NO_TSC": "1"}, check=True)
    res = validate(load(out))
    assert res["calibration"]["timebase"] == "clock"
    assert "JTR_NO_TSC" in res["calibration"]["timebase_fallback"]
    assert "the TSC cannot be used" in p.stderr
    assert any("clock_gettime" in w for w in res["warnings"])
    assert res["runs"][0]["samples"] > 1000


def test_default_results_folder_and_latest_link(tmp_path):
    run_jtr("gap", "-d", "100ms", "-q", cwd=tmp_path, check=True)
    run_jtr("gap", "-d", "100ms", "-q", cwd=tmp_path, check=True)
    names = sorted(n for n in os.listdir(tmp_path / "results") if n != "latest")
    assert len(names) == 2
    host = re.sub(r"[^A-Za-z0-9_-]", "_", os.uname().nodename)
    for n in names:
        # DATE-TIME-HOST-TOOL, and -2, -3 ... for runs started in the same second
        assert re.fullmatch(r"\d{8}-\d{6}-%s-gap(-\d+)?" % re.escape(host), n), n
        assert (tmp_path / "results" / n / "result.json").is_file()
    assert os.readlink(tmp_path / "results" / "latest") == names[-1]


def test_quiet_prints_nothing(tmp_path):
    p = run_jtr("gap", "-d", "100ms", "-q", "-o", tmp_path / "q", check=True)
    assert p.stdout == ""


def test_progress_on_a_terminal_only(tmp_path):
    """Progress goes to stderr when it is a terminal, and never to a pipe."""
    from conftest import JTR, on_a_terminal
    # progress comes once a second: the first half a second before the run ends
    rc, seen = on_a_terminal([JTR, "gap", "-d", "1500ms", "-o", str(tmp_path / "tty")],
                             timeout=30)
    assert rc == 0
    assert re.search(rb"\r\x1b\[Kgap: 1 of 1.5 s, \d+ interruptions, max [\d.]+ [nmu]?s",
                     seen), seen
    # 1.2 s: a progress line on a pipe would come at 1 s
    piped = run_jtr("gap", "-d", "1200ms", "-o", tmp_path / "pipe", check=True)
    assert "interruptions, max" not in piped.stderr


def test_unpinned_run_warns(tmp_path, validate):
    out = tmp_path / "free"
    p = run_jtr("null", "-c", "-1", "-n", "5K", "--runs", "1", "-o", out, check=True)
    res = validate(load(out))
    assert res["params"]["cpu"] is None and res["runs"][0]["cpu"] is None
    assert "cpu_num=-1" in (out / "summary.txt").read_text()
    assert "not pinned" in p.stderr and any("not pinned" in w for w in res["warnings"])


def test_active_tuning_profile_in_host_facts(tmp_path, validate):
    state = tmp_path / "state"
    state.mkdir()
    run_jtr("gap", "-d", "100ms", "-q", "-o", tmp_path / "a", env={"JTR_STATE_DIR": str(state)},
            check=True)
    assert load(tmp_path / "a")["host"]["tuning_profile"] is None
    (state / "active-profile").write_text("jtr-latency\n")
    run_jtr("gap", "-d", "100ms", "-q", "-o", tmp_path / "b", env={"JTR_STATE_DIR": str(state)},
            check=True)
    res = validate(load(tmp_path / "b"))
    assert res["host"]["tuning_profile"] == "jtr-latency"


def test_gap_hardware_counters(tmp_path, validate):
    """Where the PMU exists: cycles, instructions and IPC per run. Where it does not
    (virtual machines such as this project's CI), one line says so, the runs carry
    "pmu": null, and the counting itself is skipped with that line as the reason."""
    out = tmp_path / "pmu"
    p = run_jtr("gap", "-c", max(os.sched_getaffinity(0)), "-d", "100ms", "-q", "-o", out,
                check=True)
    res = validate(load(out))
    pmu = res["runs"][0]["pmu"]
    if pmu is None:
        lines = [line for line in p.stderr.splitlines() if "no hardware counters" in line]
        assert len(lines) == 1 and "perf_event_open cycles" in lines[0]
        assert any(w.startswith("no hardware counters here") for w in res["warnings"])
        pytest.skip("no PMU on this machine, as the probe said: %s" % lines[0])
    assert pmu["cycles"] > 0 and pmu["instructions"] > 0 and pmu["ipc"] > 0
    loops = res["runs"][0]["samples"]
    assert abs(pmu["per_million_loops"]["cycles"] - pmu["cycles"] * 1e6 / loops) < 1
