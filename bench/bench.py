#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""bench.py - `make bench`: jtr against its peers, in one run, on one CPU.

1. jtr gap vs oslat (rt-tests): alternating rounds of the same length on the
   same CPU. Loop period (ns per loop: oslat records one histogram count per
   loop, so its period is duration / counts), p99.99 and max of each. Goal:
   jtr's loop period / oslat's <= 1.0.
2. The histogram's record cost (build/bench/hist_bench), next to a bare
   counter increment timed in the same process. Goal: <= 5 ns.
3. The null probe's cost per sample: wall time per sample with no pause,
   less the timed loop itself.
4. The tracer's overhead (root only): `jtr run` with and without the tracer,
   alternating on the same CPU: % time lost and p99.99 of both, the tracer's
   cost per program run from BPF statistics, and the ratio of time lost with
   the tracer (less the traced events' own cost) to time lost without it.
   Goal: <= 1.05.
5. Attribution speed: bench/attribute_bench.py (1M events, 100k outliers),
   and bench/ends_bench.py (root only): a real 10 s overloaded ping-pong,
   every round trip attributed on both ends (goal <= 10 s for >= 2M events
   and >= 50k overlapping outliers), against the plain-Python path.
6. Report speed: bench/report_bench.py (`jtr report` on 10M samples, 100k
   attributed outliers; goal < 5 s); export speed (root only):
   bench/export_bench.py (`jtr export --perfetto` of a real traced 3 s
   ping at 10K/s; goal <= 5 s).
7. Transports: bench/transport_bench.py (shm ping-pong vs the cache-line
   round trip, UDP and TCP ping-pong vs sockperf, shm throughput vs memcpy
   bandwidth, between two CPUs).
8. IPC comparison: `jtr ipc` (every method, 1 and 3 readers, 100 KB batches)
   and the shm / tcp time ratios next to the reference figures of the IPC
   comparison jtr re-creates (9.6 s vs 10.1 s point to point, 10.6 s vs
   25.5 s to three readers, 1e9 objects on 4 vCPUs).
   BENCH_IPC_OBJECTS (default 100M; 1G is the reference's full size, about
   ten times as long). BENCH=ipc runs this part alone.
9. Tracer drops (root only): `jtr trace` with its defaults on the CPU of a
   UDP flood (`jtr send -T udp -n 500K -p 0`), with the draining CPU idle and
   with 24 busy loops on it: events a second traced on that CPU (mean of the
   flood's seconds, and the busiest second) and events dropped. Goal: 0 dropped
   at 250,000 events a second.
10. jtr wake vs cyclictest (rt-tests): bench/wake_bench.py (1 ms period at
    SCHED_FIFO 80, alternating rounds on the same CPU: p50, p99, max, goal
    p50 and p99 within +-10 %; the measuring thread's CPU time per wake-up,
    goal <= cyclictest's; jtr wake with and without `jtr trace` beside it,
    goal p50 and p99 traced / untraced <= 1.05, beside the floors of that
    figure: `jtr trace --floor-only empty` and `--floor-only clock`, an empty
    program and one that reads the clock on each of its tracepoints).
    BENCH_WAKE_SECONDS (default 10) is the length of its runs.
11. jtr watch (root only): bench/watch_bench.py (its CPU time and memory
    beside a busy application, scraped every second, against jtr trace in the
    same conditions, goal <= 0.5 % of one CPU; its drops beside the UDP
    flood, goal 0; and its programs on every CPU beside a UDP flood and a
    switch storm on each, goal a million events a second, 0 dropped).
    BENCH_WATCH_SECONDS (default 60) is each round's window.
12. The tracer per event against the cost floor (root only):
    bench/floor_bench.py (`jtr trace --floor` beside the UDP flood: each of
    jtr's programs against an empty program on the same tracepoint, BPF
    run-time statistics of the same events; the ratio per tracepoint, goal a
    mean <= 1.5, the dearest programs named; beside it the ratio of a
    program that reads the clock once, the least a record with a time costs).
13. jtr run app (root only): bench/app_bench.py (a function called back to
    back: the time added per call by jtr run app's uprobe and uretprobe,
    goal <= 1.5 us, beside the kernel's own floor, an empty pair; at 100,000
    calls a second, the throughput loss and the calls lost, goal 0).
    BENCH_APP_SECONDS (default 5) is the length of its runs.

The machines are shared and noisy: every comparison is a ratio taken within
one run, rounds alternate, and medians are reported.
Environment: BENCH_SECONDS (default 10), BENCH_ROUNDS (default 3), BENCH_CPU;
BENCH=ITEM,... runs only those items: gap, hist, null, tracer, attribution,
report, export, transports, ipc, drops, wake, watch, floor, app (default: all).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import app_bench
import floor_bench
import transport_bench
import wake_bench
import watch_bench

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JTR = os.path.join(ROOT, "jtr")
HIST_BENCH = os.path.join(ROOT, "build", "bench", "hist_bench")
ITEMS = ("gap", "hist", "null", "tracer", "attribution", "report", "export", "transports", "ipc",
         "drops", "wake", "watch", "floor", "app")
FLOOD_CMD = floor_bench.FLOOD_CMD
BUSY_LOOPS = 24


def last_online_cpu():
    with open("/sys/devices/system/cpu/online") as f:
        return int(f.read().strip().replace("-", ",").split(",")[-1])


def oslat_round(cpu, seconds, tmp):
    js = os.path.join(tmp, "oslat.json")
    subprocess.run(["oslat", "-c", str(cpu), "-D", str(seconds), "-q", "--json=" + js],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(js) as f:
        t = next(iter(json.load(f)["thread"].values()))
    buckets = sorted((float(k), v) for k, v in t["histogram"].items())
    loops = sum(v for _, v in buckets)
    need, cum, p9999 = 0.9999 * loops, 0, None
    for us, n in buckets:  # oslat's keys are bucket upper bounds in us
        cum += n
        if cum >= need:
            p9999 = us * 1000
            break
    return {"loop_ns": t["duration"] * 1e9 / loops, "loops": loops,
            "p99.99_ns": p9999, "max_ns": t["max"] * 1000, "resolution_ns": 1000}


def jtr_gap_round(cpu, seconds, tmp):
    out = os.path.join(tmp, "gap")
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([JTR, "gap", "-c", str(cpu), "-d", str(seconds), "-q", "-o", out], check=True)
    with open(os.path.join(out, "result.json")) as f:
        r = json.load(f)["runs"][0]
    return {"loop_ns": r["loop_period_ns"], "loops": r["samples"],
            "p99.99_ns": r["percentiles_ns"]["99.99"], "max_ns": r["max_ns"],
            "resolution_ns": r["histogram"]["max_rel_error"]}


def null_cost(cpu, tmp):
    out = os.path.join(tmp, "null")
    subprocess.run([JTR, "null", "-c", str(cpu), "-n", "2M", "--runs", "3", "-p", "0", "-q",
                    "-o", out], check=True)
    with open(os.path.join(out, "result.json")) as f:
        res = json.load(f)
    per = [r["duration_ns"] / r["samples"] for r in res["runs"]]
    timed = [r["mean_ns"] for r in res["runs"]]
    return {"period_ns": statistics.median(per), "timed_loop_ns": statistics.median(timed),
            "overhead_ns": statistics.median(p - t for p, t in zip(per, timed)),
            "timer_overhead_ns": res["calibration"]["timer_overhead_ns"]}


def traced_round(cpu, seconds, tmp, trace, backend="ebpf"):
    out = os.path.join(tmp, "run-%s" % (backend if trace else "plain"))
    shutil.rmtree(out, ignore_errors=True)
    cmd = [JTR, "run", "-c", str(cpu), "-d", str(seconds), "-q", "-o", out]
    if not trace:
        cmd.insert(2, "--no-trace")
    else:
        cmd[2:2] = ["--backend", backend]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "result.json")) as f:
        res = json.load(f)
    r = res["runs"][0]
    row = {"lost_pct": r["lost_time_pct"], "p99.99_ns": r["percentiles_ns"]["99.99"],
           "duration_ns": r["duration_ns"], "outliers_per_s": r["outliers"]["per_s"]}
    if trace and backend == "perf":
        with open(os.path.join(out, "trace.json")) as f:
            row["events"] = json.load(f)["events"]["total"]
    elif trace:
        with open(os.path.join(out, "trace.json")) as f:
            t = json.load(f)
        runs = sum(p["run_count"] for p in t["programs"].values())
        ns = sum(p["run_time_ns"] for p in t["programs"].values())
        row["ns_per_run"] = ns / runs if runs else 0.0
        row["events"] = t["events"]["total"]
        # the traced events' own cost on the measured CPU, as % of the run
        row["events_cost_pct"] = 100.0 * row["events"] * row["ns_per_run"] / r["duration_ns"]
    return row


def tracer_overhead(cpu, seconds, rounds, tmp):
    on, off, perf = [], [], []
    for i in range(rounds):
        print("bench: round %d/%d: jtr run without a tracer, with eBPF, with perf, %d s each "
              "on CPU %d" % (i + 1, rounds, seconds, cpu), file=sys.stderr)
        off.append(traced_round(cpu, seconds, tmp, False))
        on.append(traced_round(cpu, seconds, tmp, True))
        if shutil.which("perf"):
            perf.append(traced_round(cpu, seconds, tmp, True, "perf"))
    ratios = [max(a["lost_pct"] - a["events_cost_pct"], 0) / b["lost_pct"] if b["lost_pct"] else
              float("nan") for a, b in zip(on, off)]
    med = statistics.median
    return {"on": on, "off": off, "ratio": med(ratios), "ratios": ratios,
            "lost_pct_on": med(a["lost_pct"] for a in on),
            "lost_pct_off": med(b["lost_pct"] for b in off),
            "p99.99_ns_on": med(a["p99.99_ns"] for a in on),
            "p99.99_ns_off": med(b["p99.99_ns"] for b in off),
            "ns_per_run": med(a["ns_per_run"] for a in on),
            "events_per_s": med(a["events"] / (a["duration_ns"] / 1e9) for a in on),
            "events_cost_pct": med(a["events_cost_pct"] for a in on),
            "perf": perf and {
                "lost_pct": med(p["lost_pct"] for p in perf),
                "p99.99_ns": med(p["p99.99_ns"] for p in perf),
                "events_per_s": med(p["events"] / (p["duration_ns"] / 1e9) for p in perf),
                "ratio": med(p["lost_pct"] / b["lost_pct"] for p, b in zip(perf, off)
                             if b["lost_pct"])}}


def flood_round(cpu, tmp, busy_loops):
    """`jtr trace -c CPU` (defaults) while FLOOD_CMD runs there, @busy_loops busy
    loops on the draining CPU: events/s on the CPU (mean of the seconds with over
    100k events, and the busiest second), dropped, the drain's ns per event."""
    sys.path.insert(0, os.path.join(ROOT, "analysis"))
    from jtrpy.trace.events import read_events
    out = os.path.join(tmp, "flood-trace")
    shutil.rmtree(out, ignore_errors=True)
    consumer = min(os.sched_getaffinity(0))
    tracer = subprocess.Popen([JTR, "trace", "-c", str(cpu), "-o", out, "--consumer-cpu",
                               str(consumer)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
    tracer.stdout.readline()    # "tracing CPU ...": every program is attached
    loops = [subprocess.Popen(["taskset", "-c", str(consumer), "sh", "-c", "while :; do :; done"])
             for _ in range(busy_loops)]
    try:
        subprocess.run([JTR] + FLOOD_CMD.replace("CPU", str(cpu)).split()[1:] +
                       ["-q", "-o", os.path.join(tmp, "flood-send")], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        for p in loops:
            p.kill()
            p.wait()
        tracer.send_signal(2)
        tracer.communicate()
    with open(os.path.join(out, "trace.json")) as f:
        meta = json.load(f)
    per_s = {}
    for ts in read_events(out).cpu_ts.get(cpu, []):
        per_s[ts // 10**9] = per_s.get(ts // 10**9, 0) + 1
    busy = [n for n in per_s.values() if n > 100_000]
    ev = meta["events"]
    return {"busy_loops": busy_loops, "events": ev["total"], "dropped": ev["dropped"],
            "events_per_s": statistics.mean(busy) if busy else 0.0,
            "peak_per_s": max(per_s.values(), default=0),
            "drain_ns_per_event": meta["cost"]["tracing_cpu_ns"] / max(ev["total"], 1),
            "buffer_bytes": meta["buffer_bytes"]}


def tracer_drops(cpu, tmp):
    print("bench: jtr trace beside '%s', draining CPU idle, then with %d busy loops"
          % (FLOOD_CMD, BUSY_LOOPS), file=sys.stderr)
    return [flood_round(cpu, tmp, 0), flood_round(cpu, tmp, BUSY_LOOPS)]


def attribution_speed(script="attribute_bench.py"):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", script)],
                       capture_output=True, text=True)
    sys.stderr.write(p.stderr)
    return p.stdout


# the reference seconds of the IPC comparison jtr re-creates: 1e9 objects of
# 50 bytes in 100 KB batches (4 vCPUs)
IPC_REFERENCE = {1: {"shm": 9.64, "tcp": 10.08}, 3: {"shm": 10.61, "tcp": 25.46}}


def ipc_compare(tmp):
    """jtr ipc, every method, 1 and 3 readers: shm / tcp time ratios beside the reference's."""
    objects = os.environ.get("BENCH_IPC_OBJECTS", "100M")
    out = os.path.join(tmp, "ipc")
    print("bench: jtr ipc -n %s (every method, 1 and 3 readers)" % objects, file=sys.stderr)
    p = subprocess.run([JTR, "ipc", "-n", objects, "-q", "-o", out], stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "result.json")) as f:
        res = json.load(f)
    with open(os.path.join(out, "summary.txt")) as f:
        table = f.read()
    rows = {(r["method"], r["readers"]): r for r in res["rows"] if r["ok"]}
    ratios = {}
    for n, ref in IPC_REFERENCE.items():
        shm, tcp = rows.get(("shm-mutex", n)), rows.get(("tcp", n))
        best_shm = min((r for (m, k), r in rows.items() if k == n and m.startswith("shm")),
                       key=lambda r: r["elapsed_s"], default=None)
        best_tcp = min((r for (m, k), r in rows.items() if k == n and m.startswith("tcp")),
                       key=lambda r: r["elapsed_s"], default=None)
        ratios[n] = {
            "shm_mutex_s": shm and shm["elapsed_s"], "tcp_s": tcp and tcp["elapsed_s"],
            "ratio": shm["elapsed_s"] / tcp["elapsed_s"] if shm and tcp else None,
            "best_shm": best_shm and best_shm["method"],
            "best_tcp": best_tcp and best_tcp["method"],
            "best_ratio": (best_shm["elapsed_s"] / best_tcp["elapsed_s"]
                           if best_shm and best_tcp else None),
            "reference_ratio": ref["shm"] / ref["tcp"]}
    return {"objects": res["params"]["objects"], "exit": p.returncode, "table": table,
            "ratios": ratios}


def print_ipc(ipc):
    sys.stdout.write(ipc["table"])
    for n, r in sorted(ipc["ratios"].items()):
        if r["ratio"] is None:
            print("ipc, %d reader(s): shm-mutex or tcp failed" % n)
            continue
        print("ipc, %d reader%s: shm-mutex / tcp time %.2f (reference %.2f); best shm (%s) / "
              "best tcp (%s) %.2f" % (n, "s" if n > 1 else "", r["ratio"], r["reference_ratio"],
                                      r["best_shm"], r["best_tcp"], r["best_ratio"]))


def selected_items():
    """BENCH=gap,transports,... -> the items to run; all without BENCH."""
    names = [n.strip() for n in os.environ.get("BENCH", "").split(",") if n.strip()]
    bad = [n for n in names if n not in ITEMS]
    if bad:
        print("bench: BENCH=%s: unknown item %s; use a comma list of %s"
              % (os.environ["BENCH"], bad[0], ", ".join(ITEMS)), file=sys.stderr)
        return None
    return set(names or ITEMS)


def main():
    items = selected_items()
    if items is None:
        return 2
    if "gap" in items and not shutil.which("oslat"):
        print("bench: oslat is missing; run 'make deps' (Debian package rt-tests)", file=sys.stderr)
        return 2
    seconds = int(os.environ.get("BENCH_SECONDS", "10"))
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    cpu = int(os.environ.get("BENCH_CPU", last_online_cpu()))
    tmp = tempfile.mkdtemp(prefix="jtr-bench-")
    jr, orr = [], []
    hist = null = tracer = attrib = report = export = ipc = drops = wake = watch = floor = None
    app = None
    try:
        for i in range(rounds if "gap" in items else 0):
            print("bench: round %d/%d: jtr gap and oslat, %d s each on CPU %d"
                  % (i + 1, rounds, seconds, cpu), file=sys.stderr)
            jr.append(jtr_gap_round(cpu, seconds, tmp))
            orr.append(oslat_round(cpu, seconds, tmp))
        if "hist" in items:
            hist = json.loads(subprocess.run([HIST_BENCH], check=True, capture_output=True,
                                             text=True).stdout)
        if "null" in items:
            null = null_cost(cpu, tmp)
        if "tracer" in items and os.geteuid() == 0:
            tracer = tracer_overhead(cpu, seconds, rounds, tmp)
        if "attribution" in items:
            attrib = attribution_speed() + "\n" + attribution_speed("ends_bench.py")
        if "report" in items:
            report = attribution_speed("report_bench.py")
        if "export" in items:
            export = attribution_speed("export_bench.py")
        if "ipc" in items:
            ipc = ipc_compare(tmp)
        if "drops" in items and os.geteuid() == 0:
            drops = tracer_drops(cpu, tmp)
        if "wake" in items:
            wake = wake_bench.measure(cpu, rounds, tmp)
        if "watch" in items and os.geteuid() == 0:
            watch = watch_bench.measure(cpu, rounds, tmp)
        if "floor" in items and os.geteuid() == 0:
            floor = floor_bench.measure(cpu, rounds, tmp)
        if "app" in items and os.geteuid() == 0:
            app = app_bench.measure(cpu, rounds, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def med(rs, k):
        return statistics.median(r[k] for r in rs)

    result = {"cpu": cpu, "seconds": seconds, "rounds": rounds, "items": sorted(items)}
    if jr:
        ratios = [j["loop_ns"] / o["loop_ns"] for j, o in zip(jr, orr)]
        g = result["gap_vs_oslat"] = {
            "jtr_loop_ns": med(jr, "loop_ns"), "oslat_loop_ns": med(orr, "loop_ns"),
            "ratio": statistics.median(ratios), "ratios": ratios,
            "jtr_p99.99_ns": med(jr, "p99.99_ns"), "oslat_p99.99_ns": med(orr, "p99.99_ns"),
            "jtr_max_ns": med(jr, "max_ns"), "oslat_max_ns": med(orr, "max_ns")}
        print("jtr gap vs oslat, CPU %d, %d x %d s (medians)" % (cpu, rounds, seconds))
        print("  %-22s %12s %12s" % ("", "jtr gap", "oslat"))
        print("  %-22s %12.2f %12.2f" % ("ns per loop", g["jtr_loop_ns"], g["oslat_loop_ns"]))
        print("  %-22s %12.0f %12.0f" % ("p99.99 ns", g["jtr_p99.99_ns"], g["oslat_p99.99_ns"]))
        print("  %-22s %12.0f %12.0f" % ("max ns", g["jtr_max_ns"], g["oslat_max_ns"]))
        print("  loop period ratio jtr/oslat: %.3f (goal <= 1.0; rounds: %s)"
              % (g["ratio"], ", ".join("%.3f" % r for r in ratios)))
    rc = 0
    if wake:
        result["wake"] = wake
        if not wake_bench.show(wake):
            rc = 1
    if watch:
        result["watch"] = watch
        if not watch_bench.show(watch, cpu):
            rc = 1
    elif "watch" in items:
        print("jtr watch: skipped (needs root to load BPF programs)")
    if floor:
        result["floor"] = floor
        floor_bench.show(floor)
    elif "floor" in items:
        print("tracer floor: skipped (needs root to load BPF programs)")
    if app:
        result["app"] = app
        app_bench.show(app)
    elif "app" in items:
        print("jtr run app: skipped (needs root to load BPF programs)")
    if hist:
        h = result["hist_record"] = dict(hist, ratio_to_flat=hist["record_ns"] /
                                         hist["flat_increment_ns"])
        print("histogram record: %.2f ns per value (goal <= 5); bare counter increment %.2f ns; "
              "ratio %.2f" % (h["record_ns"], h["flat_increment_ns"], h["ratio_to_flat"]))
    if null:
        result["null_probe"] = null
        print("null probe: %.1f ns per sample with -p 0, of which the timed 100-spin loop %.1f ns; "
              "overhead %.1f ns per sample" % (null["period_ns"], null["timed_loop_ns"],
                                               null["overhead_ns"]))
    result["tracer"] = tracer
    if tracer:
        print("tracer on vs off, CPU %d, %d x %d s (medians)" % (cpu, rounds, seconds))
        print("  %-22s %12s %12s" % ("", "traced", "not traced"))
        print("  %-22s %12.3f %12.3f" % ("% time lost", tracer["lost_pct_on"],
                                         tracer["lost_pct_off"]))
        print("  %-22s %12.0f %12.0f" % ("p99.99 ns", tracer["p99.99_ns_on"],
                                         tracer["p99.99_ns_off"]))
        print("  %.0f events/s traced at %.0f ns per program run (BPF stats): %.3f %% of the CPU"
              % (tracer["events_per_s"], tracer["ns_per_run"], tracer["events_cost_pct"]))
        if tracer["perf"]:
            pf = tracer["perf"]
            print("  perf backend: %.3f %% time lost, p99.99 %.0f ns, %.0f events/s; time lost "
                  "ratio perf / not traced %.3f" % (pf["lost_pct"], pf["p99.99_ns"],
                                                    pf["events_per_s"], pf["ratio"]))
        print("  time lost ratio traced (less the events' own cost) / not traced: %.3f "
              "(goal <= 1.05; rounds: %s)" % (tracer["ratio"],
                                              ", ".join("%.3f" % r for r in tracer["ratios"])))
    elif "tracer" in items:
        print("tracer overhead: skipped (needs root to load BPF programs)")
    result["tracer_drops"] = drops
    for d in drops or []:
        print("tracer beside %s, %d busy loops on the draining CPU: %.0f events/s traced "
              "(busiest second %d), %d of %d dropped (goal 0 at 250000/s); drain %.0f ns "
              "per event, buffer %d MiB" % (FLOOD_CMD.replace("CPU", str(cpu)), d["busy_loops"],
                                            d["events_per_s"], d["peak_per_s"], d["dropped"],
                                            d["events"], d["drain_ns_per_event"],
                                            d["buffer_bytes"] >> 20))
    if drops is None and "drops" in items:
        print("tracer drops: skipped (needs root to load BPF programs)")
    if attrib is not None:
        sys.stdout.write(attrib)
    if report is not None:
        lines = report.strip().splitlines()
        print(lines[0] if lines else "report speed: no output")
        if lines:
            result["report"] = json.loads(lines[-1])
    if export is not None:
        lines = export.strip().splitlines()
        print(lines[0] if lines else "export speed: no output")
        if len(lines) > 1:
            result["export"] = json.loads(lines[-1])
    if "transports" in items:
        tmp = tempfile.mkdtemp(prefix="jtr-bench-")
        sys.stdout.flush()
        try:
            result["transports"], errors = transport_bench.transports(rounds, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for e in errors:
            print("bench: transports: %s" % e, file=sys.stderr)
            rc = 1
    if ipc is not None:
        print_ipc(ipc)
        result["ipc"] = {k: v for k, v in ipc.items() if k != "table"}
        if ipc["exit"]:
            rc = 1
    os.makedirs(os.path.join(ROOT, "build", "bench"), exist_ok=True)
    with open(os.path.join(ROOT, "build", "bench", "bench.json"), "w") as f:
        json.dump(result, f, indent=2)
    print("written: build/bench/bench.json")
    return rc


if __name__ == "__main__":
    sys.exit(main())
