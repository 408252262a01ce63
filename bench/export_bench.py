#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""export_bench.py - how fast `jtr export --perfetto` is on a real 3 s ping.

Measures what users export: `jtr run ping -T udp -r 10K -d 3` as root (the
tracer beside it, every round trip attributed on both ends), then times `jtr
export --perfetto` of that result in a process of its own, with its peak
resident memory (wait4's rusage), the kernel events in the log and the trace's
size. Goal: 5 s. Root only (the tracer); prints one line, then one JSON line.
The exit status says nothing about speed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JTR = os.path.join(ROOT, "jtr")
GOAL_S = 5.0
TIMED = ("import resource, subprocess, sys, time, json;"
         "t = time.perf_counter();"
         "p = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
         "s = time.perf_counter() - t;"
         "kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
         "print(json.dumps({'rc': p.returncode, 's': s, 'peak_kb': kb, 'err': p.stderr}))")


def main():
    if os.geteuid() != 0:
        print("jtr export: skipped (the traced ping needs root to load BPF programs)")
        return 0
    seconds = os.environ.get("BENCH_EXPORT_SECONDS", "3")
    tmp = tempfile.mkdtemp(prefix="jtr-export-bench-")
    try:
        run = os.path.join(tmp, "ping")
        subprocess.run([JTR, "run", "ping", "-T", "udp", "-r", "10K", "-d", seconds, "-q",
                        "-o", run], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        trace = os.path.join(tmp, "trace.json")
        r = json.loads(subprocess.run([sys.executable, "-c", TIMED, JTR, "export",
                                       "--perfetto", trace, run], check=True,
                                      capture_output=True, text=True).stdout)
        if r["rc"] != 0:
            raise SystemExit("bench: jtr export failed: %s" % r["err"].strip())
        with open(os.path.join(run, "result.json")) as f:
            events = json.load(f)["attribution"]["tracer"]["events"]
        mb = os.path.getsize(trace) / 1e6
        print("jtr export --perfetto of a %s s traced ping (10K/s, %d kernel events): %.2f s "
              "(goal <= %.0f s: %s), peak %.0f MB, trace %.0f MB"
              % (seconds, events, r["s"], GOAL_S, "PASS" if r["s"] <= GOAL_S else "MISS",
                 r["peak_kb"] / 1024, mb))
        print(json.dumps({"seconds": float(seconds), "events": events, "export_s": r["s"],
                          "goal_s": GOAL_S, "peak_kb": r["peak_kb"], "trace_mb": mb}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
