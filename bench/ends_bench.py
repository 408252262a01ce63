#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""ends_bench.py - how fast a whole overloaded two-sided run is attributed.

Records a real one: busy loops on both CPUs (in a pid namespace of their own),
and `jtr run ping -T udp -1 -r 20K -d 10` with jtr pong on the other CPU: the
client falls behind its schedule, round trips overlap by the thousand, and the
tracer records millions of events. Then it times, in a fresh process, reading
the event log and the outlier log and attribution/ends.py's attribution of the
round trips on both ends (the best and the median of BENCH_ENDS_ROUNDS rounds,
default 3), once with numpy and once on the plain path (JTR_NUMPY=0, one round:
the reference of the numpy path; its table must be the same). Goal: the
attribution of a 10 s run with at least 50,000 overlapping outliers and
2,000,000 events in <= 10 s. Needs root (the tracer). Only prints; the exit
status says nothing about speed.
Environment: BENCH_ENDS_SECONDS (default 10), BENCH_ENDS_RATE (default 20K),
BENCH_CPU (ping's CPU; pong on another), BENCH_DIR (keep the run there).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JTR = os.path.join(ROOT, "jtr")
sys.path.insert(0, os.path.join(ROOT, "analysis"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from attribute_bench import reference_s  # noqa: E402  (how fast the machine is now)

GOAL_S = 10.0
MIN_EVENTS, MIN_OUTLIERS = 2_000_000, 50_000
ROUNDS = int(os.environ.get("BENCH_ENDS_ROUNDS", 3))


def cpus():
    allowed = sorted(os.sched_getaffinity(0))
    cpu = int(os.environ.get("BENCH_CPU", allowed[-1]))
    other = next((c for c in allowed if c != cpu), cpu)
    return cpu, other


def record(folder):
    """The overloaded run, into @folder; (its stdout's tail, wall seconds)."""
    cpu, other = cpus()
    loops = " ".join("taskset -c %d sh -c 'while :; do :; done' &" % c
                     for c in (cpu, other, cpu))
    busy = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", "--kill-child",
                             "sh", "-c", loops + " wait"])
    try:
        time.sleep(0.5)
        t = time.monotonic()
        p = subprocess.run([JTR, "run", "ping", "-T", "udp", "-P", "127.0.0.1:17457", "-1",
                            "-c", str(cpu), "-r", os.environ.get("BENCH_ENDS_RATE", "20K"),
                            "-d", os.environ.get("BENCH_ENDS_SECONDS", "10"), "--pong-cpu",
                            str(other), "-o", folder], capture_output=True, text=True)
        wall = time.monotonic() - t
    finally:
        busy.kill()
        busy.wait()
    if p.returncode != 0:
        raise SystemExit("ends_bench: jtr run ping failed (exit %d): %s"
                         % (p.returncode, p.stderr.strip().splitlines()[-1:]))
    return wall


def measure(folder, rounds):
    """In this (fresh) process: read both logs and attribute, @rounds times; one
    JSON line."""
    from jtrpy.attribution import ends
    from jtrpy.drivers.attribute import STAMPS, ends_of
    from jtrpy.render.attribution import format_table
    from jtrpy.results.outliers import read_outlier_log
    from jtrpy.results.result import load_result
    from jtrpy.system.numeric import numpy_or_none
    from jtrpy.trace import events as E
    numpy_or_none()
    ref = reference_s()
    result = load_result(folder)
    kw = ends_of(result)
    times = {"read_s": [], "attribute_s": []}
    for _ in range(rounds):
        t0 = time.perf_counter()
        log = E.read_events(result.file("events"), within=result.folder)
        table = read_outlier_log(result)
        stamps = {k: table.column(k) for k in STAMPS if table.column(k)}
        outliers = table.outliers()
        t1 = time.perf_counter()
        att = ends.attribute_ends(result, outliers, log, kw["sides"], stamps, kw["programs"])
        t2 = time.perf_counter()
        times["read_s"].append(t1 - t0)
        times["attribute_s"].append(t2 - t1)
    o = att["outliers"]
    print(json.dumps({
        "read_s": min(times["read_s"]), "attribute_s": min(times["attribute_s"]),
        "attribute_median_s": sorted(times["attribute_s"])[len(times["attribute_s"]) // 2],
        "events": len(log), "outliers": o["count"], "summed_ns": o.get("summed_ns"),
        "total_ns": o["total_ns"], "duration_ns": o["duration_ns"],
        "numpy": numpy_or_none() is not None, "reference_s": ref,
        "table": format_table(att)}))


def run_measure(folder, plain=False, rounds=ROUNDS):
    env = dict(os.environ, **({"JTR_NUMPY": "0"} if plain else {}))
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure", folder,
                          str(rounds)], check=True, capture_output=True, text=True,
                         env=env).stdout
    return json.loads(out)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--measure":
        measure(sys.argv[2], int(sys.argv[3]))
        return 0
    if os.geteuid() != 0:
        print("ends_bench: not root: the tracer cannot run; skipped")
        return 0
    keep = os.environ.get("BENCH_DIR")
    parent = keep or tempfile.mkdtemp(prefix="jtr-ends-bench-")
    folder = os.path.join(parent, "ping")
    try:
        wall = record(folder)
        r = run_measure(folder)
        plain = run_measure(folder, plain=True, rounds=1) if r["numpy"] else None
        n_ok = r["events"] >= MIN_EVENTS and r["outliers"] >= MIN_OUTLIERS
        over = (r["summed_ns"] or r["total_ns"]) / max(1, r["total_ns"])
        print("recorded an overloaded ping in %.1f s: %d events, %d outliers (their lengths "
              "add up to %.1f times the time one was in flight)%s" % (
                  wall, r["events"], r["outliers"], over,
                  "" if n_ok else "; smaller than the goal's run (%d events, %d outliers): "
                  "raise BENCH_ENDS_RATE" % (MIN_EVENTS, MIN_OUTLIERS)))
        print("read logs       %6.3f s" % r["read_s"])
        print("attribute ends  %6.3f s  (median %.3f, best of %d)  goal <= %.0f s: %s" % (
            r["attribute_s"], r["attribute_median_s"], ROUNDS, GOAL_S,
            "met" if r["attribute_s"] <= GOAL_S else "MISSED"))
        if plain:
            print("  plain Python  %6.3f s  (JTR_NUMPY=0, one round): numpy path %.1fx "
                  "faster, same result: %s" % (plain["attribute_s"], plain["attribute_s"] /
                                               r["attribute_s"], plain["table"] == r["table"]))
        print("machine speed   %6.3f s  for a 3M-step Python loop (same process, just "
              "before); load average %.2f" % (r["reference_s"], os.getloadavg()[0]))
        print()
        for line in r["table"][:14]:
            print(line)
    finally:
        if not keep:
            shutil.rmtree(parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
