# SPDX-License-Identifier: GPL-2.0-only
"""wake - every late timer wake-up of jtr wake taken apart, like rtla timerlat's
auto-analysis, from the events jtr's tracer recorded beside it.

Input: a jtr wake result (each run's CPU and measuring thread, "tid"), its
outliers (cpu, intended wake-up time, latency; CLOCK_MONOTONIC ns) and the event
log of the same CPUs. Output: the "attribution" section of result.json with a
"decomposition" part, rows for decomposition.csv, and the usual causes table.

Method (docs/attribution.md, "jtr wake: the decomposition"). For an outlier
intended at T0 with latency L, the thread ran at Tu = T0 + L (the probe's TSC). On
its CPU the tracer saw:
  Tv  the entry of the interrupt whose hrtimer woke the thread (the hrtimer
      entry enclosing the sched_waking of the thread's tid, and the vector
      entry enclosing that);
  Tx  that interrupt's exit;
  Ts  the sched_switch that put the thread on the CPU.
The CPU's events from LOOKBACK_NS before T0 are swept in time order with one
nesting stack, so every instant belongs to exactly one context: the innermost
interrupt (hardirq, vector, softirq, NMI: an NMI is placed at its end less its
duration) or, outside interrupts, the task running then. Each instant of
[T0, max(Tu, Ts)] goes to one component:
  irq_latency  before Tv in task context: hardware, the hypervisor or
               interrupts off held the timer interrupt (split into host
               preemption (steal) where the log has the host's steal counter);
  timer_irq    the waking interrupt itself, the hrtimers it ran included;
  irq, softirq, nmi
               any other interrupt context, whenever it ran (before Tv it
               delayed the timer interrupt; after Tx the thread);
  blocking     between Tx and Ts, a task of the thread's priority or higher
               (kernel prio value <= the thread's) that kept the CPU, or one of
               lower priority that kept it longer than SCHED_ALLOWANCE_NS (a
               non-preemptible section): the blocking thread, by comm and pid;
  scheduling   between Tx and Ts, the idle task, or a lower-priority task
               preempted within SCHED_ALLOWANCE_NS: the scheduler's pick and the
               switch;
  stall        between Tx and Ts, the idle task longer than STALL_NS before a
               real-time thread the RT runqueue's throttling cannot have held
               (no event on the CPU: the scheduler takes microseconds to leave
               idle for it): the machine held the CPU (VM exits, SMI or the
               hardware; the host's preemption where its steal counter moved);
  return       after Ts: the switch's second half and the return to user space;
  own          no wake-up in the window (the period had passed before the thread
               could sleep: a missed period): the thread's own time;
  unaccounted  L less every component: events missing (dropped, a wake-up path
               not found, a switch the kernel did not record: _sweep), or,
               negative, the tracer's switch-in after the probe's own reading
               (the two clocks apart by more than TOLERANCE_NS).
The components add up to L by construction; unaccounted says how much of that
rests on the timeline. The dominant component of an outlier is the largest
(interference grouped by kind); its primary cause the largest single part.
"""
import bisect
import heapq

from ..errors import UsageError
from ..results.figures import measured_ns
from ..trace import causes as C
from ..trace import events as ev
from ..units import fmt_ns
from . import steal as host_steal
from .attribute import (
    DEFAULT_SLACK_NS,
    per_outlier,
    softirq_name,
    task_fields,
    task_text,
    tracer_section,
    tracer_warnings,
    vector_desc,
)
from .throttle import Throttle

LOOKBACK_NS = 200_000       # open interrupts at the intended time are found this far back
LOOKAHEAD_NS = 50_000       # a switch-in this far after the probe's reading is still found
SCHED_ALLOWANCE_NS = 30_000  # a lower-priority task holding the CPU longer than this blocks
# the idle task keeping a woken real-time thread off longer than this, nothing on
# the CPU meanwhile, is the machine's stall (leaving idle for it took the
# scheduler at most 28 us in the runs of docs/attribution.md)
STALL_NS = 100_000
# normal tasks that held a woken real-time thread this long in all: the RT
# runqueue's throttle (a throttle lasts the rest of its period, 50 ms here; a
# kernel without full preemption can hold it a millisecond in a system call)
THROTTLE_HOLD_NS = 5_000_000
TOLERANCE_NS = 1000         # |unaccounted| of a whole timeline, at most (the clocks' error)
WORST_EVENTS = 16           # events listed per worst outlier (the schema's limit)
WORST_TAIL = 6              # of them, the last ones: the switch-in and after
MAX_HRTIMERS = 4            # hrtimers named in a timer IRQ's chain
RULE = ("timeline T0 -> timer IRQ -> switch-in -> run; each instant to its innermost "
        "context")

# the components in timeline order: key, label, cause (category, name) when fixed
COMPONENTS = (
    ("irq_latency", "timer IRQ latency", None),
    ("timer_irq", "timer IRQ", (C.TIMER_IRQ, "local timer")),
    ("irq", "IRQ interference", None),
    ("softirq", "softirq interference", None),
    ("nmi", "NMI interference", None),
    ("blocking", "blocking thread", None),
    ("scheduling", "scheduling and the switch", (C.WAKE_PATH, "scheduling and the switch")),
    ("stall", "machine stall (no kernel event)", C.HOST_OTHER),
    ("return", "return to user space", (C.WAKE_PATH, "return to user space")),
    ("own", "missed period (had not slept)", (C.WAKE_PATH,
                                              "missed period: the thread had not slept")),
    ("unaccounted", "unaccounted", (C.UNACCOUNTED, "events missing or clocks apart")),
    # not on the timeline: the host's steal measured in it, taken first
    ("host", "host preemption (steal)", C.HOST_STEAL),
)
LABELS = {k: label for k, label, _ in COMPONENTS}
ORDER = [k for k, _, _ in COMPONENTS]
IRQ_LATENCY = {host_steal.UNMEASURED: (C.IRQ_LATENCY,
                                       "hardware, hypervisor or interrupts off"),
               host_steal.HOST: (C.IRQ_LATENCY, "host preemption (steal)"),
               host_steal.OTHER: (C.IRQ_LATENCY, "VM exits, SMI, hardware or "
                                  "interrupts off")}
CSV_NAME = "decomposition.csv"
CSV_HEAD = ("cpu,start_ns,latency_ns," + ",".join(k + "_ns" for k in ORDER) +
            ",dominant,blocking_task")
IDLE = 0


class _Ctx:
    """An interrupt context on the nesting stack."""
    __slots__ = ("group", "key", "category", "name", "links", "own", "begin", "end")

    def __init__(self, group, key, category, name, begin):
        self.group, self.key, self.category, self.name = group, key, category, name
        self.links, self.own, self.begin, self.end = [], False, begin, None


class _Tasks:
    """What the window's events say of tasks: comm and prio per pid."""

    def __init__(self):
        self.comm, self.prio = {}, {}

    def note(self, pid, comm, prio):
        if comm and pid not in self.comm:
            self.comm[pid] = comm
        if prio is not None and pid not in self.prio:
            self.prio[pid] = prio

    def text(self, pid):
        return task_text([self.comm.get(pid, ""), pid, self.prio.get(pid), []])


# records whose pid is not taken as the task seen running: an NMI is placed at
# its start by its duration, and the steal counter's and a task's groups'
# records are the tracer's own notes beside another event's
_NOT_SEEN = frozenset((ev.NMI, ev.STEAL, ev.TASK))


def _running(e):
    """The task an event shows on its CPU after it: a switch's next, else the
    record's own (the task current when it was made)."""
    return e.a >> 32 if e.type == ev.SWITCH else e.pid


def _sweep(events, lo, meta, before=None):
    """The window swept: slices [(begin, end, context or pid)] in time order, the
    contexts still open at its end, the task running then, the end of the last
    slice, the wake-ups [(ts, tid, inside an hrtimer, the innermost vector
    context or None)] and the tasks (_Tasks). @before: the CPU's last event
    before the window, if any (the task running at its start).

    A hole in the kernel's events: an event made by another task than the one
    the last event showed running (a switch's prev that is not the last
    switch's next), with no switch between. The kernel emitted no record of the
    switch (not a drop: the tracer counts those; on this guest a host agent's
    thread comes and goes so, and ftrace misses the same switches); who ran
    since the last event that showed the task is not known, and that time is
    no task's: its slices' owner is None, which the decomposition leaves
    unaccounted. Before, the task last seen was charged with all of it, and the
    next period's outlier charged the task the hole ended with for the same
    instants (the same 2 ms 'blocked by' two tasks)."""
    syms = meta.get("symbols", {}) if meta else {}
    vectors = meta.get("vectors", ev.VECTOR_KINDS) if meta else ev.VECTOR_KINDS
    marks = []
    for e in events:
        if e.type == ev.NMI:
            marks.append((max(lo, e.ts_ns - e.b), 0, e))
            marks.append((e.ts_ns, 1, e))
        else:
            marks.append((e.ts_ns, 1, e))
    marks.sort(key=lambda m: (m[0], m[1]))
    stack, slices, wakes, tasks = [], [], [], _Tasks()
    if before is not None and before.type not in _NOT_SEEN:
        current = _running(before)
    else:
        current = events[0].pid if events else None
    t_prev = seen = lo
    open_hrtimer = {}

    def hole(ts):
        """No task known to have run since @seen: its task slices are no one's."""
        for i in range(len(slices) - 1, -1, -1):
            b, end, o = slices[i]
            if end <= seen:
                break
            if not isinstance(o, _Ctx):
                if b < seen:
                    slices[i:i + 1] = [(b, seen, o), (seen, end, None)]
                else:
                    slices[i] = (b, end, None)

    def owner():
        return stack[-1] if stack else current

    def pop(group, key, ts, category, name):
        for k in range(len(stack) - 1, -1, -1):
            c = stack[k]
            if c.group == group and c.key == key:
                c.end = ts
                del stack[k:]
                return c
        # an exit whose entry came before the look-back: the context was open
        # from the window's start, and the time swept so far in task context
        # was its (a timer interrupt the host held 30 ms: the periods that
        # passed in it were charged to the task it had interrupted)
        c = _Ctx(group, key, category, name, lo)
        c.end = ts
        for i, (b, end, o) in enumerate(slices):
            if not isinstance(o, _Ctx):
                slices[i] = (b, end, c)
        return None

    for t, phase, e in marks:
        if t > t_prev:
            slices.append((t_prev, t, owner()))
            t_prev = t
        typ = e.type
        if typ == ev.NMI:
            if phase == 0:
                key = "0x%x" % e.a
                stack.append(_Ctx("nmi", e.a, C.NMI, syms.get(key, key), t))
            else:
                key = "0x%x" % e.a
                pop("nmi", e.a, t, C.NMI, syms.get(key, key))
        elif typ == ev.IRQ_ENTRY:
            stack.append(_Ctx("irq", e.a, C.HARDIRQ, C.irq(e.a, e.text), t))
        elif typ == ev.IRQ_EXIT:
            pop("irq", e.a, t, C.HARDIRQ, C.irq(e.a, e.text))
        elif typ == ev.VEC_ENTRY:
            cat, name, _ = vector_desc(ev.vector_kind(vectors, e.b))
            stack.append(_Ctx("vec", e.a, cat, name, t))
        elif typ == ev.VEC_EXIT:
            pop("vec", e.a, t, *vector_desc(ev.vector_kind(vectors, e.b))[:2])
        elif typ == ev.SOFTIRQ_ENTRY:
            stack.append(_Ctx("softirq", e.a, C.SOFTIRQ, softirq_name(e.a), t))
        elif typ == ev.SOFTIRQ_EXIT:
            pop("softirq", e.a, t, C.SOFTIRQ, softirq_name(e.a))
        elif typ == ev.HRTIMER_ENTRY:
            key = "0x%x" % e.b
            open_hrtimer[e.a] = (t, syms.get(key, key))
        elif typ == ev.HRTIMER_EXIT:
            began, fn = open_hrtimer.pop(e.a, (None, None))
            vec = next((c for c in reversed(stack) if c.group == "vec"), None)
            if vec is not None and began is not None:
                vec.links.append((fn, t - began))
        elif typ in (ev.WAKING, ev.WAKEUP):
            tasks.note(e.a, e.text, e.b >> 32)
            vec = next((c for c in reversed(stack) if c.group == "vec"), None)
            wakes.append((t, e.a, bool(open_hrtimer), vec))
        elif typ == ev.SWITCH:
            prev, nxt = e.a & 0xffffffff, e.a >> 32
            tasks.note(prev, e.prev_comm, e.b & 0xffff)
            tasks.note(nxt, e.next_comm, (e.b >> 16) & 0xffff)
            if prev != current:
                hole(t)
            current, seen = nxt, t
            continue
        if typ in _NOT_SEEN:
            continue
        if e.pid != current:
            hole(t)
        current, seen = e.pid, t
    return slices, stack, current, t_prev, wakes, tasks


def _timeline(cpu, start, length, tid, log, slack_ns):
    """One outlier's timeline: points {Tv, Tx, Ts} (those found), the slices up to
    max(Tu, Ts), the events, the tasks, and whether the thread's wake-up was seen."""
    hi = start + length
    evs = log.window(cpu, start - LOOKBACK_NS, hi + max(slack_ns, LOOKAHEAD_NS))
    slices, stack, current, t_end, wakes, tasks = _sweep(
        evs, start - LOOKBACK_NS, log.meta, log.last_before(cpu, start - LOOKBACK_NS))
    # the wake-up of this period: the thread's first wake-up at or after T0
    wake = next((w for w in wakes if w[1] == tid and w[0] >= start - slack_ns), None)
    pts = {}
    if wake is not None:
        vec = wake[3]
        if vec is not None and wake[2]:
            vec.own = True
            pts["Tv"] = vec.begin
            pts["Tx"] = vec.end if vec.end is not None else wake[0]
        else:
            pts["Tv"] = pts["Tx"] = wake[0]
    # the switch-in: the first one after the wake-up (or, with none, the last one
    # before the thread ran)
    switch_ts = None
    after = pts.get("Tx", start)
    for e in evs:
        if e.type == ev.SWITCH and e.a >> 32 == tid and e.ts_ns >= after - (
                0 if wake else slack_ns):
            switch_ts = e.ts_ns
            if wake is not None:
                break
        if wake is None and e.ts_ns > hi:
            break
    if switch_ts is not None and (wake is not None or start <= switch_ts <= hi + slack_ns):
        # a switch-in after the probe's own reading (by up to LOOKAHEAD_NS) is kept:
        # the clocks' disagreement shows as negative unaccounted time
        pts["Ts"] = switch_ts
    end = max(hi, pts.get("Ts", hi))
    if end > t_end:
        slices.append((t_end, end, stack[-1] if stack else current))
    return pts, slices, evs, tasks, wake is not None


def _segments(start, length, tid, probe_prio, pts, slices, tasks, woken, throttled=None):
    """The outlier's timeline as labelled segments [(begin, end, component, cause
    key or None)] within [start, max(Tu, Ts)] (what no segment covers is
    unaccounted), and the hrtimers the timer IRQ ran [(function, ns)].
    @throttled: RT throttling's cause key when the thread is a real-time one (the
    CPU left idle that long after its wake-up can only be the kernel throttling
    the RT runqueue), else None; a real-time thread the idle task kept waiting
    longer than STALL_NS without it is the machine's stall."""
    hi = start + length
    tv, tx, ts = pts.get("Tv"), pts.get("Tx"), pts.get("Ts")
    segs, links, held = [], [], []
    end = max(hi, ts or hi)
    for b, e, o in slices:
        b, e = max(b, start), min(e, end)
        if e <= b:
            continue
        if isinstance(o, _Ctx):
            if o.own:
                segs.append((b, e, "timer_irq", None))
                links = o.links
            else:
                segs.append((b, e, o.group if o.group != "vec" else "irq",
                             (o.category, o.name)))
            continue
        pid = o
        # task context: where on the timeline
        for lo_, hi_, what in _task_spans(start, end, tv, tx, ts, woken):
            s0, s1 = max(b, lo_), min(e, hi_)
            if s1 <= s0:
                continue
            if pid is None or (what == "own" and pid != tid):
                continue            # no event says who ran: left unaccounted
            if what == "blocked":
                if pid == tid:
                    what = "scheduling" if woken else "own"
                else:
                    held.append((s0, s1, pid))
                    continue
            segs.append((s0, s1, what, None))
    # the tasks that ran while the thread waited to: a blocking thread if it may
    # hold the CPU against it (its priority or higher), or if it held it longer
    # than a preemption takes (a non-preemptible section, or a priority it had
    # then and not at the switch the log shows); the idle task is the
    # scheduling, unless it kept a real-time thread waiting that long (RT
    # throttling where it can have throttled, else past STALL_NS the machine:
    # nothing on the CPU ran, the host or the hardware held it); a normal task
    # that held a real-time thread that long is the throttle too (the fair
    # server runs the normal tasks it starved) where the kernel can have throttled
    total = {}
    for s0, s1, pid in held:
        total[pid] = total.get(pid, 0) + s1 - s0
    normal = sum(v for pid, v in total.items() if pid != IDLE and
                 (tasks.prio.get(pid) or 0) >= C.RT_PRIO_END)
    rt = probe_prio is not None and probe_prio < C.RT_PRIO_END
    for s0, s1, pid in held:
        prio = tasks.prio.get(pid)
        long = total[pid] > SCHED_ALLOWANCE_NS
        if pid == IDLE:
            if long and throttled:
                segs.append((s0, s1, "blocking", throttled))
            elif rt and total[pid] > STALL_NS:
                segs.append((s0, s1, "stall", None))
            else:
                segs.append((s0, s1, "scheduling", None))
        elif throttled and normal >= THROTTLE_HOLD_NS and prio is not None and \
                prio >= C.RT_PRIO_END:
            segs.append((s0, s1, "blocking", throttled))
        elif long or prio is None or probe_prio is None or prio <= probe_prio:
            segs.append((s0, s1, "blocking",
                         (C.TASK, C.Task(tasks.comm.get(pid, ""), pid, prio))))
        else:
            segs.append((s0, s1, "scheduling", None))
    segs.sort()
    return segs, links


def _sum(segs, lo, hi):
    """{component: ns} and {cause key: ns} of the segments inside [lo, hi] (no
    unaccounted: what no segment covers is the caller's to count)."""
    comp = dict.fromkeys(ORDER, 0)
    parts = {}
    for b, e, what, key in segs:
        b, e = max(b, lo), min(e, hi)
        if e <= b:
            continue
        comp[what] += e - b
        if key is not None:
            parts[key] = parts.get(key, 0) + e - b
    return comp, parts


def _components(start, length, tid, probe_prio, pts, slices, tasks, woken, throttled=None,
                readings=(), lo=None):
    """{component: ns}, {(category, name): ns} of the interference, the blocking
    tasks and RT throttling, and the hrtimers the timer IRQ ran, of the latency
    [lo, Tu] (lo: the intended time by default; later, to count only what an
    earlier outlier did not cover). The components add up to Tu - lo:
    unaccounted is what no event closed (negative: the tracer's switch-in after
    the probe's own reading). The host's steal is taken first (component host):
    each reading whose span (prev, ts] overlaps [lo, Tu] takes up to that
    overlap from what lies in it, in proportion."""
    segs, links = _segments(start, length, tid, probe_prio, pts, slices, tasks, woken,
                            throttled)
    tu = start + length
    lo = start if lo is None else lo
    comp, parts = _sum(segs, lo, max(tu, pts.get("Ts") or tu))
    comp["unaccounted"] = (tu - lo) - sum(comp.values())
    for ts, prev, a, b in readings:
        r0, r1 = max(prev, lo), min(ts, tu)
        if r1 <= r0 or a <= b:
            continue
        span = r1 - r0
        take = min(a - b, span, (tu - lo) - comp["host"])
        if take <= 0:
            continue
        c_in, _ = _sum(segs, r0, r1)
        c_in["unaccounted"] = max(0, span - sum(c_in.values()))
        groups = _groups(segs, r0, r1)
        # cumulative rounding: the components' cuts add up to @take and each
        # component's cut is shared among its causes to the ns, so no ns is made or
        # lost and an outlier's parts still add up to its length (a cut rounded per
        # component once left unaccounted at -1 ns and the parts 1 ns over)
        whole = sum(c_in.values())
        cum = 0
        for k, v in c_in.items():
            before, cum = cum, cum + v
            cut = take * cum // whole - take * before // whole
            comp[k] -= cut
            inner = 0
            for key, ns in groups.get(k, ()):
                was, inner = inner, inner + ns
                parts[key] = parts.get(key, 0) - (cut * inner // v - cut * was // v)
        comp["host"] += take
    parts = {k: v for k, v in parts.items() if v > 0}
    return comp, parts, links


def _overlapping(readings, keys, lo, hi):
    """The steal readings of a CPU (in time order, @keys their times) whose span
    (prev, ts] overlaps [lo, hi]: found by bisection, not by a walk over all of
    them for each outlier (40,000 late wake-ups against a counter read at every
    switch took minutes). A reading's prev never goes back as its ts goes on."""
    if not readings:
        return ()
    k = j = bisect.bisect_right(keys, lo)
    while j < len(readings) and readings[j][1] < hi:
        j += 1
    return readings[k:j]


def _groups(segs, lo, hi):
    """{component: [(cause key, ns)]} of the segments inside [lo, hi] that have a
    cause, in the order first seen."""
    out = {}
    for b, e, what, key in segs:
        b, e = max(b, lo), min(e, hi)
        if e <= b or key is None:
            continue
        mine = out.setdefault(what, {})
        mine[key] = mine.get(key, 0) + e - b
    return {k: list(v.items()) for k, v in out.items()}


def _task_spans(start, end, tv, tx, ts, woken):
    """The timeline's spans for task context: (lo, hi, component), "blocked"
    where the running task decides between blocking and scheduling."""
    if woken:
        spans = [(start, tv, "irq_latency"), (tv, tx, "timer_irq"), (tx, ts or end, "blocked")]
        if ts is not None:
            spans.append((ts, end, "return"))
        return spans
    if ts is not None:      # a missed period: no wake-up, the thread switched in late
        return [(start, ts, "blocked"), (ts, end, "return")]
    return [(start, end, "own")]


def _dominant(comp):
    """The component with the most time (ties: the first in timeline order)."""
    return max(ORDER, key=lambda k: (comp[k], -ORDER.index(k)))


def _chain(comp, parts, links):
    """The outlier's timeline for people: 'timer IRQ latency 12.0 us → local timer
    (hrtimer hrtimer_wakeup) 8.1 us → blocked by spin (pid 9, prio 9) 480 us → ...'."""
    out = []
    for k in ORDER:
        ns = comp[k]
        if k == "unaccounted":
            if abs(ns) > TOLERANCE_NS:
                out.append("unaccounted %s%s" % ("-" if ns < 0 else "", fmt_ns(abs(ns))))
            continue
        if ns <= 0:
            continue
        if k == "timer_irq":
            # the hrtimers it ran, and the rest: entry, exit and reprogramming the
            # timer (in a guest, VM exits)
            hr = ["%s %s" % (fn, fmt_ns(d)) for fn, d in links[:MAX_HRTIMERS]]
            rest = ns - sum(d for _, d in links)
            if hr and rest > 0:
                hr.append("the rest %s" % fmt_ns(rest))
            out.append("timer IRQ %s%s" % (fmt_ns(ns), " (%s)" % ", ".join(hr) if hr else ""))
        elif k == "blocking":
            who = [(task_text([n.comm, n.pid, n.prio, []]) if c == C.TASK else
                    "RT throttling (%s)" % n, v) for (c, n), v in parts.items()
                   if c in (C.TASK, C.THROTTLING)]
            who.sort(key=lambda x: -x[1])
            out.append("blocked by " + ", ".join("%s %s" % (n, fmt_ns(v)) for n, v in who[:3]))
        elif k in ("irq", "softirq", "nmi"):
            grp = {"irq": (C.HARDIRQ, C.IPI, C.TICK), "softirq": (C.SOFTIRQ,),
                   "nmi": (C.NMI,)}[k]
            its = sorted(((n, v) for (c, n), v in parts.items() if c in grp),
                         key=lambda x: -x[1])
            out.append("%s %s" % (LABELS[k], ", ".join("%s %s" % (n, fmt_ns(v))
                                                       for n, v in its[:3])))
        else:
            out.append("%s %s" % (LABELS[k], fmt_ns(ns)))
    return " → ".join(out)


def decompose(result, outliers, log, slack_ns=DEFAULT_SLACK_NS, top=20, each=None,
              progress=None):
    """The attribution section of a jtr wake result, with its decomposition, and
    the lines of decomposition.csv (module docstring). @each, if given, is called
    per outlier with (cpu, start_ns, length_ns, parts [(category, name, ns)],
    pids, works), as attribute.attribute's."""
    if not isinstance(slack_ns, int) or slack_ns < 0:
        raise UsageError("slack %r: give a whole number of ns >= 0" % (slack_ns,))
    if not isinstance(top, int) or top < 0:
        raise UsageError("top %r: give a whole number >= 0" % (top,))
    runs = result.get("runs", [])
    tid_of = {r.get("cpu"): r.get("tid") for r in runs if isinstance(r.get("tid"), int)}
    priv = result.get("privileges")
    prio = priv.get("fifo_priority") if isinstance(priv, dict) else None
    if not isinstance(outliers, list):
        outliers = list(map(tuple, outliers.tolist()))
    # taken in time order per CPU; each one's main category kept in the order
    # given (outliers.csv's: attribution.per_outlier)
    given = sorted(range(len(outliers)), key=lambda j: (outliers[j][0], outliers[j][1]))
    main_of = [None] * len(outliers)
    outliers = [outliers[j] for j in given]
    traced_cpus = set(log.meta.get("cpus") or log.cpu_ts)
    measured = host_steal.unmeasured(log.meta) is None
    readings = log.steal_readings() if measured else {}
    steal_ts = {cpu: [r[0] for r in rows] for cpu, rows in readings.items()}
    rt = isinstance(prio, int) and prio > 0
    throttle = Throttle(result, log)
    throttled = (C.THROTTLING, throttle.name) if rt else None
    latency_cause = IRQ_LATENCY[host_steal.OTHER if measured else host_steal.UNMEASURED]
    causes, rows, worst = {}, [], []
    comp_tot = {k: [] for k in ORDER}
    comp_new = dict.fromkeys(ORDER, 0)      # each instant once: the totals
    dominant_n = dict.fromkeys(ORDER, 0)
    within = complete = traced_total = not_traced = 0
    covered = {}        # cpu -> the end of the latest outlier taken (overlaps counted once)
    for i, (cpu, start, length) in enumerate(outliers):
        if progress is not None and not i & 1023:
            progress("late wake-up %d of %d" % (i, len(outliers)))
        tid = tid_of.get(cpu)
        if cpu not in traced_cpus or start < log.start_ns or start > log.end_ns or tid is None:
            not_traced += 1
            _tally(causes, C.OUTSIDE, length, True,
                   "not traced: outside the trace, or the thread is not known", length,
                   new=max(0, start + length - max(start, covered.get(cpu, start))))
            covered[cpu] = max(covered.get(cpu, 0), start + length)
            rows.append((cpu, start, length, None, "unaccounted", ""))
            main_of[given[i]] = C.OUTSIDE[0]
            continue
        pts, slices, evs, tasks, woken = _timeline(cpu, start, length, tid, log, slack_ns)
        probe_prio = tasks.prio.get(tid)
        if probe_prio is None:
            probe_prio = 99 - prio if rt else 120
        # an idle CPU keeps a real-time thread waiting only when throttled
        thr = throttled if throttled and throttle.at(cpu, start + length) else None
        args = (start, length, tid, probe_prio, pts, slices, tasks, woken, thr,
                _overlapping(readings.get(cpu, ()), steal_ts.get(cpu), start, start + length))
        comp, parts, links = _components(*args)
        cut = max(start, covered.get(cpu, start))
        if cut > start:         # an earlier outlier's window covered the start of this one
            comp_n, parts_n, _ = _components(*args, lo=min(cut, start + length))
        else:
            comp_n, parts_n = comp, parts
        covered[cpu] = max(covered.get(cpu, 0), start + length)
        # a whole path: the wake-up and the switch-in; for a missed period (no
        # sleep), the switch-in or the thread running all along
        whole = "Ts" in pts or (not woken and comp["own"] > 0)
        complete += whole
        within += whole and abs(comp["unaccounted"]) <= TOLERANCE_NS
        share, task_of = _shares(comp, parts, latency_cause)
        share_n, _ = _shares(comp_n, parts_n, latency_cause)
        for k in ORDER:
            if comp[k]:
                comp_tot[k].append(comp[k])
            comp_new[k] += comp_n[k]
        dom = _dominant(comp)
        dominant_n[dom] += 1
        main = max(share, key=lambda k: (share[k], k)) if share else \
            COMPONENTS[-1][2]
        main_of[given[i]] = main[0]
        chain = _chain(comp, parts, links)
        for k, ns in share.items():
            if ns > 0:
                _tally(causes, k, ns, k == main, chain, length, task_of.get(k, ()),
                       new=max(0, share_n.get(k, 0)))
        if each is not None:
            each(cpu, start, length, [(k[0], k[1], ns) for k, ns in share.items() if ns > 0],
                 [t.pid for ts in task_of.values() for t, _ in ts], [])
        traced = max(0, length - comp["irq_latency"] - comp["host"] - comp["stall"] -
                     max(0, comp["unaccounted"]))
        traced_total += traced
        blockers = sorted(((str(n), v) for (c, n), v in parts.items() if c == C.TASK),
                          key=lambda x: -x[1])
        rows.append((cpu, start, length, comp, dom, blockers[0][0] if blockers else ""))
        rank = (length, -start, -i)
        if top and (len(worst) < top or rank > worst[0][0]):
            row = {"cpu": cpu, "start_ns": start, "length_ns": length, "category": main[0],
                   "name": main[1], "chain": chain, "traced_ns": traced, "dominant": dom,
                   "components": {k: comp[k] for k in ORDER if comp[k]},
                   "parts": sorted((_part(k, v, task_of.get(k)) for k, v in
                                    share.items() if v > 0), key=lambda p: -p["ns"]),
                   "events": _event_lines(evs, start - slack_ns, max(start + length,
                                                                      pts.get("Ts", 0)),
                                          start, log.meta)}
            (heapq.heappush if len(worst) < top else heapq.heapreplace)(worst, (rank, row))
    doc = _report(runs, log, slack_ns, outliers, causes, worst, comp_tot, comp_new,
                  dominant_n, traced_total, not_traced, complete, within)
    each_main = per_outlier(main_of)
    if each_main:
        doc["per_outlier"] = each_main
    return doc, rows


def _shares(comp, parts, latency_cause):
    """{(category, name): ns} of an outlier's causes from its components and
    parts (a task's cause per comm, its tasks kept apart), the timer IRQ latency
    under @latency_cause; and {cause: [(Task, ns)]}."""
    share, task_of = {}, {}
    for (c, n), v in parts.items():
        k = (c, str(n))
        share[k] = share.get(k, 0) + v
        if type(n) is C.Task:
            task_of.setdefault(k, []).append((n, v))
    for k, _, fixed in COMPONENTS:
        if fixed is not None and comp[k] > 0:
            share[fixed] = share.get(fixed, 0) + comp[k]
    if comp["irq_latency"] > 0:
        share[latency_cause] = comp["irq_latency"]
    return share, task_of


def _event_lines(evs, lo, hi, start, meta):
    """The events of a timeline for people, times from the intended wake-up: at
    most WORST_EVENTS, the first and the last ones (softirq raises left out)."""
    keep = [e for e in evs if lo <= e.ts_ns <= hi and e.type != ev.SOFTIRQ_RAISE]
    if len(keep) > WORST_EVENTS:
        keep = keep[:WORST_EVENTS - WORST_TAIL] + keep[-WORST_TAIL:]
    return ["%+.1f us %s" % ((e.ts_ns - start) / 1e3, ev.describe(e, meta)) for e in keep]


def _part(key, ns, tasks):
    """One part of an outlier (a task's with the pid and prio of the task that
    held the CPU longest)."""
    p = {"category": key[0], "name": key[1], "ns": ns}
    if tasks:
        t = max(tasks, key=lambda x: x[1])[0]
        p["pid"] = t.pid
        if t.prio is not None:
            p["prio"] = t.prio
    return p


def _tally(causes, key, ns, primary, chain, length=None, tasks=(), new=None):
    """Charge ns of an outlier to a cause; keep the chain of its longest outlier;
    @tasks: [(Task, ns)] of a task cause's part; @new: what of it no earlier
    outlier covered (the cause's total counts each instant once)."""
    c = causes.setdefault(key, [[], 0, -1, "", {}, 0])
    c[5] += ns if new is None else new
    c[0].append(ns)
    c[1] += primary
    if length is not None and length > c[2]:
        c[2], c[3] = length, chain
    for t, v in tasks:
        w = c[4].setdefault(t, [0, 0])
        w[0] += 1
        w[1] += v


def _median(values):
    values = sorted(values)
    return values[(len(values) - 1) // 2]


def _report(runs, log, slack_ns, outliers, causes, worst, comp_tot, comp_new, dominant_n,
            traced_total, not_traced, complete, within):
    """The attribution dict of a decomposition: each cause's and component's
    total counts each instant once (@comp_new; a cause's c[5]), their counts,
    p50 and max are the outliers'."""
    total_ns = sum(c[5] for c in causes.values())
    duration_ns = measured_ns(runs)
    starts = [r["start_mono_ns"] for r in runs if r.get("start_mono_ns") is not None]
    rows = []
    for (cat, name), (parts, primary, _, chain, tasks, tot) in causes.items():
        n = len(parts)
        if tasks:       # the tasks' times scaled to the cause's, each instant once
            s = sum(ns for _, ns in tasks.values()) or 1
            tasks = {t: [c, ns * tot // s] for t, (c, ns) in tasks.items()}
        rows.append({"category": cat, "name": name, "count": n, "primary_count": primary,
                     "total_ns": tot, "share": round(tot / total_ns, 6) if total_ns else 0.0,
                     "p50_ns": _median(parts), "max_ns": max(parts),
                     "per_s": round(n / (duration_ns / 1e9), 3) if duration_ns else 0.0,
                     "example_chain": chain,
                     **(task_fields(tasks, log.task_groups()) if tasks else {})})
    rows.sort(key=lambda r: (-r["total_ns"], -r["count"], r["category"], r["name"]))
    comp_sum = sum(v for k, v in comp_new.items() if k != "unaccounted")
    components = []
    for k in ORDER:
        v = comp_tot[k]
        components.append({
            "component": k, "label": LABELS[k], "count": len(v), "total_ns": comp_new[k],
            "share": round(comp_new[k] / comp_sum, 6) if comp_sum and k != "unaccounted"
            else 0.0,
            "dominant_count": dominant_n[k], "p50_ns": _median(v) if v else 0,
            "max_ns": max(v) if v else 0, "min_ns": min(v) if v else 0})
    summed = sum(o[2] for o in outliers)
    union = sum(comp_new.values()) + sum(c[5] for k, c in causes.items() if k == C.OUTSIDE)
    tracer = tracer_section(log)
    warnings = tracer_warnings(log, tracer["dropped"])
    unlogged = sum((r.get("outliers") or {}).get("dropped", 0) for r in runs)
    if unlogged:
        warnings.append("%d outliers counted but not logged (outliers.csv was full: raise "
                        "--max-outliers); they are not decomposed" % unlogged)
    if not_traced:
        warnings.append("%d outliers fall outside the trace (its time span or CPUs), or "
                        "their thread is not known: not decomposed" % not_traced)
    n = len(outliers)
    if n - not_traced > complete:
        warnings.append("%d of %d outliers have no whole wake-up path in the events "
                        "(the thread's switch-in, or its wake-up; events dropped?): their "
                        "missing part is unaccounted" % (n - not_traced - complete,
                                                         n - not_traced))
    return {
        "method": {"slack_ns": slack_ns, "rule": RULE, "lookback_ns": LOOKBACK_NS},
        "tracer": tracer,
        "outliers": {"count": n, "total_ns": union,
                     **({"summed_ns": summed} if summed != union else {}),
                     "traced_ns": max(0, comp_new_traced(comp_new)), "unlogged": unlogged,
                     "cpus": sorted({r["cpu"] for r in runs if r.get("cpu") is not None}),
                     "duration_ns": duration_ns,
                     "start_ns": min(starts) if starts else log.start_ns},
        "causes": rows,
        "decomposition": {"components": components, "tolerance_ns": TOLERANCE_NS,
                          "complete": complete, "within_tolerance": within,
                          "file": CSV_NAME},
        "worst": [w[1] for w in sorted(worst, key=lambda w: w[0], reverse=True)],
        "warnings": warnings,
    }


def comp_new_traced(comp):
    """What the kernel's events closed of the timelines: all but the timer IRQ's
    latency, the host's steal and what is unaccounted."""
    return sum(v for k, v in comp.items()
               if k not in ("irq_latency", "host", "unaccounted")) + min(0, comp["unaccounted"])


def csv_text(rows):
    """decomposition.csv: one line per outlier, the components in ns."""
    lines = [CSV_HEAD]
    for cpu, start, length, comp, dom, blocker in rows:
        vals = [str(comp[k]) if comp else "" for k in ORDER]
        lines.append("%d,%d,%d,%s,%s,%s" % (cpu, start, length, ",".join(vals), dom,
                                            '"%s"' % blocker.replace('"', "'") if blocker
                                            else ""))
    return "\n".join(lines) + "\n"
