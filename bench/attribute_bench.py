#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""attribute_bench.py - how fast attribution is: read an event log and attribute outliers.

Synthesises a results folder with BENCH_EVENTS kernel events (default 1,000,000)
and BENCH_OUTLIERS outliers (default 100,000) on CPU 1, 100 us apart: ticks with
an hrtimer and softirq TIMER, virtio irqs with NET_RX, kworker and FIFO
preemptions, IPIs, silent outliers, plus filler events between the windows and
on a second traced CPU, written slightly out of order as the tracer does. Then
it times, in a fresh process, read_events(), the outlier log and attribute()
(the best and the median of BENCH_ATTRIBUTE_ROUNDS rounds, default 5) and
reports seconds and the peak resident memory of that process next to a bare
interpreter that only imported jtrpy; then the same with JTR_NUMPY=0 (the
plain-Python walker alone, the reference of the numpy path), whose table must
be the same. Goal: attribute <= 0.3 s. Only prints; the exit status says
nothing about speed.
Environment: BENCH_EVENTS, BENCH_OUTLIERS, BENCH_DIR (keep the folder there),
BENCH_ATTRIBUTE_ROUNDS.
"""
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "analysis"))

from jtrpy.trace import events as E  # noqa: E402

T0 = 5_000_000_000_000
ROUNDS = int(os.environ.get("BENCH_ATTRIBUTE_ROUNDS", 5))
GOAL_S = 0.3
PROBE, KWORKER, FIFO = 812, 123, 4242
SYM = {"tick_sched_timer": 0xffffffff81000010, "hrtimer_wakeup": 0xffffffff81000020,
       "vmstat_update": 0xffffffff81000030, "process_timeout": 0xffffffff81000040}


def outlier_events(s, kind, rnd):
    """The events of one outlier starting at s, and its length."""
    def ev(dt, typ, a=0, b=0, raw=None, pid=PROBE, flags=0):
        """One record dt ns after s."""
        return (s + dt, pid, 1, typ, flags, a, b, raw)

    def sw(dt, prev, nxt, preempted):
        """A sched_switch dt ns after s."""
        return ev(dt, E.SWITCH, prev[1] | nxt[1] << 32, prev[2] | nxt[2] << 16,
                  (prev[0], nxt[0]), pid=prev[1], flags=1 if preempted else 0)

    gap = ("gap/1", PROBE, 120)
    if kind < 60:
        soft = rnd.randint(1000, 6000)
        return [ev(300, E.VEC_ENTRY, 236, 0), ev(600, E.HRTIMER_ENTRY, 1, SYM["tick_sched_timer"]),
                ev(2000, E.HRTIMER_EXIT, 1), ev(2500, E.VEC_EXIT, 236, 0),
                ev(2700, E.SOFTIRQ_ENTRY, 1), ev(2900, E.TIMER_ENTRY, 2, SYM["process_timeout"]),
                ev(3000 + soft // 2, E.TIMER_EXIT, 2), ev(3000 + soft, E.SOFTIRQ_EXIT, 1)], \
            3500 + soft
    if kind < 75:
        return [ev(200, E.IRQ_ENTRY, 36, 0, "virtio1-req"), ev(900, E.SOFTIRQ_RAISE, 3),
                ev(1800, E.IRQ_EXIT, 36, 1), ev(1900, E.SOFTIRQ_ENTRY, 3),
                ev(9000, E.SOFTIRQ_EXIT, 3)], 9500
    if kind < 85:
        kw = ("kworker/1:2", KWORKER, 120)
        n = rnd.randint(20_000, 60_000)
        return [sw(500, gap, kw, True),
                ev(800, E.WQ_START, 3, SYM["vmstat_update"], pid=KWORKER),
                ev(n - 1000, E.WQ_END, 3, SYM["vmstat_update"], pid=KWORKER),
                sw(n, kw, gap, False)], n + 500
    if kind < 90:
        return [ev(400, E.VEC_ENTRY, 251, 2), ev(2400, E.VEC_EXIT, 251, 2)], 3000
    if kind < 95:
        return [], rnd.randint(1500, 4000)
    fifo = ("fifo-spin", FIFO, 9)
    return [ev(300, E.VEC_ENTRY, 236, 0), ev(600, E.HRTIMER_ENTRY, 4, SYM["hrtimer_wakeup"]),
            ev(700, E.WAKING, FIFO, 1 | 9 << 32, "fifo-spin"), ev(1200, E.HRTIMER_EXIT, 4),
            ev(1500, E.VEC_EXIT, 236, 0), sw(1800, gap, fifo, True),
            sw(61_800, fifo, gap, False)], 62_000


def synthesise(folder, n_events, n_outliers):
    """Write result.json, outliers.csv, events.bin and trace.json into folder."""
    rnd = random.Random(1)
    events, outliers = [], []
    spacing = 100_000
    for k in range(n_outliers):
        s = T0 + 1_000_000 + k * spacing
        evs, length = outlier_events(s, rnd.randrange(100), rnd)
        events += evs
        outliers.append((1, s, length))
    filler = n_events - len(events)
    for i in range(max(0, filler)):
        k = i % n_outliers
        s = T0 + 1_000_000 + k * spacing + 75_000 + (i // n_outliers) * 100
        cpu = 1 + (i % 2)
        events.append((s, 99, cpu, E.WAKING, 0, 77, cpu, 0, "bash"))
    events = [e if len(e) == 8 else e[:4] + e[5:] for e in events]
    events.sort()
    for i in range(1, len(events) - 1, 97):   # the tracer's order is nearly sorted
        events[i], events[i + 1] = events[i + 1], events[i]
    end = T0 + 2_000_000 + n_outliers * spacing
    E.write_events(folder, events, T0, end, meta={
        "symbols": {"0x%x" % a: n for n, a in SYM.items()}, "cpus": [1, 2], "backend": "ebpf"})
    with open(os.path.join(folder, "outliers.csv"), "w") as f:
        f.write("cpu,start_ns,length_ns\n")
        f.writelines("%d,%d,%d\n" % o for o in outliers)
    duration = end - T0
    result = {"format": "jtr-result/1", "tool": "gap", "runs": [{
        "cpu": 1, "duration_ns": duration, "start_mono_ns": T0, "end_mono_ns": end,
        "outliers": {"threshold_ns": 1000, "count": n_outliers, "logged": n_outliers,
                     "dropped": 0, "log": "outliers.csv",
                     "total_ns": sum(o[2] for o in outliers)}}]}
    with open(os.path.join(folder, "result.json"), "w") as f:
        json.dump(result, f)
    return len(events)


def peak_kb():
    """This process's peak resident memory: VmHWM (ru_maxrss survives exec on Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def reference_s():
    """Seconds for a 3-million-step Python loop: how fast this machine is right now."""
    t = time.perf_counter()
    x = 0
    for i in range(3_000_000):
        x += i
    return time.perf_counter() - t


def measure(folder):
    """In this (fresh) process: time read_events, the outlier log and attribute
    ROUNDS times (the best and the median of each; the work is the same every
    round), print one JSON line."""
    from jtrpy.attribution import attribute as A
    from jtrpy.render.attribution import format_table
    from jtrpy.results.outliers import read_outlier_log
    from jtrpy.results.result import load_result
    from jtrpy.system.numeric import numpy_or_none
    numpy_or_none()     # imported before the clock starts, as in a jtr that has run
    ref = reference_s()
    base_kb = peak_kb()
    result = load_result(folder)
    times = {"read_s": [], "load_outliers_s": [], "attribute_s": []}
    c0 = time.process_time()
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        log = E.read_events(folder)
        t1 = time.perf_counter()
        table = read_outlier_log(result)
        outliers = table.outliers()
        t2 = time.perf_counter()
        att = A.attribute(result, outliers, log)
        t3 = time.perf_counter()
        for k, v in zip(times, (t1 - t0, t2 - t1, t3 - t2)):
            times[k].append(v)
    out = {k: min(v) for k, v in times.items()}
    out.update({k.replace("_s", "_median_s"): sorted(v)[len(v) // 2] for k, v in times.items()})
    out.update({"cpu_s": (time.process_time() - c0) / ROUNDS, "rounds": ROUNDS,
                "events": len(log), "outliers": len(outliers), "base_kb": base_kb,
                "peak_kb": peak_kb(), "reference_s": ref, "table": format_table(att),
                "numpy": numpy_or_none() is not None})
    print(json.dumps(out))


def run_measure(folder, plain=False):
    """measure() in a fresh process (plain: with JTR_NUMPY=0, the walker alone)."""
    env = dict(os.environ, **({"JTR_NUMPY": "0"} if plain else {}))
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure", folder],
                         check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def main():
    """Synthesise, measure in a fresh process, print."""
    if len(sys.argv) == 3 and sys.argv[1] == "--measure":
        measure(sys.argv[2])
        return 0
    n_events = int(os.environ.get("BENCH_EVENTS", 1_000_000))
    n_outliers = int(os.environ.get("BENCH_OUTLIERS", 100_000))
    keep = os.environ.get("BENCH_DIR")
    folder = keep or tempfile.mkdtemp(prefix="jtr-attribute-bench-")
    os.makedirs(folder, exist_ok=True)
    try:
        t = time.perf_counter()
        n = synthesise(folder, n_events, n_outliers)
        print("synthesised %d events, %d outliers in %.1f s (%s)" % (
            n, n_outliers, time.perf_counter() - t, folder))
        r = run_measure(folder)
        plain = run_measure(folder, plain=True) if r["numpy"] else None
        size_mb = os.path.getsize(os.path.join(folder, "events.bin")) / 1e6
        print("best of %d rounds (median in brackets)%s" % (
            r["rounds"], "" if r["numpy"] else "; numpy missing: the plain path"))
        print("read_events     %6.3f s  (%.3f)  %d events, %.0f MB" % (
            r["read_s"], r["read_median_s"], r["events"], size_mb))
        print("load_outliers   %6.3f s  (%.3f)  %d outliers" % (
            r["load_outliers_s"], r["load_outliers_median_s"], r["outliers"]))
        print("attribute       %6.3f s  (%.3f)  goal <= 0.3 s: %s" % (
            r["attribute_s"], r["attribute_median_s"],
            "met" if r["attribute_s"] <= GOAL_S else "MISSED"))
        if plain:
            print("  plain Python  %6.3f s  (%.3f)  the walker alone (JTR_NUMPY=0): "
                  "numpy path %.1fx faster, same result: %s" % (
                      plain["attribute_s"], plain["attribute_median_s"],
                      plain["attribute_s"] / r["attribute_s"], plain["table"] == r["table"]))
        total = r["read_s"] + r["load_outliers_s"] + r["attribute_s"]
        print("total           %6.3f s  (CPU time a round %.3f s)" % (total, r["cpu_s"]))
        print("peak memory     %6.0f MB  (interpreter with jtrpy imported: %.0f MB)" % (
            r["peak_kb"] / 1024, r["base_kb"] / 1024))
        print("machine speed   %6.3f s  for a 3M-step Python loop (same process, just before);"
              " load average %.2f" % (r["reference_s"], os.getloadavg()[0]))
        print()
        for line in r["table"]:
            print(line)
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
