"""crosscheck - the attribution of a run against `perf sched timehist` of the same window.

`jtr run --cross-check` records the scheduler's events with `perf sched record
-k CLOCK_MONOTONIC -C CPUS` beside the tracer (SchedRecorder) and keeps them as
sched.data in the results folder; `jtr attribute --cross-check` (and jtr run
after attribution) reads it back with `perf sched timehist -C CPUS`, one line
per time a task left a CPU, and compares it with the attribution of every
outlier (attribute(each=...): the parts each outlier was charged to and the
tasks of its task-preemption episodes).

A timehist line "T [cpu] comm[tid/pid] wait delay run" is a slice: the task
ran on the CPU from its previous switch (T - run) to T. Times and run times
are printed in us (truncated), so a slice is known to RESOLUTION_NS either
way and overlaps are tested with that tolerance. Only the run's window on the
probe's CPUs counts (each run's start_mono_ns..end_mono_ns, cut to what
sched.data covers). On each CPU the probe's measuring thread is the task
that ran most in that window; it and the idle task are not "other tasks".

1. matched / attribution-only: every outlier charged (in part) to a task
   preemption names tasks by pid; it is matched when timehist shows each of
   them on that CPU in the outlier, attribution-only when one is missing.
2. timehist-only: a slice of another task in the window, at least min_ns long
   (default: the probe's outlier threshold, at least 1 us), overlapping an
   outlier whose attribution does not name that task (it went to a tick, "no
   kernel event", another task, ...). Slices that overlap no outlier, or are
   shorter than min_ns, are only counted in the totals.
3. totals: the time other tasks ran on the probe's CPUs per timehist against
   the time the attribution charged to task preemption (which includes the
   context switches and the interrupt that caused them), and the difference.
"""
import bisect
import os
import re
import shutil
import subprocess
import tempfile

from . import perftrace
from .errors import UsageError
from .units import fmt_ns as _fmt_ns

SCHED_NAME = "sched.data"
FILE_ROLE = "sched"
TOOL = "perf sched timehist"
RESOLUTION_NS = 1000    # timehist prints us
EXAMPLES = 20           # examples and tasks of each kind kept in result.json
SHOWN = 3               # ... and printed
PREEMPTION = "task preemption"
HOW_TO_RECORD = "record it with 'jtr run --cross-check'"
# "   12117.186312 [0001]  bash[6817/6774]   0.000   0.032   0.077" ("<idle>" has no [tid])
LINE = re.compile(r"^\s*(\d+)\.(\d{6})\s+\[(\d+)\]\s+(.*?)(?:\[(-?\d+)(?:/(-?\d+))?\])?"
                  r"\s+\d+\.\d+\s+\d+\.\d+\s+(\d+)\.(\d{3})\s*$")


class SchedRecorder(perftrace.PerfRecord):
    """perf sched record on the probe's CPUs, beside the tracer, into a temporary folder."""

    what = "perf sched record"

    def __init__(self, cpus_list):
        super().__init__(cpus_list, tempfile.mkdtemp(prefix="jtr-sched-"), SCHED_NAME)

    def command(self):
        return [perftrace.perf_path(), "sched", "record", "-q", "-k", "CLOCK_MONOTONIC",
                "-C", self.cpus, "-o", self.data]

    def move_into(self, outdir):
        """sched.data into the results folder."""
        shutil.move(self.data, os.path.join(outdir, SCHED_NAME))
        self.cleanup()


def record_unavailable():
    """Why jtr run cannot record sched.data here, or None."""
    why = perftrace.unavailable()
    return "--cross-check needs perf sched record: %s" % why if why else None


def sched_data_path(result_dir, given=None):
    """The sched.data to compare with: @given, the one result.json names, or
    RESULTS_DIR/sched.data; UsageError with the fix when there is none or no perf."""
    if given is not None:
        p = os.path.join(given, SCHED_NAME) if os.path.isdir(given) else given
        if not os.path.isfile(p):
            raise UsageError("--sched-data %s: no such file" % given)
    else:
        from .result import load_result
        name = load_result(result_dir).get("files", {}).get(FILE_ROLE) or SCHED_NAME
        p = os.path.join(result_dir, name)
        if not os.path.isfile(p):
            raise UsageError("--cross-check: %s: no such file; %s, or give --sched-data PATH"
                             % (p, HOW_TO_RECORD))
    if not perftrace.perf_path():
        raise UsageError("--cross-check needs perf sched timehist: perf is not installed "
                         "(Debian: apt-get install linux-perf)")
    return p


def timehist_slice(line):
    """One line of `perf sched timehist` as a slice (cpu, tid, pid, comm, begin_ns,
    end_ns), or None for a line that is not one; tid -1: a task it cannot place."""
    m = LINE.match(line)
    if not m:
        return None
    sec, usec, cpu, comm, tid, pid, ms, us = m.groups()
    comm = comm.strip()
    end = int(sec) * 1_000_000_000 + int(usec) * 1000
    run = int(ms) * 1_000_000 + int(us) * 1000
    if tid is None:
        # a task perf has no name for prints as ":TID" (perf 6.1: a thread of
        # another pid namespace), the idle task as "<idle>"
        bare = re.fullmatch(r":(\d+)", comm)
        tid = pid = int(bare.group(1)) if bare else 0 if comm == "<idle>" else -1
    tid = int(tid)
    return (int(cpu), tid, int(pid) if pid is not None else tid, comm, end - run, end)


def read_timehist(path, cpus):
    """Slices (cpu, tid, pid, comm, begin_ns, end_ns) of `perf sched timehist` on @cpus,
    in time order per CPU; tid 0 is the idle task."""
    cmd = [perftrace.perf_path(), "sched", "timehist", "-i", path]
    if cpus:
        cmd += ["-C", ",".join(str(c) for c in sorted(cpus))]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors="replace")
    slices = [s for s in map(timehist_slice, p.stdout) if s]
    err = p.stderr.read()
    if p.wait() != 0:
        lines = [x for x in err.splitlines() if x.strip()]
        raise UsageError("perf sched timehist -i %s failed: %s; %s" % (
            path, lines[-1] if lines else "exit %d" % p.returncode, HOW_TO_RECORD))
    slices.sort(key=lambda s: (s[0], s[5]))
    return slices


def read_switches(path):
    """What timehist does not say right, from the sched_switch records in @path
    (perf script, read as the perf backend reads it): pid -> comm (prev_comm,
    next_comm), and the pid of each thread that was leaving for good, by (cpu,
    time as timehist prints it). timehist names tasks from perf's thread table,
    which misses names given before the recording or on CPUs it did not record
    (the probe's thread shows as ':TID'), and it shows an exiting thread's last
    slice as ':-1[-1/PID]' (the sample's tid; the record's prev_pid is right)."""
    p = subprocess.Popen([perftrace.perf_path(), "script", "-i", path, "--ns", "-F",
                          "tid,cpu,time,event,trace"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, errors="replace")
    comms, exits = {}, {}
    for line in p.stdout:
        m = perftrace.LINE.match(line)
        if not m or m.group(6) != "sched_switch":
            continue
        rest = m.group(7)
        f = dict(perftrace.FIELD.findall(rest))
        for side in ("prev", "next"):
            comm = perftrace._comm(rest, side + "_comm")
            if comm and f.get(side + "_pid", "").isdigit():
                comms[int(f[side + "_pid"])] = comm
        if m.group(1) == "-1" and f.get("prev_pid", "").isdigit():
            exits[(int(m.group(2)), int(m.group(3)) * 1_000_000_000 +
                   int(m.group(4)) // 1000 * 1000)] = int(f["prev_pid"])
    p.wait()
    return comms, exits


def _task(tid, comm):
    """'kworker/1:1[123]'."""
    return "%s[%d]" % (comm, tid) if tid > 0 else comm


def _charged(parts):
    """'timer tick: local timer' for the largest part of an outlier."""
    return "%s: %s" % parts[0][:2] if parts else "nothing"


def _preempt_ns(parts):
    """The ns of an outlier charged to task preemption."""
    return sum(ns for cat, _, ns in parts if cat == PREEMPTION)


def _windows(result):
    """cpu -> (start_mono_ns, end_mono_ns, outlier threshold) of the result's runs."""
    wins = {}
    for r in result.get("runs", []):
        if r.get("cpu") is None or r.get("start_mono_ns") is None:
            continue
        lo, hi = r["start_mono_ns"], r.get("end_mono_ns") or r["start_mono_ns"]
        thr = (r.get("outliers") or {}).get("threshold_ns") or 0
        w = wins.get(r["cpu"])
        wins[r["cpu"]] = (min(lo, w[0]), max(hi, w[1]), max(thr, w[2])) if w else (lo, hi, thr)
    return wins


class _Tally:
    """What compare() finds, over all CPUs."""

    def __init__(self):
        self.matched = {"count": 0, "ns": 0, "slices": 0}
        self.attr_only, self.th_only = [], []
        self.totals = {"timehist_ns": 0, "timehist_slices": 0,
                       "outside_outliers": {"count": 0, "ns": 0},
                       "short": {"count": 0, "ns": 0}, "attribution_ns": 0}
        self.unknown = [0, 0]
        self.attr_tasks, self.th_tasks = {}, {}     # tid -> [comm, count, ns]

    @staticmethod
    def _task(tasks, tid, comm, ns):
        t = tasks.setdefault(tid, [comm, 0, 0])
        t[1] += 1
        t[2] += ns

    def kind(self, items, tasks):
        """A kind of disagreement for result.json: count, time, its tasks (most
        time first) and the first examples."""
        rows = sorted(tasks.items(), key=lambda kv: (-kv[1][2], kv[0]))
        return {"count": len(items), "ns": sum(x["ns"] for x in items),
                "tasks": [{"tid": tid, "comm": c, "count": n, "ns": ns}
                          for tid, (c, n, ns) in rows[:EXAMPLES]],
                "examples": sorted(items, key=lambda x: x["start_ns"])[:EXAMPLES]}

    def outliers(self, cpu, outs, sl, tol, comms):
        """1. Each outlier charged to a task preemption: does timehist show every
        task it names on the CPU in the outlier?"""
        ends = [s[5] for s in sl]
        for _, start, length, parts, pids in outs:
            pre = _preempt_ns(parts)
            self.totals["attribution_ns"] += pre
            if not pids:
                continue
            seen = set()
            k = bisect.bisect_left(ends, start - tol)
            while k < len(sl) and sl[k][4] <= start + length + tol:
                seen.add(sl[k][1])
                k += 1
            missing = [p for p in dict.fromkeys(pids) if p not in seen]
            if not missing:
                self.matched["count"] += 1
                self.matched["ns"] += pre
            else:
                self.attr_only.append({
                    "cpu": cpu, "start_ns": start, "length_ns": length, "ns": pre,
                    "charged": [n for c, n, _ in parts if c == PREEMPTION],
                    "missing_pids": missing})
                for p in missing:
                    self._task(self.attr_tasks, p, comms.get(p, ""), pre)

    def slices(self, cpu, outs, sl, lo, hi, probe, tol, min_ns, comms):
        """2. Each slice of another task: is it charged to that task in the
        outliers it overlaps? And 3: the time other tasks ran."""
        out_ends = [o[1] + o[2] for o in outs]
        tot = self.totals
        for _, tid, pid, comm, b, e in sl:
            d = min(e, hi) - max(b, lo)
            if tid < 0:     # an exiting thread read_switches() could not name
                self.unknown[0] += 1
                self.unknown[1] += d
                continue
            if tid in (0, probe):
                continue
            tot["timehist_ns"] += d
            tot["timehist_slices"] += 1
            k = bisect.bisect_left(out_ends, b - tol)
            over = []
            while k < len(outs) and outs[k][1] <= e + tol:
                over.append(outs[k])
                k += 1
            if any(tid in o[4] for o in over):
                self.matched["slices"] += 1
            elif not over:
                tot["outside_outliers"]["count"] += 1
                tot["outside_outliers"]["ns"] += d
            elif e - b < min_ns:
                tot["short"]["count"] += 1
                tot["short"]["ns"] += d
            else:
                o = max(over, key=lambda x: min(e, x[1] + x[2]) - max(b, x[1]))
                self.th_only.append({
                    "cpu": cpu, "tid": tid, "pid": pid, "comm": comms.get(tid, comm),
                    "start_ns": b, "end_ns": e, "ns": d, "outlier_start_ns": o[1],
                    "outlier_length_ns": o[2], "charged_to": _charged(o[3])})
                self._task(self.th_tasks, tid, comms.get(tid, comm), d)


def compare(result, outcomes, slices, min_ns=None, sched_name=SCHED_NAME, lost=0, comms=None):
    """The cross_check section: @outcomes from attribute(each=...), @slices from
    read_timehist(), both restricted to the runs' windows on their CPUs; @lost
    is the count of events perf lost recording them, @comms names by pid."""
    comms = comms or {}
    wins = _windows(result)
    if min_ns is None:
        min_ns = max([RESOLUTION_NS] + [w[2] for w in wins.values()])
    tol = RESOLUTION_NS
    by_cpu = {}
    for s in slices:
        by_cpu.setdefault(s[0], []).append(s)
    t = _Tally()
    warnings, probes, spans, gaps = [], [], [], []
    for cpu in sorted(wins):
        sl = by_cpu.get(cpu, [])
        if not sl:
            gaps.append("no scheduler events on CPU %d" % cpu)
            continue
        # compare only where both cover: the run's window and what sched.data holds
        lo, hi = max(wins[cpu][0], sl[0][5]), min(wins[cpu][1], sl[-1][5])
        if hi <= lo:
            gaps.append("it does not cover the run on CPU %d (recorded at another time?)"
                        % cpu)
            continue
        if lo > wins[cpu][0] or hi < wins[cpu][1]:
            warnings.append("it covers %s of the run on CPU %d: only that is compared" % (
                _fmt_ns(hi - lo), cpu))
        spans.append((lo, hi))
        sl = [s for s in sl if s[5] > lo and s[4] < hi]
        # the probe's thread: the task that ran most
        ran = {}
        for s in sl:
            ran[s[1]] = ran.get(s[1], 0) + min(s[5], hi) - max(s[4], lo)
        probe = max((tid for tid in ran if tid > 0), key=ran.get, default=None)
        if probe is not None:
            comm = next(s[3] for s in sl if s[1] == probe)
            probes.append({"cpu": cpu, "tid": probe, "comm": comms.get(probe, comm)})
        outs = sorted(o for o in outcomes if o[0] == cpu and lo <= o[1] <= hi)
        t.outliers(cpu, outs, sl, tol, comms)
        t.slices(cpu, outs, sl, lo, hi, probe, tol, min_ns, comms)
    if not spans:
        raise UsageError("%s: nothing to compare: %s; %s" % (
            sched_name, "; ".join(gaps) or "the result has no run on a pinned CPU",
            HOW_TO_RECORD))
    warnings[:0] = [g + ": not compared there" for g in gaps]
    if t.unknown[0]:
        warnings.append("%d slices (%s) of exiting threads perf could not name (timehist "
                        "shows ':-1'): not compared" % (t.unknown[0], _fmt_ns(t.unknown[1])))
    if lost:
        warnings.append("perf lost %d scheduler events (its buffer was full): some "
                        "disagreements may be theirs" % lost)
    t.totals["difference_ns"] = t.totals["attribution_ns"] - t.totals["timehist_ns"]
    n = len(t.attr_only) + len(t.th_only)
    return {
        "tool": TOOL, "sched_data": sched_name, "cpus": sorted(wins),
        "start_ns": min(s[0] for s in spans), "end_ns": max(s[1] for s in spans),
        "min_ns": min_ns, "tolerance_ns": tol, "probe_tasks": probes,
        "matched": t.matched,
        "attribution_only": t.kind(t.attr_only, t.attr_tasks),
        "timehist_only": t.kind(t.th_only, t.th_tasks),
        "totals": t.totals, "disagreements": n,
        "verdict": "agree" if n == 0 else "%d disagreement%s" % (n, "" if n == 1 else "s"),
        "warnings": warnings,
    }


def check(result, outcomes, sched_path, min_ns=None, sched_name=None):
    """Read @sched_path with timehist and compare it with @outcomes (see compare())."""
    cpus = sorted({r["cpu"] for r in result.get("runs", []) if r.get("cpu") is not None})
    slices = read_timehist(sched_path, cpus)
    comms, exits = read_switches(sched_path)
    for i, s in enumerate(slices):
        pid = exits.get((s[0], s[5])) if s[1] < 0 else None
        if pid is not None:
            slices[i] = (s[0], pid, pid, comms.get(pid, s[3])) + s[4:]
    return compare(result, outcomes, slices, min_ns=min_ns, sched_name=sched_name or sched_path,
                   lost=perftrace.lost_events(sched_path), comms=comms)


def format_lines(cc, t0):
    """The cross-check for people: counts and times, a few examples, the verdict;
    times of the examples in s from @t0 (the run's start)."""
    from .attribute import _align

    span = (cc["end_ns"] - cc["start_ns"]) / 1e9
    probes = ", ".join("%s on CPU %d" % (_task(p["tid"], p["comm"]), p["cpu"])
                       for p in cc["probe_tasks"]) or "none found"
    t, m, a, h = cc["totals"], cc["matched"], cc["attribution_only"], cc["timehist_only"]
    lines = ["cross-check with %s (%s, %.2f s; the probe's thread: %s):"
             % (TOOL, cc["sched_data"], span, probes)]
    rows = [("", "count", "time", ""),
            ("matched", str(m["count"]), _fmt_ns(m["ns"]),
             "outliers charged to task preemption; timehist shows those tasks in them"),
            ("attribution-only", str(a["count"]), _fmt_ns(a["ns"]),
             "outliers charged to a task timehist does not show in them"),
            ("timehist-only", str(h["count"]), _fmt_ns(h["ns"]),
             "slices of other tasks (>= %s) in outliers charged to something else"
             % _fmt_ns(cc["min_ns"]))]
    lines += ["  " + x for x in _align(rows, (False, True, True, False))]
    d = t["difference_ns"]
    out, short = t["outside_outliers"], t["short"]
    lines.append("  other tasks ran %s in %d slices per timehist; the attribution charged %s "
                 "to task preemption (%s %s)" % (
                     _fmt_ns(t["timehist_ns"]), t["timehist_slices"],
                     _fmt_ns(t["attribution_ns"]), _fmt_ns(abs(d)), "more" if d >= 0 else "less"))
    if out["count"] or short["count"]:
        lines.append("  not compared: %d slices (%s) outside outliers, %d (%s) shorter than %s"
                     % (out["count"], _fmt_ns(out["ns"]), short["count"],
                        _fmt_ns(short["ns"]), _fmt_ns(cc["min_ns"])))
    for label, k in (("attribution-only", a), ("timehist-only", h)):
        if k["tasks"]:
            lines.append("  %s by task: %s" % (label, ", ".join(
                "%s %d× %s" % (_task(x["tid"], x["comm"] or "pid"), x["count"], _fmt_ns(x["ns"]))
                for x in k["tasks"][:SHOWN])))
    for x in a["examples"][:SHOWN]:
        lines.append("  attribution-only +%.6f s cpu%d %s: %s; timehist shows no pid %s there"
                     % ((x["start_ns"] - t0) / 1e9, x["cpu"], _fmt_ns(x["length_ns"]),
                        ", ".join(x["charged"]), ", ".join(map(str, x["missing_pids"]))))
    for x in h["examples"][:SHOWN]:
        lines.append("  timehist-only    +%.6f s cpu%d %s ran %s in a %s outlier charged to %s"
                     % ((x["start_ns"] - t0) / 1e9, x["cpu"], _task(x["tid"], x["comm"]),
                        _fmt_ns(x["end_ns"] - x["start_ns"]), _fmt_ns(x["outlier_length_ns"]),
                        x["charged_to"]))
    lines += ["warning: " + w for w in cc["warnings"]]
    lines.append("cross-check: %s" % cc["verdict"])
    return lines
