#!/usr/bin/env python3
"""bench.py - `make bench`: jtr against its peers, in one run, on one CPU.

1. jtr gap vs oslat (rt-tests): alternating rounds of the same length on the
   same CPU. Loop period (ns per loop: oslat records one histogram count per
   loop, so its period is duration / counts), p99.99 and max of each. Goal:
   jtr's loop period / oslat's <= 1.0.
2. The histogram's record cost (build/bench/hist_bench), next to a bare
   counter increment timed in the same process. Goal: <= 5 ns.
3. The null probe's cost per sample: wall time per sample with no pause,
   less the timed loop itself.

The machines are shared and noisy: every comparison is a ratio taken within
one run, rounds alternate, and medians are reported.
Environment: BENCH_SECONDS (default 10), BENCH_ROUNDS (default 3), BENCH_CPU.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JTR = os.path.join(ROOT, "jtr")
HIST_BENCH = os.path.join(ROOT, "build", "bench", "hist_bench")


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
    subprocess.run([JTR, "null", "-c", str(cpu), "-n", "2M", "-r", "3", "-p", "0", "-q",
                    "-o", out], check=True)
    with open(os.path.join(out, "result.json")) as f:
        res = json.load(f)
    per = [r["duration_ns"] / r["samples"] for r in res["runs"]]
    timed = [r["mean_ns"] for r in res["runs"]]
    return {"period_ns": statistics.median(per), "timed_loop_ns": statistics.median(timed),
            "overhead_ns": statistics.median(p - t for p, t in zip(per, timed)),
            "timer_overhead_ns": res["calibration"]["timer_overhead_ns"]}


def main():
    if not shutil.which("oslat"):
        print("bench: oslat is missing; run 'make deps' (Debian package rt-tests)", file=sys.stderr)
        return 2
    seconds = int(os.environ.get("BENCH_SECONDS", "10"))
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    cpu = int(os.environ.get("BENCH_CPU", last_online_cpu()))
    tmp = tempfile.mkdtemp(prefix="jtr-bench-")
    try:
        jr, orr = [], []
        for i in range(rounds):
            print("bench: round %d/%d: jtr gap and oslat, %d s each on CPU %d"
                  % (i + 1, rounds, seconds, cpu), file=sys.stderr)
            jr.append(jtr_gap_round(cpu, seconds, tmp))
            orr.append(oslat_round(cpu, seconds, tmp))
        hist = json.loads(subprocess.run([HIST_BENCH], check=True, capture_output=True,
                                         text=True).stdout)
        null = null_cost(cpu, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def med(rs, k):
        return statistics.median(r[k] for r in rs)

    ratios = [j["loop_ns"] / o["loop_ns"] for j, o in zip(jr, orr)]
    result = {
        "cpu": cpu, "seconds": seconds, "rounds": rounds,
        "gap_vs_oslat": {
            "jtr_loop_ns": med(jr, "loop_ns"), "oslat_loop_ns": med(orr, "loop_ns"),
            "ratio": statistics.median(ratios), "ratios": ratios,
            "jtr_p99.99_ns": med(jr, "p99.99_ns"), "oslat_p99.99_ns": med(orr, "p99.99_ns"),
            "jtr_max_ns": med(jr, "max_ns"), "oslat_max_ns": med(orr, "max_ns")},
        "hist_record": dict(hist, ratio_to_flat=hist["record_ns"] / hist["flat_increment_ns"]),
        "null_probe": null,
    }
    g = result["gap_vs_oslat"]
    print("jtr gap vs oslat, CPU %d, %d x %d s (medians)" % (cpu, rounds, seconds))
    print("  %-22s %12s %12s" % ("", "jtr gap", "oslat"))
    print("  %-22s %12.2f %12.2f" % ("ns per loop", g["jtr_loop_ns"], g["oslat_loop_ns"]))
    print("  %-22s %12.0f %12.0f" % ("p99.99 ns", g["jtr_p99.99_ns"], g["oslat_p99.99_ns"]))
    print("  %-22s %12.0f %12.0f" % ("max ns", g["jtr_max_ns"], g["oslat_max_ns"]))
    print("  loop period ratio jtr/oslat: %.3f (goal <= 1.0; rounds: %s)"
          % (g["ratio"], ", ".join("%.3f" % r for r in ratios)))
    h = result["hist_record"]
    print("histogram record: %.2f ns per value (goal <= 5); bare counter increment %.2f ns; "
          "ratio %.2f" % (h["record_ns"], h["flat_increment_ns"], h["ratio_to_flat"]))
    print("null probe: %.1f ns per sample with -p 0, of which the timed 100-spin loop %.1f ns; "
          "overhead %.1f ns per sample" % (null["period_ns"], null["timed_loop_ns"],
                                           null["overhead_ns"]))
    os.makedirs(os.path.join(ROOT, "build", "bench"), exist_ok=True)
    with open(os.path.join(ROOT, "build", "bench", "bench.json"), "w") as f:
        json.dump(result, f, indent=2)
    print("written: build/bench/bench.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
