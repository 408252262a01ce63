#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""watch_bench.py - the `watch` part of `make bench` (docs/bench.md).

1. Cost: `jtr watch -c CPU --listen 127.0.0.1:PORT` while an application (a busy
   loop) runs on CPU and this script scrapes /metrics every second, and again
   every SLOW_SCRAPE_S, as Prometheus would: the CPU time of jtr watch's two
   processes (the front end and the tracer, each said; the sum of their
   threads' /proc/PID/task/TID/schedstat: neither process has a thread that
   ends, whose time that sum would miss) over the steady state, as a share of
   one housekeeping CPU, and their resident memory at the start and at the end
   of that window. The peer, in the same conditions and alternating: `jtr
   trace -c CPU` (the same tracer writing every event to its log). Goals: jtr
   watch <= 0.5 % of one CPU; all of its user space <= 0.1 %.
2. A minute under injected load: tests/watch_inject.py's application on CPU and a
   SCHED_FIFO spinner preempting it every 50 ms for BENCH_WATCH_SECONDS (1,200
   times in a minute): jtr watch must count exactly the spins as task preemptions
   by jtr-inject, drop nothing, and keep its memory (sampled after 5 s and at the
   end) where it was.
3. The ceiling: jtr watch on the CPU of a UDP flood (FLOOD_CMD, about 250,000
   events a second, as bench.py's tracer drops item): events a second and
   events dropped. Goal: 0 dropped, as the tracer alone.
4. The rate: the tracer in watch mode (`jtr-trace --watch --floor`, every CPU
   watched) under two loads on every CPU at once: a UDP flood (FLOOD_CMD:
   interrupts, softirqs, wake-ups and switches) and a switch storm
   (build/bench/switch_storm: two threads handing the CPU to each other with
   sched_yield, a sched_switch a call, the dearest event, for RATE_S). Each
   load: events a second (the storm's goal: RATE_GOAL, a million, across the
   watched CPUs), dropped (goal 0), the CPU time of the tracer's own threads
   (its table reads and state lines: the counting runs in the kernel, in the
   traced tasks' time; goal <= 0.1 % of one CPU), and its programs' ns per
   event against the floor (an empty program on the same tracepoint, BPF
   statistics: floor_bench.ratios), weighted by runs, the dearest named (goal
   1.5).

Needs root (BPF). Environment: BENCH_WATCH_SECONDS (default 60: the window
of each round), BENCH_ROUNDS (default 3), BENCH_CPU (default: the last online
CPU). Run alone: `.venv/bin/python bench/watch_bench.py`.
"""
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JTR = os.path.join(ROOT, "jtr")
WARM_S = 3              # loading and attaching are not the steady state
FLOOD_CMD = "send -T udp -c CPU -n 500K -p 0"
GOAL_PCT = 0.5

sys.path.insert(0, os.path.join(ROOT, "analysis"))
from jtrpy.system.ports import free_port  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "bench"))
import floor_bench  # noqa: E402

TRACER = os.path.join(ROOT, "build", "bin", "jtr-trace")
STORM = os.path.join(ROOT, "build", "bench", "switch_storm")
RATE_GOAL_PCT = 0.1
RATE_GOAL = 1e6         # events a second across the watched CPUs
RATE_S = 5              # the switch storm's length
LOADS = {"flood": "a UDP flood", "switches": "a switch storm"}
SLOW_SCRAPE_S = 15.0    # Prometheus' usual scrape interval (its own default is 1m)


def cpu_ns(pid):
    """CPU time of every thread of @pid so far (ns), or 0 when it is gone."""
    total = 0
    for f in glob.glob("/proc/%d/task/*/schedstat" % pid):
        try:
            with open(f) as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    except (OSError, AttributeError):
        return 0


def family(pid):
    """@pid and its children (the tracer under jtr watch)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [pid] + [int(p) for p in f.read().split()]
    except OSError:
        return [pid]


def one_round(cpu, seconds, tmp, tool, scrape_s=1.0):
    """@tool "watch" (scraped every @scrape_s) or "trace" on @cpu beside a busy
    loop for WARM_S + @seconds: {cpu_pct, front_pct, rss_kb_start, rss_kb_end,
    events_per_s, dropped}; front_pct: jtr's own process (the front end; the rest
    is the tracer)."""
    out = tempfile.mkdtemp(prefix=tool + "-", dir=tmp)
    port = free_port()
    app = subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", "while :; do :; done"])
    cmd = [JTR, "watch", "-c", str(cpu), "-q", "--listen", "127.0.0.1:%d" % port, "-o", out] \
        if tool == "watch" else [JTR, "trace", "-c", str(cpu), "-q", "-o", out]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(WARM_S)
        if proc.poll() is not None:
            raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), proc.returncode,
                                                   proc.stderr.read()))
        pids = family(proc.pid)
        t0, c0, r0 = time.monotonic(), [cpu_ns(p) for p in pids], sum(rss_kb(p) for p in pids)
        end = next_scrape = t0
        end += seconds
        while time.monotonic() < end:
            if tool == "watch" and time.monotonic() >= next_scrape:
                next_scrape += scrape_s
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
                    r.read()
            time.sleep(min(1.0, max(0.0, end - time.monotonic())))
        t1, c1, r1 = time.monotonic(), [cpu_ns(p) for p in pids], sum(rss_kb(p) for p in pids)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        app.kill()
        app.wait()
    if proc.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), proc.returncode, err))
    if tool == "watch":
        with open(os.path.join(out, "watch.json")) as f:
            st = json.load(f)["state"]
        events, dropped = st["records"], st["dropped"]
    else:
        with open(os.path.join(out, "trace.json")) as f:
            ev = json.load(f)["events"]
        events, dropped = ev["total"], ev["dropped"]
    pct = [100.0 * (b - a) / ((t1 - t0) * 1e9) for a, b in zip(c0, c1)]
    return {"cpu_pct": sum(pct), "front_pct": pct[0], "rss_kb_start": r0,
            "rss_kb_end": r1, "events_per_s": events / (t1 - t0 + WARM_S), "dropped": dropped}


def injected(cpu, seconds, tmp):
    """jtr watch while tests/watch_inject.py's spinner preempts an application on
    @cpu every 50 ms for @seconds: {spins, counted, dropped, rss_kb_start, rss_kb_end}."""
    out = tempfile.mkdtemp(prefix="injected-", dir=tmp)
    other = min(set(os.sched_getaffinity(0)) - {cpu}, default=cpu)
    spins = int(seconds * 20)
    w = subprocess.Popen(["taskset", "-c", str(other), JTR, "watch", "-c", str(cpu), "-q",
                          "-o", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    try:
        time.sleep(WARM_S)
        inj = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", sys.executable,
                                os.path.join(ROOT, "tests", "watch_inject.py"), str(cpu),
                                "--other", str(other), "--spins", str(spins), "--period-ms",
                                "50", "--spin-us", "300", "--out",
                                os.path.join(out, "spans.csv")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(5)
        pids = family(w.pid)
        r0 = sum(rss_kb(p) for p in pids)
        _, err = inj.communicate(timeout=seconds + 120)
        if inj.returncode != 0:
            raise RuntimeError("watch_inject.py: exit %d: %s" % (inj.returncode, err))
        r1 = sum(rss_kb(p) for p in pids)
    finally:
        w.send_signal(signal.SIGINT)
        w.communicate(timeout=60)
    with open(os.path.join(out, "watch.json")) as f:
        st = json.load(f)["state"]
    counted = sum(n[1] for c in st["cpus"] for k in c["categories"]
                  if k["category"] == "task preemption" for n in k["names"]
                  if n[0] == "jtr-inject")
    with open(os.path.join(out, "spans.csv")) as f:
        done = len(f.read().split())
    return {"spins": done, "counted": counted, "dropped": st["dropped"],
            "rss_kb_start": r0, "rss_kb_end": r1, "seconds": seconds}


def flood(cpu, tmp):
    """jtr watch beside the UDP flood: {events, events_per_s, dropped}."""
    out = tempfile.mkdtemp(prefix="flood-", dir=tmp)
    w = subprocess.Popen([JTR, "watch", "-c", str(cpu), "-q", "-o", out],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(WARM_S)
        t0 = time.monotonic()
        subprocess.run(flood_cmd(cpu, os.path.join(out, "send")), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dt = time.monotonic() - t0
    finally:
        w.send_signal(signal.SIGINT)
        w.communicate(timeout=60)
    with open(os.path.join(out, "watch.json")) as f:
        st = json.load(f)["state"]
    return {"events": st["records"], "events_per_s": st["records"] / (dt + WARM_S),
            "dropped": st["dropped"], "flood_s": dt}


def flood_cmd(cpu, out):
    """FLOOD_CMD on @cpu, on a port of its own (floods side by side would
    take the same default port, and all but one would not start)."""
    return [JTR] + FLOOD_CMD.replace("CPU", str(cpu)).split() + \
        ["--addr", "127.0.0.1:%d" % free_port(), "-q", "-o", out]


def load_cmd(load, cpu, out):
    """The command of @load ("flood" or "switches") on @cpu."""
    if load == "flood":
        return flood_cmd(cpu, os.path.join(out, "send%d" % cpu))
    return [STORM, "-c", str(cpu), "-d", "%ds" % RATE_S]


def rate(tmp, load="flood"):
    """The tracer watching every CPU while @load runs on each: {events_per_s,
    dropped, cpu_pct (the tracer's own threads: its reads of the tables, its
    state lines; its programs run in the traced tasks' time), weighted_ratio,
    jtr_ns, floor_ns, dearest, load_s}."""
    out = tempfile.mkdtemp(prefix="rate-", dir=tmp)
    cpus = sorted(os.sched_getaffinity(0))
    w = subprocess.Popen([TRACER, "--watch", "--floor", "-c", ",".join(map(str, cpus)),
                          "--state-interval", "1s", "-o", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        w.stdout.readline()             # the first state line: counting
        c0 = cpu_ns(w.pid)
        t0 = time.monotonic()
        loads = [subprocess.Popen(load_cmd(load, c, out), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True) for c in cpus]
        for f in loads:
            _, lerr = f.communicate(timeout=300)
            if f.returncode != 0:
                raise RuntimeError("%s: exit %d: %s" % (LOADS[load], f.returncode, lerr))
        dt = time.monotonic() - t0
        c1 = cpu_ns(w.pid)
    finally:
        w.send_signal(signal.SIGINT)
        lines, err = w.communicate(timeout=60)
    if w.returncode != 0:
        raise RuntimeError("jtr-trace --watch: exit %d: %s" % (w.returncode, err))
    last = json.loads([ln for ln in lines.splitlines() if ln.startswith("{\"ts_ns")][-1])
    with open(os.path.join(out, "trace.json")) as f:
        r = floor_bench.ratios(json.load(f)["programs"])
    runs = sum(p["runs"] for p in r.values()) or 1
    return {"load": load, "events": last["records"], "events_per_s": last["records"] / dt,
            "dropped": last["dropped"], "load_s": dt, "cpus": len(cpus),
            "cpu_pct": 100.0 * (c1 - c0) / (dt * 1e9),
            "weighted_ratio": sum(p["ratio"] * p["runs"] for p in r.values()) / runs,
            "jtr_ns": sum(p["jtr_ns"] * p["runs"] for p in r.values()) / runs,
            "floor_ns": sum(p["floor_ns"] * p["runs"] for p in r.values()) / runs,
            "tracepoints": r, "dearest": sorted(r, key=lambda tp: -r[tp]["jtr_ns"])[:3]}


def measure(cpu, rounds, tmp):
    seconds = int(os.environ.get("BENCH_WATCH_SECONDS", "60"))
    rows = {"watch": [], "watch_slow": [], "trace": []}
    for i in range(rounds):
        for row, tool, scrape_s in (("watch", "watch", 1.0), ("watch_slow", "watch", SLOW_SCRAPE_S),
                                    ("trace", "trace", None)):
            print("bench: watch round %d/%d: jtr %s on CPU %d beside a busy loop, %d s%s"
                  % (i + 1, rounds, tool, cpu, seconds, ", scraped every %g s" % scrape_s
                     if scrape_s else ""), file=sys.stderr)
            rows[row].append(one_round(cpu, seconds, tmp, tool, scrape_s))
    print("bench: jtr watch while a spinner preempts an application on CPU %d, %d s"
          % (cpu, seconds), file=sys.stderr)
    inj = injected(cpu, seconds, tmp)
    print("bench: jtr watch beside 'jtr %s'" % FLOOD_CMD.replace("CPU", str(cpu)),
          file=sys.stderr)
    fl = flood(cpu, tmp)
    print("bench: the tracer watching every CPU beside a UDP flood on each", file=sys.stderr)
    rt = rate(tmp, "flood")
    print("bench: the tracer watching every CPU beside a switch storm on each", file=sys.stderr)
    rs = rate(tmp, "switches")

    def med(tool, k):
        return statistics.median(r[k] for r in rows[tool])
    return {"seconds": seconds, "rounds": rows, "flood": fl, "injected": inj, "rate": rt,
            "rate_switches": rs,
            "watch_cpu_pct": med("watch", "cpu_pct"), "trace_cpu_pct": med("trace", "cpu_pct"),
            "watch_front_pct": med("watch", "front_pct"),
            "slow_cpu_pct": med("watch_slow", "cpu_pct"),
            "slow_front_pct": med("watch_slow", "front_pct"),
            "ratio": statistics.median(w["cpu_pct"] / t["cpu_pct"] for w, t in
                                       zip(rows["watch"], rows["trace"]) if t["cpu_pct"]),
            "events_per_s": med("watch", "events_per_s"),
            "rss_growth_kb": max(r["rss_kb_end"] - r["rss_kb_start"] for r in rows["watch"]),
            "rss_kb": max(r["rss_kb_end"] for r in rows["watch"])}


def show(res, cpu):
    """Print the part; True when every goal is met."""
    ok_cost = res["watch_cpu_pct"] <= GOAL_PCT
    ok_drop = res["flood"]["dropped"] == 0
    print("jtr watch vs jtr trace, CPU %d beside a busy loop, %d x %d s (medians)"
          % (cpu, len(res["rounds"]["watch"]), res["seconds"]))
    print("  %-34s %10s %10s" % ("", "jtr watch", "jtr trace"))
    print("  %-34s %10.3f %10.3f" % ("% of one CPU (all its processes)", res["watch_cpu_pct"],
                                     res["trace_cpu_pct"]))
    print("  %.0f events/s on CPU %d; watch / trace CPU ratio %.2f; goal watch <= %.1f %%: %s"
          % (res["events_per_s"], cpu, res["ratio"], GOAL_PCT, "met" if ok_cost else "MISSED"))
    for what, k in (("scraped every second", ""), ("scraped every %g s" % SLOW_SCRAPE_S, "slow_")):
        total = res["watch_cpu_pct" if not k else k + "cpu_pct"]
        front = res["watch_front_pct" if not k else k + "front_pct"]
        print("  jtr watch %s: %.3f %% of one CPU, the front end %.3f and the tracer %.3f "
              "(user space goal <= %.1f %%: %s)" % (what, total, front, total - front,
                                                     RATE_GOAL_PCT, "met" if total <= RATE_GOAL_PCT
                                                     else "MISSED"))
    print("  jtr watch resident memory %d KiB, growth over a round at most %d KiB"
          % (res["rss_kb"], res["rss_growth_kb"]))
    inj = res["injected"]
    ok_inj = inj["counted"] == inj["spins"] and not inj["dropped"]
    print("jtr watch for %d s under injected load: %d of %d spins counted as preemptions by "
          "jtr-inject, %d dropped; resident memory %d KiB after 5 s, %d KiB at the end: %s"
          % (inj["seconds"], inj["counted"], inj["spins"], inj["dropped"], inj["rss_kb_start"],
             inj["rss_kb_end"], "met" if ok_inj else "MISSED"))
    fl = res["flood"]
    print("jtr watch beside a UDP flood: %.0f events/s, %d of %d dropped (goal 0): %s"
          % (fl["events_per_s"], fl["dropped"], fl["events"], "met" if ok_drop else "MISSED"))
    ok_rate = True
    for rt in (res["rate"], res["rate_switches"]):
        ok = rt["dropped"] == 0 and rt["cpu_pct"] <= RATE_GOAL_PCT
        storm = rt["load"] == "switches"
        if storm:
            ok = ok and rt["events_per_s"] >= RATE_GOAL
        ok_rate = ok_rate and ok
        print("jtr watch of %d CPUs beside %s on each: %.0f events/s%s for %.1f s, %d "
              "dropped (goal 0); the tracer's own threads %.3f %% of one CPU (goal <= %.1f %%): %s"
              % (rt["cpus"], LOADS[rt["load"]], rt["events_per_s"],
                 " (goal >= %.0f)" % RATE_GOAL if storm else "", rt["load_s"], rt["dropped"],
                 rt["cpu_pct"], RATE_GOAL_PCT, "met" if ok else "MISSED"))
        print("  its programs: %.1f ns an event against the floor's %.1f: %.2f x, weighted by "
              "runs (goal 1.5: %s); dearest: %s"
              % (rt["jtr_ns"], rt["floor_ns"], rt["weighted_ratio"],
                 "met" if rt["weighted_ratio"] <= 1.5 else "MISSED",
                 ", ".join("%s %.0f ns" % (tp, rt["tracepoints"][tp]["jtr_ns"])
                           for tp in rt["dearest"])))
    return ok_cost and ok_drop and ok_inj and ok_rate


def main():
    if os.geteuid() != 0:
        print("watch_bench: needs root (BPF)", file=sys.stderr)
        return 2
    cpu = int(os.environ.get("BENCH_CPU", max(os.sched_getaffinity(0))))
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    with tempfile.TemporaryDirectory(prefix="jtr-bench-") as tmp:
        res = measure(cpu, rounds, tmp)
    print(json.dumps(res))
    return 0 if show(res, cpu) else 1


if __name__ == "__main__":
    sys.exit(main())
