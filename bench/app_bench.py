#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""app_bench.py - the `app` part of `make bench` (docs/bench.md): what timing
every call of a function costs the program (`jtr run app`'s uprobe and
uretprobe), against the same program untraced and against the kernel's own
floor, an empty uprobe and uretprobe on the same function (bpftrace's), in the
same run.

1. Per call: build/tests/jtr-app-target calls on_tick() (about 0.2 us of loop)
   back to back on BENCH_CPU for BENCH_APP_SECONDS (default 5); the calls it
   made, untraced, under jtr-trace --func (every call timed and written to the
   ring, the kernel's events of the CPU traced as jtr run app traces them) and
   under the empty pair, rounds alternating. The added time per call is the
   wall time per call less the untraced one; goal <= 1.5 us for jtr, reported
   beside the floor's and as a ratio to it.
2. At 100,000 calls a second (-i 10us, the schedule waited for in a loop):
   the calls a second made and the calls the tracer lost (its ring full):
   goal 0 lost, and the calls made against the untraced program's (the
   throughput loss: the calls the program could not make on time).

Needs root (BPF). Run alone: `.venv/bin/python bench/app_bench.py`.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACE = os.path.join(ROOT, "build", "bin", "jtr-trace")
TARGET = os.path.join(ROOT, "build", "tests", "jtr-app-target")
GOAL_NS = 1500          # added time per call
RATE_INTERVAL_US = 10   # 100,000 calls a second


def wait_line(proc, word, timeout=30):
    """Until @proc's stdout has a line with @word; False if it ended first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            return False
        if word in line:
            return True
    return False


def target(cpu, seconds, interval_us, work_us):
    """The target's calls a second: on a schedule (@interval_us) its calls are
    as many however late they come, so over the wall time it took (its
    start, 0.1 s of calibration, is in it, the same each time)."""
    t0 = time.monotonic()
    # a schedule waited for in a loop: 100,000 wake-ups a second are more than this
    # kind of machine's timers give (43,000 here)
    out = subprocess.run([TARGET, "-c", str(cpu), "-d", str(seconds), "-i", str(interval_us),
                          "-w", str(work_us), "--busy-wait"], capture_output=True, text=True,
                         check=True).stdout
    return int(out.split("calls ")[1].split()[0]) / (time.monotonic() - t0)


def traced(kind, cpu, seconds, interval_us, work_us, tmp):
    """(calls a second, calls lost or None) of the target beside @kind: None (untraced),
    "jtr" (jtr-trace --func) or "floor" (bpftrace's empty pair)."""
    if kind is None:
        return target(cpu, seconds, interval_us, work_us), None
    func = "%s:on_tick" % TARGET
    out = os.path.join(tmp, "app-%d" % time.monotonic_ns())
    if kind == "jtr":
        cmd = [TRACE, "--func", func, "-c", str(cpu), "-o", out, "--threshold", "1ms"]
        word = "tracing CPU"
    else:
        cmd = ["bpftrace", "-e", "uprobe:%s {} uretprobe:%s {}" % (func, func)]
        word = "Attaching"
    tr = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if not wait_line(tr, word):
            raise SystemExit("bench: %s did not start: %s" % (cmd[0], tr.stderr.read()))
        if kind == "floor":
            time.sleep(0.5)         # bpftrace says it attaches before it has
        rate = target(cpu, seconds, interval_us, work_us)
    finally:
        tr.terminate()
        tr.communicate(timeout=60)
    if kind == "floor":
        return rate, None
    with open(os.path.join(out, "result.json")) as f:
        res = json.load(f)
    return rate, res["params"]["calls_lost"]


def measure(cpu, rounds, tmp):
    seconds = float(os.environ.get("BENCH_APP_SECONDS", "5"))
    kinds = [None, "jtr"] + (["floor"] if shutil.which("bpftrace") else [])
    per = {k: [] for k in kinds}
    for i in range(rounds):
        order = kinds if i % 2 == 0 else kinds[::-1]
        print("bench: round %d/%d: jtr-app-target back to back, %g s untraced, under jtr "
              "run app's probes%s" % (i + 1, rounds, seconds,
                                     " and under an empty pair" if "floor" in kinds else ""),
              file=sys.stderr)
        for k in order:
            per[k].append(traced(k, cpu, seconds, 0, 0.2, tmp)[0])
    ns = {k: [1e9 / c for c in v] for k, v in per.items()}
    base = statistics.median(ns[None])
    res = {"cpu": cpu, "seconds": seconds, "rounds": rounds,
           "untraced_ns_per_call": base,
           "jtr_added_ns": statistics.median(n - b for n, b in zip(ns["jtr"], ns[None])),
           "goal_ns": GOAL_NS}
    if "floor" in ns:
        res["floor_added_ns"] = statistics.median(n - b for n, b in zip(ns["floor"], ns[None]))
        res["ratio_to_floor"] = res["jtr_added_ns"] / res["floor_added_ns"] \
            if res["floor_added_ns"] > 0 else None
    print("bench: jtr-app-target at 100,000 calls a second, untraced and under jtr run app's "
          "probes", file=sys.stderr)
    plain = traced(None, cpu, seconds, RATE_INTERVAL_US, 1, tmp)[0]
    rate, lost = traced("jtr", cpu, seconds, RATE_INTERVAL_US, 1, tmp)
    res["rate"] = {"calls_per_s_asked": 1e6 / RATE_INTERVAL_US,
                   "untraced_calls_per_s": plain, "traced_calls_per_s": rate,
                   "throughput_loss": 1 - rate / plain if plain else None, "lost": lost}
    return res


def show(res):
    print("jtr run app, CPU %d, %d x %g s (medians)" % (res["cpu"], res["rounds"],
                                                        res["seconds"]))
    print("  untraced: %.0f ns a call (on_tick back to back)" % res["untraced_ns_per_call"])
    floor = ""
    if res.get("floor_added_ns") is not None:
        floor = "; the kernel's empty uprobe + uretprobe add %.0f ns (jtr / floor %.2f)" % (
            res["floor_added_ns"], res["ratio_to_floor"] or float("nan"))
    print("  added per call by jtr run app's probes: %.0f ns (goal <= %d)%s"
          % (res["jtr_added_ns"], res["goal_ns"], floor))
    r = res["rate"]
    print("  at %.0f calls/s asked: %.0f untraced, %.0f traced (throughput loss %.2f %%), "
          "%d calls lost (goal 0)" % (r["calls_per_s_asked"], r["untraced_calls_per_s"],
                                      r["traced_calls_per_s"], 100 * (r["throughput_loss"] or 0),
                                      r["lost"]))
    return res["jtr_added_ns"] <= res["goal_ns"] and r["lost"] == 0


def main():
    if os.geteuid() != 0:
        print("app_bench: needs root (BPF)", file=sys.stderr)
        return 2
    cpu = int(os.environ.get("BENCH_CPU", max(os.sched_getaffinity(0))))
    tmp = tempfile.mkdtemp(prefix="jtr-bench-")
    try:
        res = measure(cpu, int(os.environ.get("BENCH_ROUNDS", "3")), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(res, indent=1), file=sys.stderr)
    return 0 if show(res) else 1


if __name__ == "__main__":
    sys.exit(main())
