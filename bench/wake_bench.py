#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""wake_bench.py - the `wake` part of `make bench` (docs/bench.md).

Three comparisons on one CPU, rounds alternating, medians reported:

1. jtr wake vs cyclictest (rt-tests), the same schedule: 1 ms period,
   SCHED_FIFO 80, /dev/cpu_dma_latency held at 0 by both
   (`jtr wake -c CPU -f 80 -i 1ms -d S --cpu-dma-latency 0` against
   `cyclictest -m -q -t 1 -a CPU -p 80 -i 1000 -D S -h 20000`). p50, p99 and
   max of each. Goal: jtr's p50 and p99 within +-10 % of cyclictest's.
   cyclictest truncates to whole us: its percentiles are its histogram's
   bucket (us) x 1000, resolution 1 us; latencies of 20 ms or more are its
   histogram's overflows, counted as above that limit.
2. Own cost per wake-up, in the same rounds: CPU time of the measuring thread
   (the one running SCHED_FIFO on CPU; first field of its
   /proc/PID/task/TID/schedstat) read twice in the steady state, divided by
   the wake-ups between the two reads (their distance / the period).
   Goal: jtr's <= cyclictest's.
3. The tracer's overhead on the wake latency (root only): the same jtr wake
   alone and with `jtr trace -c CPU` recording beside it, in cycles of short
   rounds, each cycle's order rotated from the one before. p50 and p99 of
   both, the median and quartiles of the cycles' ratios, and the events
   recorded. Goal: traced / untraced <= 1.05 (the median). In the same cycles,
   the floors of that figure: jtr wake beside `jtr trace --floor-only empty`
   (an empty program on each of the tracer's tracepoints: what attaching any
   program there costs the wake-up) and `--floor-only clock` (each of those
   programs reads the clock once, nothing else: the least a tracer whose
   records carry a time costs it here).

The whole item needs root (SCHED_FIFO, /dev/cpu_dma_latency, BPF).
Environment: BENCH_WAKE_SECONDS (default 10), BENCH_ROUNDS (default 3),
BENCH_WAKE_TRACE_ROUNDS (part 3's cycles, default 10), BENCH_WAKE_TRACE_SECONDS
(default 4), BENCH_CPU (default: the last online CPU). Run alone:
`.venv/bin/python bench/wake_bench.py`.
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JTR = os.path.join(ROOT, "jtr")
INTERVAL_US = 1000      # the period, both tools
PRIO = 80               # SCHED_FIFO priority, both tools
HIST_US = 20000         # cyclictest -h: buckets up to 20 ms, the rest overflows
SCHED_FIFO = 1          # policy in /proc/PID/task/TID/stat
GOAL_BAND = 0.10        # p50 and p99 within +-10 % of cyclictest's
GOAL_TRACED = 1.05      # traced / untraced p50 and p99


def wake_seconds():
    """BENCH_WAKE_SECONDS (default 10, at least 4: the cost needs a steady span)."""
    return max(4, int(os.environ.get("BENCH_WAKE_SECONDS", "10")))


def jtr_wake_cmd(cpu, seconds, out):
    """The jtr wake command of every round."""
    period = "%dms" % (INTERVAL_US // 1000) if INTERVAL_US % 1000 == 0 else "%dus" % INTERVAL_US
    return [JTR, "wake", "-c", str(cpu), "-f", str(PRIO), "-i", period,
            "-d", str(seconds), "--cpu-dma-latency", "0", "-q", "-o", out]


def cyclictest_cmd(cpu, seconds, js):
    """The cyclictest command of every round."""
    return ["cyclictest", "-m", "-q", "-t", "1", "-a", str(cpu), "-p", str(PRIO),
            "-i", str(INTERVAL_US), "-D", str(seconds), "-h", str(HIST_US), "--json=" + js]


def task_fields(pid, tid):
    """Fields 3... of /proc/PID/task/TID/stat (after the command name), or None."""
    try:
        with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def fifo_task(pid, cpu, wait_s=1.0):
    """The thread of @pid running SCHED_FIFO on @cpu (fields 41 and 39), or None."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            return None
        for tid in tids:
            f = task_fields(pid, tid)
            if f and len(f) > 38 and int(f[38]) == SCHED_FIFO and int(f[36]) == cpu:
                return int(tid)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def on_cpu(pid, tid):
    """(ns the thread has run, times it was switched in, now in ns) from its schedstat."""
    with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as f:
        run_ns, _wait_ns, slices = (int(v) for v in f.read().split()[:3])
    return run_ns, slices, time.monotonic_ns()


def sleep_until(t0, at):
    """Sleep until @at seconds after the monotonic time @t0."""
    left = t0 + at - time.monotonic()
    if left > 0:
        time.sleep(left)


def measuring_cost(proc, cpu, seconds, t0):
    """CPU time per wake-up of @proc's SCHED_FIFO thread on @cpu, between 2 s
    and @seconds - 1 s after @t0: {"ns_per_wakeup", "wakeups", "switch_ins"},
    or None if the thread was not found or ended first."""
    sleep_until(t0, 2.0)
    tid = fifo_task(proc.pid, cpu)
    if tid is None:
        return None
    try:
        a = on_cpu(proc.pid, tid)
        sleep_until(t0, seconds - 1.0)
        b = on_cpu(proc.pid, tid)
    except (OSError, ValueError):
        return None
    wakeups = (b[2] - a[2]) / (INTERVAL_US * 1000.0)
    return {"ns_per_wakeup": (b[0] - a[0]) / wakeups, "wakeups": round(wakeups),
            "switch_ins": b[1] - a[1], "tid": tid}


def run_with_cost(cmd, cpu, seconds, stdout=subprocess.DEVNULL):
    """Run @cmd to its end, reading its measuring thread's cost on the way;
    the cost (or None); RuntimeError with its stderr if it fails."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True)
    try:
        cost = measuring_cost(proc, cpu, seconds, t0)
        _, err = proc.communicate(timeout=seconds + 60)
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    if proc.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd).replace(ROOT + "/", ""),
                                                proc.returncode, err.strip()[-400:]))
    return cost


def jtr_wake_round(cpu, seconds, out):
    """One jtr wake run: p50, p99, max (ns), wake-ups, missed, cost per wake-up."""
    shutil.rmtree(out, ignore_errors=True)
    cost = run_with_cost(jtr_wake_cmd(cpu, seconds, out), cpu, seconds)
    with open(os.path.join(out, "result.json")) as f:
        r = json.load(f)["runs"][0]
    return {"p50_ns": r["percentiles_ns"]["50"], "p99_ns": r["percentiles_ns"]["99"],
            "max_ns": r["max_ns"], "min_ns": r["min_ns"], "wakeups": r["wakeups"],
            "missed": r["missed"], "cost": cost}


def us_hist_percentile(buckets, overflows, pct):
    """The @pct percentile in ns of a histogram of whole us [(us, count)] whose
    @overflows lie above HIST_US: the bucket reached (x 1000), HIST_US x 1000
    when it falls among the overflows."""
    total = sum(n for _, n in buckets) + overflows
    need, cum = pct / 100.0 * total, 0
    for us, n in buckets:
        cum += n
        if cum >= need:
            return us * 1000
    return HIST_US * 1000


def cyclictest_round(cpu, seconds, tmp):
    """One cyclictest run: p50, p99, max (ns, from whole us), cycles, histogram
    overflows, cost per wake-up."""
    js, txt = os.path.join(tmp, "cyclictest.json"), os.path.join(tmp, "cyclictest.txt")
    with open(txt, "w") as out:
        cost = run_with_cost(cyclictest_cmd(cpu, seconds, js), cpu, seconds, stdout=out)
    with open(js) as f:
        t = next(iter(json.load(f)["thread"].values()))
    buckets = sorted((int(k), v) for k, v in t["histogram"].items())
    # values of HIST_US us or more are not in the histogram, only counted
    overflows = t["cycles"] - sum(n for _, n in buckets)
    return {"p50_ns": us_hist_percentile(buckets, overflows, 50),
            "p99_ns": us_hist_percentile(buckets, overflows, 99),
            "max_ns": t["max"] * 1000, "min_ns": t["min"] * 1000, "wakeups": t["cycles"],
            "overflows": overflows, "resolution_ns": 1000, "cost": cost}


def start_tracer(cpu, out, extra=()):
    """`jtr trace -c CPU -o OUT` (and @extra) in the background, once every
    program is attached (its first line, "tracing CPU ..."); RuntimeError if it
    does not start."""
    shutil.rmtree(out, ignore_errors=True)
    tracer = subprocess.Popen([JTR, "trace", "-c", str(cpu), "-o", out] + list(extra),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = tracer.stdout.readline()
    if not first.startswith("tracing CPU"):
        tracer.kill()
        _, err = tracer.communicate()
        raise RuntimeError("jtr trace did not start: %s" % (first + err).strip()[-400:])
    return tracer


def stop_tracer(tracer, out):
    """SIGINT, wait for it to write its files: (events recorded, dropped)."""
    tracer.send_signal(signal.SIGINT)
    try:
        _, err = tracer.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        tracer.kill()
        tracer.communicate()
        raise RuntimeError("jtr trace did not stop within 60 s of SIGINT")
    if tracer.returncode != 0:
        raise RuntimeError("jtr trace: exit %d: %s" % (tracer.returncode, err.strip()[-400:]))
    with open(os.path.join(out, "trace.json")) as f:
        ev = json.load(f)["events"]
    return ev["total"], ev["dropped"]


def traced_round(cpu, seconds, tmp, extra=()):
    """One jtr wake run with jtr trace (and @extra) on the same CPU beside it."""
    out = os.path.join(tmp, "wake-trace")
    tracer = start_tracer(cpu, out, extra)
    try:
        row = jtr_wake_round(cpu, seconds, os.path.join(tmp, "wake-traced"))
    except BaseException:
        tracer.kill()
        tracer.communicate()
        raise
    row["events"], row["dropped"] = stop_tracer(tracer, out)
    row["events_per_s"] = row["events"] / float(seconds)
    return row


def ratios(a_rows, b_rows, key):
    """Per-round a/b of @key."""
    return [a[key] / b[key] if b[key] else float("nan") for a, b in zip(a_rows, b_rows)]


def med(rows, key):
    """Median of @key over the rounds."""
    return statistics.median(r[key] for r in rows)


def cost_rows(rows):
    """The rounds' costs (rounds whose thread was found)."""
    return [r["cost"] for r in rows if r["cost"]]


def vs_cyclictest(cpu, seconds, rounds, tmp):
    """Parts 1 and 2: alternating jtr wake and cyclictest rounds."""
    jr, cr = [], []
    for i in range(rounds):
        print("bench: round %d/%d: jtr wake and cyclictest, %d s each on CPU %d"
              % (i + 1, rounds, seconds, cpu), file=sys.stderr)
        jr.append(jtr_wake_round(cpu, seconds, os.path.join(tmp, "wake")))
        cr.append(cyclictest_round(cpu, seconds, tmp))
    both = [(j["cost"], c["cost"]) for j, c in zip(jr, cr) if j["cost"] and c["cost"]]
    cost_ratios = [j["ns_per_wakeup"] / c["ns_per_wakeup"] for j, c in both]
    p50, p99 = ratios(jr, cr, "p50_ns"), ratios(jr, cr, "p99_ns")
    return {
        "jtr": jr, "cyclictest": cr,
        "jtr_p50_ns": med(jr, "p50_ns"), "cyclictest_p50_ns": med(cr, "p50_ns"),
        "jtr_p99_ns": med(jr, "p99_ns"), "cyclictest_p99_ns": med(cr, "p99_ns"),
        "jtr_max_ns": med(jr, "max_ns"), "cyclictest_max_ns": med(cr, "max_ns"),
        "p50_ratio": statistics.median(p50), "p50_ratios": p50,
        "p99_ratio": statistics.median(p99), "p99_ratios": p99,
        "cyclictest_overflows": sum(c["overflows"] for c in cr),
        "jtr_cost_ns": med(cost_rows(jr), "ns_per_wakeup") if cost_rows(jr) else None,
        "cyclictest_cost_ns": med(cost_rows(cr), "ns_per_wakeup") if cost_rows(cr) else None,
        "cost_ratio": statistics.median(cost_ratios) if cost_ratios else None,
        "cost_ratios": cost_ratios}


def trace_rounds():
    """(seconds, cycles): BENCH_WAKE_TRACE_ROUNDS cycles (default 10) of
    BENCH_WAKE_TRACE_SECONDS each (default 4, at least 4): the host's swings (a
    round's p50 doubling) are larger than what the tracer adds, so part 3 takes
    more, shorter cycles than the others and reads their median and quartiles."""
    return (max(4, int(os.environ.get("BENCH_WAKE_TRACE_SECONDS", "4"))),
            max(1, int(os.environ.get("BENCH_WAKE_TRACE_ROUNDS", "10"))))


def quartiles(values):
    """(first quartile, third quartile) of @values (the values for fewer than 4)."""
    v = sorted(values)
    if len(v) < 4:
        return v[0], v[-1]
    q = statistics.quantiles(v, n=4)
    return q[0], q[2]


# part 3's configurations: (name, the tracer's extra options; None: no tracer)
TRACE_CONFIGS = (("off", None), ("on", ()), ("empty", ("--floor-only", "empty")),
                 ("clock", ("--floor-only", "clock")))


def tracer_overhead(cpu, seconds, rounds, tmp):
    """Part 3: cycles of jtr wake rounds without a tracer, with jtr trace, and
    with the two floors (TRACE_CONFIGS), each cycle's order rotated by one from
    the one before (a drift of the host within a cycle then falls on each
    alike); each traced round against the untraced one of its cycle."""
    rows = {name: [] for name, _ in TRACE_CONFIGS}
    n = len(TRACE_CONFIGS)
    for i in range(rounds):
        order = [TRACE_CONFIGS[(i + k) % n] for k in range(n)]
        said = ["alone" if x is None else " ".join(("beside jtr trace",) + x)
                for _, x in order]
        print("bench: cycle %d/%d: jtr wake %s, %d s each on CPU %d"
              % (i + 1, rounds, ", ".join(said), seconds, cpu), file=sys.stderr)
        for name, extra in order:
            rows[name].append(jtr_wake_round(cpu, seconds, os.path.join(tmp, "wake"))
                              if extra is None else traced_round(cpu, seconds, tmp, extra))
    on, off = rows["on"], rows["off"]
    p50, p99 = ratios(on, off, "p50_ns"), ratios(on, off, "p99_ns")
    res = {"on": on, "off": off, "rounds": rounds, "seconds": seconds,
           "p50_quartiles": quartiles(p50), "p99_quartiles": quartiles(p99),
           "p50_ns_on": med(on, "p50_ns"), "p50_ns_off": med(off, "p50_ns"),
           "p99_ns_on": med(on, "p99_ns"), "p99_ns_off": med(off, "p99_ns"),
           "max_ns_on": med(on, "max_ns"), "max_ns_off": med(off, "max_ns"),
           "p50_ratio": statistics.median(p50), "p50_ratios": p50,
           "p99_ratio": statistics.median(p99), "p99_ratios": p99,
           "events": med(on, "events"), "events_per_s": med(on, "events_per_s"),
           "dropped": sum(r["dropped"] for r in on), "floors": {}}
    for name in ("empty", "clock"):
        r50 = ratios(rows[name], off, "p50_ns")
        res["floors"][name] = {"rows": rows[name], "p50_ns": med(rows[name], "p50_ns"),
                               "p50_ratio": statistics.median(r50), "p50_ratios": r50,
                               "p50_quartiles": quartiles(r50)}
    return res


def measure(cpu, rounds, tmp):
    """The whole item: {"cpu", "seconds", "rounds", "vs_cyclictest", "tracer",
    "skipped": {part: reason}, "errors": [...]}."""
    seconds = wake_seconds()
    res = {"cpu": cpu, "seconds": seconds, "rounds": rounds, "interval_us": INTERVAL_US,
           "fifo_prio": PRIO, "vs_cyclictest": None, "tracer": None, "skipped": {},
           "errors": []}
    if os.geteuid() != 0:
        why = "needs root (SCHED_FIFO, /dev/cpu_dma_latency and BPF)"
        res["skipped"] = {"vs_cyclictest": why, "tracer": why}
        return res
    if not shutil.which("cyclictest"):
        res["skipped"]["vs_cyclictest"] = ("cyclictest is missing; run 'make deps' "
                                           "(Debian package rt-tests)")
    else:
        try:
            res["vs_cyclictest"] = vs_cyclictest(cpu, seconds, rounds, tmp)
        except (RuntimeError, OSError, ValueError, KeyError) as e:
            res["errors"].append("jtr wake vs cyclictest: %s" % e)
    try:
        res["tracer"] = tracer_overhead(cpu, *trace_rounds(), tmp)
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        res["errors"].append("jtr wake with jtr trace: %s" % e)
    return res


def verdict(ok):
    """PASS or MISS."""
    return "PASS" if ok else "MISS"


def rounds_text(values):
    """'1.012, 0.987, ...'"""
    return ", ".join("%.3f" % v for v in values)


def print_vs_cyclictest(v, cpu, rounds, seconds):
    """The table of parts 1 and 2."""
    lo, hi = 1 - GOAL_BAND, 1 + GOAL_BAND
    print("jtr wake vs cyclictest, CPU %d, %d us period at SCHED_FIFO %d, %d x %d s (medians)"
          % (cpu, INTERVAL_US, PRIO, rounds, seconds))
    print("  %-22s %12s %12s" % ("", "jtr wake", "cyclictest"))
    print("  %-22s %12.0f %12.0f" % ("p50 ns", v["jtr_p50_ns"], v["cyclictest_p50_ns"]))
    print("  %-22s %12.0f %12.0f" % ("p99 ns", v["jtr_p99_ns"], v["cyclictest_p99_ns"]))
    print("  %-22s %12.0f %12.0f" % ("max ns", v["jtr_max_ns"], v["cyclictest_max_ns"]))
    if v["cost_ratio"] is not None:
        print("  %-22s %12.0f %12.0f" % ("CPU ns per wake-up", v["jtr_cost_ns"],
                                         v["cyclictest_cost_ns"]))
    for k in ("p50", "p99"):
        r = v[k + "_ratio"]
        print("  %s ratio jtr/cyclictest: %.3f (goal %.2f-%.2f; rounds: %s): %s"
              % (k, r, lo, hi, rounds_text(v[k + "_ratios"]), verdict(lo <= r <= hi)))
    if v["cost_ratio"] is not None:
        print("  CPU per wake-up ratio jtr/cyclictest: %.3f (goal <= 1.0; rounds: %s): %s"
              % (v["cost_ratio"], rounds_text(v["cost_ratios"]), verdict(v["cost_ratio"] <= 1.0)))
    else:
        print("  CPU per wake-up: the measuring thread was not found in a round")
    print("  cyclictest's resolution is 1 us (it truncates to whole us)%s"
          % ("; %d wake-ups above its %d us histogram" % (v["cyclictest_overflows"], HIST_US)
             if v["cyclictest_overflows"] else ""))


def print_tracer(t, cpu):
    """The table of part 3."""
    print("jtr wake with and without jtr trace, CPU %d, %d cycles of %d s rounds (medians)"
          % (cpu, t["rounds"], t["seconds"]))
    print("  %-22s %12s %12s" % ("", "traced", "not traced"))
    print("  %-22s %12.0f %12.0f" % ("p50 ns", t["p50_ns_on"], t["p50_ns_off"]))
    print("  %-22s %12.0f %12.0f" % ("p99 ns", t["p99_ns_on"], t["p99_ns_off"]))
    print("  %-22s %12.0f %12.0f" % ("max ns", t["max_ns_on"], t["max_ns_off"]))
    print("  %.0f events recorded a round (%.0f/s), %d dropped"
          % (t["events"], t["events_per_s"], t["dropped"]))
    for k in ("p50", "p99"):
        r = t[k + "_ratio"]
        print("  %s ratio traced/not traced: %.3f, quartiles %.3f-%.3f (goal <= %.2f; "
              "cycles: %s): %s" % (k, r, t[k + "_quartiles"][0], t[k + "_quartiles"][1],
                                   GOAL_TRACED, rounds_text(t[k + "_ratios"]),
                                   verdict(r <= GOAL_TRACED)))
    floors = t.get("floors") or {}
    for name, what in (("empty", "an empty program on each of its tracepoints"),
                       ("clock", "each of those reading the clock once")):
        f = floors.get(name)
        if f:
            print("  p50 ratio beside %s (--floor-only %s): %.3f, quartiles %.3f-%.3f"
                  % (what, name, f["p50_ratio"], f["p50_quartiles"][0],
                     f["p50_quartiles"][1]))
    if floors.get("clock") and floors["clock"]["p50_ratio"] > GOAL_TRACED:
        print("  the goal is below what a tracer whose records carry a time costs here "
              "(%.3f > %.2f)" % (floors["clock"]["p50_ratio"], GOAL_TRACED))


def show(res):
    """Print the item's tables, skips and errors; False if a part failed to run."""
    for part, why in sorted(res["skipped"].items()):
        print("jtr wake: %s skipped: %s" % ("cyclictest comparison" if part == "vs_cyclictest"
                                            else "tracer overhead", why))
    if res["vs_cyclictest"]:
        print_vs_cyclictest(res["vs_cyclictest"], res["cpu"], res["rounds"], res["seconds"])
    if res["tracer"]:
        print_tracer(res["tracer"], res["cpu"])
    for e in res["errors"]:
        print("bench: wake: %s" % e, file=sys.stderr)
    return not res["errors"]


def main():
    """Run the item alone (BENCH_CPU, BENCH_ROUNDS, BENCH_WAKE_SECONDS)."""
    import tempfile
    with open("/sys/devices/system/cpu/online") as f:
        last = int(f.read().strip().replace("-", ",").split(",")[-1])
    cpu = int(os.environ.get("BENCH_CPU", last))
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    tmp = tempfile.mkdtemp(prefix="jtr-bench-")
    try:
        res = measure(cpu, rounds, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if show(res) else 1


if __name__ == "__main__":
    sys.exit(main())
