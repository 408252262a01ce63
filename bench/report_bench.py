#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""report_bench.py - how fast `jtr report` is on a big run: 10M samples, 100k outliers.

Builds a results folder from a real 1 s `jtr gap` run (so every field is the real
format) whose histogram is scaled to BENCH_SAMPLES values (default 10,000,000) and
whose outliers.csv, events.bin and attribution are those of attribute_bench.py's
synthetic log with BENCH_OUTLIERS outliers (default 100,000), attributed with
`jtr attribute`. Then times `jtr report` on it in a process of its own and reads
that process's peak resident memory (wait4's rusage). Goal: under 5 s.
Only prints (one JSON line last); the exit status says nothing about speed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JTR = os.path.join(ROOT, "jtr")
sys.path.insert(0, os.path.join(ROOT, "analysis"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import attribute_bench as AB  # noqa: E402

from jtrpy.results.result import Result  # noqa: E402


def build(folder, n_samples, n_outliers):
    """A full jtr-result/1 folder with @n_samples values and @n_outliers attributed."""
    real = os.path.join(folder, "real")
    subprocess.run([JTR, "gap", "-d", "1", "-q", "-o", real], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    big = os.path.join(folder, "big")
    os.makedirs(big)
    AB.synthesise(big, max(n_outliers * 10, 1_000_000), n_outliers)
    with open(os.path.join(big, "result.json")) as f:
        synth = json.load(f)
    with open(os.path.join(real, "result.json")) as f:
        res = json.load(f)
    run, srun = res["runs"][0], synth["runs"][0]
    h = run["histogram"]
    scale = n_samples / h["total"]
    buckets = [[lo, hi, max(1, round(c * scale))] for lo, hi, c in h["buckets"]]
    h["buckets"], h["total"] = buckets, sum(b[2] for b in buckets)
    run.update(cpu=1, samples=h["total"], start_mono_ns=srun["start_mono_ns"],
               end_mono_ns=srun["end_mono_ns"], duration_ns=srun["duration_ns"])
    o = run["outliers"]
    o.update(count=n_outliers, logged=n_outliers, dropped=0, total_ns=srun["outliers"]["total_ns"],
             per_s=n_outliers / (srun["duration_ns"] / 1e9))
    res["runs"] = [run]
    res["files"] = {"outliers": "outliers.csv"}
    Result(res, os.path.join(big, "result.json")).save()
    subprocess.run([JTR, "attribute", big], check=True, stdout=subprocess.DEVNULL)
    return big


def main():
    n_samples = int(os.environ.get("BENCH_SAMPLES", 10_000_000))
    n_outliers = int(os.environ.get("BENCH_OUTLIERS", 100_000))
    tmp = tempfile.mkdtemp(prefix="jtr-report-bench-")
    try:
        big = build(tmp, n_samples, n_outliers)
        cmd = [sys.executable, "-c",
               "import resource, subprocess, sys, time, json;"
               "t = time.perf_counter();"
               "p = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
               "s = time.perf_counter() - t;"
               "kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
               "print(json.dumps({'rc': p.returncode, 's': s, 'peak_kb': kb, 'err': p.stderr}))",
               JTR, "report", "-o", os.path.join(tmp, "report"), big]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        if r["rc"] != 0:
            raise SystemExit("bench: jtr report failed: %s" % r["err"].strip())
        base = json.loads(subprocess.run(cmd[:3] + [JTR, "--version"], check=True,
                                         capture_output=True, text=True).stdout)
        html = os.path.getsize(os.path.join(tmp, "report", "report.html")) / 1e6
        print("jtr report: %d samples, %d outliers (attributed): %.2f s (goal < 5 s), peak "
              "%.0f MB (jtr --version alone: %.0f MB), report.html %.1f MB"
              % (n_samples, n_outliers, r["s"], r["peak_kb"] / 1024, base["peak_kb"] / 1024,
                 html))
        print(json.dumps({"samples": n_samples, "outliers": n_outliers, "report_s": r["s"],
                          "peak_kb": r["peak_kb"], "base_peak_kb": base["peak_kb"],
                          "html_mb": html}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
