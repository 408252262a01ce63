# SPDX-License-Identifier: GPL-2.0-only
"""crosscheck - the attribution of a run against `perf sched timehist` of the same window.

`jtr run --cross-check` records the scheduler's events with `perf sched record`
beside the tracer and keeps them as sched.data in the results folder (see
trace/sched.py, which also reads them back with `perf sched timehist`, one
slice per time a task left a CPU); compare() sets those slices against the
attribution of every outlier (attribute(each=...): the parts each outlier was
charged to and the tasks of its task-preemption episodes).

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

from ..errors import UsageError
from ..trace import causes as C
from ..trace.sched import HOW_TO_RECORD, RESOLUTION_NS, TOOL
from ..trace.sched import NAME as SCHED_NAME
from ..units import fmt_ns as _fmt_ns

EXAMPLES = 20           # examples and tasks of each kind kept in result.json
PREEMPTION = C.TASK


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
        for _, start, length, parts, pids, *_ in outs:
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
