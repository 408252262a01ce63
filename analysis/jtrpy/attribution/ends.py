# SPDX-License-Identifier: GPL-2.0-only
"""ends - round trips and messages charged on both ends (jtr ping and jtr pong,
jtr pub and jtr sub), from the event log of every CPU of both sides.

Method (docs/attribution.md, "Round trips and messages: both ends"):

1. Timelines. Each CPU of both sides is walked once, whole, by the walker of
   attribute.py (its probe the program of that side: jtr-ping, jtr-pong, ...),
   into episodes: interrupts and softirqs (a softirq joins the interrupt it ran
   on the exit of), other tasks that ran while the program was runnable or
   waited, RT throttling, NMIs. They become disjoint intervals on the CPU's
   timeline; one nested in another (a tick while another task ran) is a link
   of it, as in a gap's outlier.
2. Phases. A round trip's stamps cut it into phases: send [intended, sent),
   out [sent, peer_rx) (the way out and pong's wake-up), reflect [peer_rx,
   peer_tx), reply [peer_tx, received) (the way back and the reply's wake-up);
   without pong's stamps, send and trip [sent, received). A message (sub's
   log) is one phase, receive [sent, received]. A phase is searched on the CPUs
   that can delay it: send on ping's (the part before the send call too: what
   held the sender there, the rest is the backlog, earlier messages held the
   sender), reflect on pong's, the others on both.
3. Charging. A phase's time goes first to the host's steal measured in it (a
   reading of the counter whose span (prev, ts] overlaps the phase, up to the
   overlap), then to the causes whose intervals lie in it, each on the side of
   its CPU, scaled into what is left when two CPUs were busy at once; the rest
   is no kernel event on the phase's side (send, reply: ping; out, reflect:
   pong; a message: sub). So an outlier's parts add up to its length, and no
   phase is charged more than its stamps measured. Its main cause is its
   largest part.
4. Totals. Round trips overlap (several in flight, or a backlog of them):
   their sums are no time at all. A cause's total_ns is charged once per instant:
   every group of overlapping windows is charged as one span, from its first
   start to its last end, by the same rules in one phase (its no kernel event
   on the side that had most of its outliers'). So the totals add up to the
   time some outlier was in flight, never more than the run. Counts, p50, max
   and the main causes are the outliers'.
5. The budget: per phase, the mean measured and charged time per outlier that
   has it, and the cause that took most.

Speed: the walk is linear in the events; a cause's time in a span is a
difference of its prefix sums on the CPU's timeline (numpy, else bisect), so an
outlier costs O(causes x log intervals) however many windows overlap. With
numpy every part of every outlier is one row of arrays (span, ns, cause): the
own path, the folding per comm, the sums per outlier and cause, each one's main
cause, the tallies, the budget and the totals are taken over all of them at
once (_charge_np); an outlier's dicts are made again only where its chain or
parts are shown. The plain path (_charge_plain) charges one outlier at a time
and is the reference: test_ends compares the two.
"""
import heapq
from bisect import bisect_left, bisect_right

from ..results import probes as P
from ..system.memory import paused_gc
from ..system.numeric import numpy_or_none
from ..trace import causes as C
from ..trace import events as ev
from ..units import fmt_ns
from . import steal as host_steal
from . import vector
from .attribute import (
    DEFAULT_SLACK_NS,
    NOT_TRACED,
    Tallies,
    Walker,
    check_args,
    fold_task,
    format_chain,
    outlier_part,
    records_of,
    report,
    scan_switches,
    wait_episode,
    with_totals,
    works_of,
)
from .throttle import Throttle

JOIN_NS = 20_000        # a softirq this soon after an interrupt ran on its exit
SHOWN = 3               # episodes spelled out in an outlier's chain
# the phases, in order, with the side whose no kernel event each one is
ROUND_TRIP = ("send", "out", "reflect", "reply")
PHASE_SIDE = dict(P.ROUND_TRIP_PHASES + (("trip", "ping"), ("round trip", "ping")) +
                  P.MESSAGE_PHASES)
PHASES = tuple(PHASE_SIDE)


class Timeline:
    """One CPU's episodes as disjoint intervals, and each cause's time in any
    span of it (prefix sums)."""

    def __init__(self, np, log, cpu, probe_pid, comms, throttled, wakeups):
        walker = Walker(log, cpu, probe_pid, comms, throttled=throttled)
        walker.join_ns = JOIN_NS
        walker.charge_waits = False
        n = len(log.cpu_index.get(cpu, []))
        if n:
            fast = np is not None and log.arrays(None) is not None
            walker.walk(0, n, log.start_ns, records_of(np, log, cpu) if fast else None)
        end = log.end_ns
        eps = [e for e in walker.episodes if e.known]
        for e in eps:
            if e.end is None or e.end > end:
                e.end = max(e.begin, end)
        woken = wakeups.get((cpu, probe_pid), []) if probe_pid is not None else []
        self.np, self.comms, self.probe = np, comms, probe_pid
        if np is not None and log.arrays(None) is not None:
            self._flatten_np(np, log, cpu, eps, woken)
        else:
            if probe_pid is not None:
                eps += waits(log, cpu, probe_pid, comms, woken)
            self._flatten(eps)

    def _flatten(self, eps):
        """The episodes as disjoint intervals: one nested in the one before is a
        link of it; one that overlaps it starts where it ends."""
        eps.sort(key=lambda e: (e.begin, -e.end))
        self.eps, self.begin, self.end, self.key = [], [], [], []
        keys = {}
        cur = None
        for e in eps:
            b, f = e.begin, e.end
            if cur is not None and f <= cur:
                continue        # nested in the one before: a link of it
            if cur is not None and b < cur:
                b = cur
            if f <= b:
                continue
            cur = f
            k = keys.setdefault((e.category, e.name), len(keys))
            self.eps.append(e)
            self.begin.append(b)
            self.end.append(f)
            self.key.append(k)
        self.keys = list(keys)
        per = [[] for _ in self.keys]
        for j, k in enumerate(self.key):
            per[k].append(j)
        self.lines = []
        for js in per:
            kb = [self.begin[j] for j in js]
            ke = [self.end[j] for j in js]
            cum = [0]
            for b, f in zip(kb, ke):
                cum.append(cum[-1] + f - b)
            self.lines.append((kb, ke, cum))

    def _flatten_np(self, np, log, cpu, eps, woken):
        """_flatten with numpy, the waits read from the switch records as arrays
        (wait_arrays): their Episodes are made only when a chain asks."""
        keys = {}
        ek = [keys.setdefault((e.category, e.name), len(keys)) for e in eps]
        eb = np.array([e.begin for e in eps], dtype=np.int64)
        ee = np.array([e.end for e in eps], dtype=np.int64)
        wb, we, wpid, wprio, wcomm = wait_arrays(np, log, cpu, self.probe, woken)
        self.waits = (wpid, wprio, wcomm, wb, we)
        wk = np.zeros(len(wb), np.int64)
        if len(wb):
            combo = np.empty(len(wb), dtype=[("pid", "<i8"), ("prio", "<i8"), ("comm", "S16")])
            combo["pid"], combo["prio"], combo["comm"] = wpid, wprio, wcomm
            uniq, inv = np.unique(combo, return_inverse=True)
            ids = []
            for u in uniq.tolist():
                pid, prio, comm = u[0], u[1], ev.cstr(u[2]) or self.comms.get(u[0]) or ""
                ids.append(keys.setdefault((C.TASK, C.Task(comm, pid, prio)), len(keys)))
            wk = np.array(ids, dtype=np.int64)[inv.reshape(-1)]
        b = np.concatenate([eb, wb])
        f = np.concatenate([ee, we])
        k = np.concatenate([np.array(ek, dtype=np.int64), wk])
        src = np.concatenate([np.arange(len(eps)), -1 - np.arange(len(wb))])
        order = np.lexsort((-f, b))
        b, f, k, src = b[order], f[order], k[order], src[order]
        prev = np.empty(len(f), np.int64)
        if len(f):
            prev[0] = np.iinfo(np.int64).min
            prev[1:] = np.maximum.accumulate(f)[:-1]
        keep = f > prev                     # not nested in an earlier one
        b = np.maximum(b, prev)[keep]
        f, k, src = f[keep], k[keep], src[keep]
        ok = f > b
        b, f, k, src = b[ok], f[ok], k[ok], src[ok]
        self.begin, self.end, self.key = b.tolist(), f.tolist(), k.tolist()
        srcs = src.tolist()
        self.eps = [eps[x] if x >= 0 else x for x in srcs]
        self.keys = list(keys)
        self.lines = []
        kk = np.argsort(k, kind="stable")
        bounds = np.searchsorted(k[kk], np.arange(len(self.keys) + 1))
        for n in range(len(self.keys)):
            sel = kk[bounds[n]:bounds[n + 1]]
            kb, ke = b[sel], f[sel]
            cum = np.zeros(len(sel) + 1, np.int64)
            np.cumsum(ke - kb, out=cum[1:])
            self.lines.append((kb, ke, cum))

    def episode(self, j):
        """The Episode of interval @j (a wait's made now)."""
        e = self.eps[j]
        if not isinstance(e, int):
            return e
        w = -1 - e
        pid, prio, comm, begin, end = (x[w] for x in self.waits)
        pid, prio = int(pid), int(prio)
        return _wait_episode(pid, ev.cstr(comm) or self.comms.get(pid) or "", prio,
                             int(begin), int(end), self.probe, self.comms)

    def cover(self, k, t):
        """The time cause @k had on this CPU before @t (an array of instants with
        numpy, else one)."""
        kb, ke, cum = self.lines[k]
        np = self.np
        if np is not None:
            j = np.searchsorted(kb, t, "right") - 1
            jj = np.maximum(j, 0)
            inside = np.clip(np.minimum(t, ke[jj]) - kb[jj], 0, None)
            return np.where(j >= 0, cum[jj] + inside, 0)
        j = bisect_right(kb, t) - 1
        if j < 0:
            return 0
        return cum[j] + max(0, min(t, ke[j]) - kb[j])

    def times(self, a, b):
        """[(cause number, its time in each span [a, b))] of the causes with some:
        with numpy, arrays over all the spans; else a list per span."""
        out = []
        np = self.np
        if np is not None:
            for k in range(len(self.keys)):
                if not len(self.lines[k][0]):
                    continue        # every interval of it nested in another
                t = self.cover(k, b) - self.cover(k, a)
                if t.any():
                    out.append((k, t))
            return out
        for k in range(len(self.keys)):
            if not self.lines[k][0]:
                continue
            t = [self.cover(k, y) - self.cover(k, x) for x, y in zip(a, b)]
            if any(t):
                out.append((k, t))
        return out

    def works_in(self, lo, hi):
        """The workqueue functions the tasks of the episodes overlapping [lo, hi]
        ran (attribute.works_of), from the few intervals that have any."""
        if not hasattr(self, "_works"):
            at = [j for j, e in enumerate(self.eps) if not isinstance(e, int) and e.tasks
                  and works_of((e,))]
            self._works = (at, [self.begin[j] for j in at])
        at, begins = self._works
        out = set()
        for n in range(max(0, bisect_right(begins, lo) - 1), len(at)):
            j = at[n]
            if self.begin[j] > hi:
                break
            if min(hi, self.end[j]) > max(lo, self.begin[j]):
                out.update(works_of((self.eps[j],)))
        return out

    def episodes_in(self, lo, hi):
        """The episodes of the timeline that overlap [lo, hi], with their time there."""
        j = max(0, bisect_right(self.begin, lo) - 1)
        out = []
        while j < len(self.begin) and self.begin[j] <= hi:
            d = min(hi, self.end[j]) - max(lo, self.begin[j])
            if d > 0:
                out.append((self.episode(j), d))
            j += 1
        return out


def wakeups(log, np=None):
    """{(target CPU, pid): [ts]} of every wake-up the log has (sched_wakeup and
    sched_waking, on whatever CPU the waker ran), in time order."""
    out = {}
    if np is not None and log.arrays(None) is not None:
        recs = log.arrays(None)[0]
        at = np.flatnonzero((recs["type"] == ev.WAKEUP) | (recs["type"] == ev.WAKING))
        key = (recs["b"][at] & np.uint64(0xffffffff)) << np.uint64(32) | \
            (recs["a"][at] & np.uint64(0xffffffff))
        ts = recs["ts_ns"][at]
        order = np.lexsort((ts, key))
        key, ts = key[order], ts[order]
        bounds = np.flatnonzero(np.diff(key)) + 1
        for k, t in zip(np.split(key, bounds), np.split(ts, bounds)):
            if len(k):
                v = int(k[0])
                out[(v >> 32, v & 0xffffffff)] = t.tolist()
        return out
    for t in (ev.WAKEUP, ev.WAKING):
        for e in log.of_type(t):
            out.setdefault((e.b & 0xffffffff, e.a & 0xffffffff), []).append(e.ts_ns)
    for v in out.values():
        v.sort()
    return out


def switches(log, cpu, np=None):
    """[(ts, prev, next, prev runnable, next comm, next prio)] of @cpu's
    sched_switch records, in time order."""
    a = log.arrays(cpu) if np is not None else None
    if a is not None:
        recs, ts, idx = a
        sel = idx[recs["type"][idx] == ev.SWITCH]
        if not len(sel):
            return []
        r = recs[sel]
        ab = r["a"]
        names = np.ascontiguousarray(r["raw"]).view("S16")[1::2]
        return list(zip(r["ts_ns"].tolist(), (ab & np.uint64(0xffffffff)).tolist(),
                        (ab >> np.uint64(32)).tolist(), (r["flags"] & 1).tolist(),
                        [ev.cstr(x) for x in names.tolist()],
                        ((r["b"] >> np.uint64(16)) & np.uint64(0xffff)).tolist()))
    return [(e.ts_ns, e.a & 0xffffffff, e.a >> 32, e.flags & 1, e.next_comm,
             (e.b >> 16) & 0xffff) for e in log.window(cpu, log.start_ns, log.end_ns)
            if e.type == ev.SWITCH]


def waits(log, cpu, probe, comms, woken, np=None):
    """The episodes of the tasks that held @cpu while its program @probe waited to
    run: from its wake-up (@woken: its wake-ups targeting @cpu, sorted) to its
    switch-in, each task that ran then (not the idle task: that is the switch's
    own time). A task the program was switched out for while it was still
    runnable is the walker's (a preemption)."""
    out, since, woke = [], None, None
    cur, cur_begin, cur_name, cur_prio = None, None, "", None
    # an event the program ran ends a wait whose switch-in was not recorded
    mine = [e.ts_ns for e in log.window(cpu, log.start_ns, log.end_ns) if e.pid == probe]
    for ts, prev, nxt, runnable, name, prio in switches(log, cpu, np):
        if since is not None and woke is None:
            j = bisect_left(woken, since)
            if j < len(woken) and woken[j] < ts:
                woke = woken[j]
        if since is not None and woke is not None and cur not in (None, 0, probe):
            b = max(woke, cur_begin)
            j = bisect_right(mine, b)
            end = min(ts, mine[j]) if j < len(mine) else ts
            if end > b:
                out.append(_wait_episode(cur, cur_name or comms.get(cur) or "", cur_prio, b,
                                         end, probe, comms))
        if prev == probe and not runnable:
            # it waits (a blocking receive); its switch-in may be missing from the
            # log (a task whose switch out is never recorded ran before it)
            since, woke = ts, None
        if nxt == probe:
            since, woke = None, None
        cur, cur_begin, cur_name, cur_prio = nxt, ts, name, prio
    return out


def wait_arrays(np, log, cpu, probe, woken):
    """waits() with numpy: (begin, end, pid, prio, comm) arrays of the spans a task
    other than the idle one held @cpu from @probe's wake-up to its switch-in."""
    none = np.zeros(0, np.int64)
    recs, ts, idx = log.arrays(cpu)
    if probe is None or not len(idx):
        return none, none, none, none, np.zeros(0, "S16")
    sel = idx[recs["type"][idx] == ev.SWITCH]
    if len(sel) < 2:
        return none, none, none, none, np.zeros(0, "S16")
    r = recs[sel]
    t = r["ts_ns"].astype(np.int64)
    prev = (r["a"] & np.uint64(0xffffffff)).astype(np.int64)
    nxt = (r["a"] >> np.uint64(32)).astype(np.int64)
    runnable = (r["flags"] & 1).astype(bool)
    prio = ((r["b"] >> np.uint64(16)) & np.uint64(0xffff)).astype(np.int64)
    comm = np.ascontiguousarray(r["raw"]).view("S16")[1::2]
    n = len(t)
    ar = np.arange(n)
    blocks = (prev == probe) & ~runnable
    last_block = np.maximum.accumulate(np.where(blocks, ar, -1))
    last_in = np.maximum.accumulate(np.where(nxt == probe, ar, -1))
    inside = (last_block >= 0) & (last_block > last_in)
    # the first wake-up of the probe after each block began, if before its switch-in
    w = np.asarray(woken, dtype=np.int64)
    since = t[np.maximum(last_block, 0)]
    j = np.searchsorted(w, since, "left")
    woke = np.where(j < len(w), w[np.minimum(j, max(len(w) - 1, 0))] if len(w) else 0,
                    np.iinfo(np.int64).max)
    # the task switched in at k runs until the next switch
    k = np.flatnonzero(inside[:-1] & (nxt[:-1] != 0) & (nxt[:-1] != probe))
    b = np.maximum(woke[k], t[k])
    e = t[k + 1]
    # an event the program ran ends a wait whose switch-in was not recorded
    mine = ts[recs["pid"][idx] == probe].astype(np.int64)
    j = np.searchsorted(mine, b, "right")
    e = np.where(j < len(mine), np.minimum(e, mine[np.minimum(j, max(len(mine) - 1, 0))]
                                           if len(mine) else e), e)
    ok = e > b
    k, b, e = k[ok], b[ok], e[ok]
    return b, e, nxt[k], prio[k], comm[k]


def _wait_episode(pid, comm, prio, begin, end, probe, comms):
    return wait_episode(pid, comm, prio, begin, end, comms.get(probe) or "the program")


class _Steal:
    """The host's steal readings of each CPU: how much of a span it measured."""

    def __init__(self, log):
        self.why = host_steal.unmeasured(log.meta)
        self.rows = {} if self.why else log.steal_readings()
        self.ts = {c: [r[0] for r in rows] for c, rows in self.rows.items()}

    def measured(self):
        return self.why is None

    def within_all(self, np, cpu, a, b):
        """within() for arrays of spans [a, b) at once: the readings that lie inside
        a span add all their steal (a reading never measures more than its span),
        the two at its ends are cut to their overlap."""
        rows = self.rows.get(cpu)
        out = np.zeros(len(a), np.int64)
        if not rows:
            return out
        r = np.array(rows, dtype=np.int64).reshape(-1, 4)
        ts, prev = r[:, 0], r[:, 1]
        st = np.maximum(r[:, 2] - r[:, 3], 0)
        cum = np.zeros(len(st) + 1, np.int64)
        np.cumsum(st, out=cum[1:])
        j0 = np.searchsorted(ts, a, "right")
        j1 = np.searchsorted(prev, b, "left")
        has = j1 > j0
        out = np.where(has, cum[np.maximum(j1, j0)] - cum[j0], 0)

        def exact(j):
            jj = np.clip(j, 0, len(st) - 1)
            over = np.clip(np.minimum(ts[jj], b) - np.maximum(prev[jj], a), 0, None)
            return st[jj], np.minimum(st[jj], over)
        full, cut = exact(j0)
        out = np.where(has, out - full + cut, out)
        last = j1 - 1
        two = has & (last > j0)
        full, cut = exact(last)
        return np.where(two, out - full + cut, out)

    def within(self, cpu, a, b):
        """The steal of @cpu's readings whose span (prev, ts] overlaps [a, b), each
        up to the overlap."""
        rows = self.rows.get(cpu)
        if not rows:
            return 0
        got = 0
        i = bisect_right(self.ts[cpu], a)
        while i < len(rows):
            ts, prev, x, y = rows[i]
            if prev >= b:
                break
            over = min(ts, b) - max(prev, a)
            if over > 0 and x > y:
                got += min(x - y, over)
            i += 1
        return got


def attribute_ends(result, outliers, log, sides, stamps=None, programs=None,
                   slack_ns=DEFAULT_SLACK_NS, top=20, each=None, progress=None):
    """The attribution section of @result's round trips or messages (@outliers:
    (cpu, start, length) rows; @stamps: {column: [ns per outlier]} of ping's log,
    0 where not known) on @sides ({side: [cpus]}), @programs: {cpu: comm}.
    @each: as attribute.attribute's; @progress(text): told what is being done.
    The module docstring has the method."""
    with paused_gc():
        return _Ends(result, outliers, log, sides, stamps or {}, programs, slack_ns, top,
                     each, progress).run()


class _Ends:
    def __init__(self, result, outliers, log, sides, stamps, programs, slack_ns, top, each,
                 progress=None):
        check_args(slack_ns, top)
        self.progress = progress or (lambda text: None)
        if not isinstance(outliers, list):
            outliers = list(map(tuple, outliers.tolist()))
        self.result, self.outliers, self.log = result, outliers, log
        self.slack_ns, self.top, self.each = slack_ns, top, each
        self.stamps = stamps
        self.side_of = {}
        for side, cpus in sides.items():
            for c in cpus:
                self.side_of.setdefault(c, side)
        traced = set(log.meta.get("cpus") or log.cpu_ts)
        self.cpus = sorted(c for c in self.side_of if c in traced)
        self.by_side = {}
        for c in self.cpus:
            self.by_side.setdefault(self.side_of[c], []).append(c)
        probe = P.probe_of(result)
        self.message = probe is not None and probe.phases == P.MESSAGE_PHASES
        params = result.get("params") if isinstance(result.get("params"), dict) else {}
        self.one_thread = bool(params.get("one_thread"))
        self.np = numpy_or_none()
        self.typical = typical_ns(result, probe)
        self.steal = _Steal(log)
        if not self.cpus:
            pids, comms = {}, {}
        elif self.np is not None and log.arrays(None) is not None:
            pids, comms = vector.switches(self.np, log, programs)
        else:
            pids, comms = scan_switches(log, programs)
        throttled = Throttle(result, log)
        woken = wakeups(log, self.np)
        self.lines = {}
        for c in self.cpus:
            self.progress("walking CPU %d's %d events" % (c, len(log.cpu_index.get(c, []))))
            self.lines[c] = Timeline(self.np, log, c, pids.get(c), comms, throttled, woken)
        self.T = Tallies(len(outliers), top)
        self.fold = {}          # cause key -> its key folded (a task's: per comm)
        self.kernel = {c.name for c in C.CATEGORIES if c.kernel}

    # ------------------------------------------------------------ phases

    def phases(self, i):
        """[(phase, a, b, cpus, side, rest)] of outlier @i, in time order; @rest the
        cause of what nothing took (None: no kernel event)."""
        cpu, start, length = self.outliers[i]
        end = start + length
        col = self.stamps.get
        every = self.cpus

        def stamp(name):
            c = col(name)
            v = c[i] if c else 0
            return v if start <= v <= end else 0
        if self.message:
            return [("receive", start, end, every, "sub", None)]
        sent, rx, tx = (stamp(k) for k in ("sent_ns", "peer_rx_ns", "peer_tx_ns"))
        ping = self.by_side.get("ping", [])
        pong = self.by_side.get("pong", [])
        first = self.flight(i)
        # sent late: what ran on the sender's CPUs held it; the rest is the backlog
        # (earlier messages held the sender)
        out = [("send", start, first, ping, "ping", C.LATE)] if first > start else []
        if not sent:
            return out + [("round trip", first, end, every, "ping", None)]
        if sent > first:
            out.append(("send", first, sent, ping, "ping", None))
        if rx and tx and sent <= rx <= tx:
            out += [("out", sent, rx, every, "pong", None),
                    ("reflect", rx, tx, pong, "pong", None),
                    ("reply", tx, end, every, "ping", None)]
        elif end > sent:
            out.append(("trip", sent, end, every, "ping", None))
        return [p for p in out if p[2] > p[1] and p[3]]

    def flight(self, i):
        """When outlier @i's message left: its send call (ping's send_ns) when that
        came after the intended time (the time before it: the schedule's backlog,
        earlier messages held the sender), else its start."""
        cpu, start, length = self.outliers[i]
        c = self.stamps.get("send_ns")
        send = c[i] if c and not self.message else 0
        return send if start + self.slack_ns < send <= start + length else start

    # ------------------------------------------------------------ charging

    def spans(self, spans):
        """Each span (a, b, cpus, side, rest) charged: [share {(category, name,
        side): ns}] with the causes' time on each CPU of the span, the host's
        steal first (host_steal.first) and last what nothing took: no kernel event
        on the span's side, or @rest (the backlog of a late send)."""
        per_cpu = {}
        for n, (_, _, cpus, _, _) in enumerate(spans):
            for c in cpus:
                per_cpu.setdefault(c, []).append(n)
        found = [{} for _ in spans]
        for c in sorted(per_cpu):
            ns = per_cpu[c]
            line = self.lines[c]
            side = self.side_of[c]
            a = [spans[n][0] for n in ns]
            b = [spans[n][1] for n in ns]
            for k, t in sorted(line.times(a, b), key=lambda kt: _order(line.keys[kt[0]])):
                cat, name = line.keys[k]
                key = (cat, name, side)
                for q, v in enumerate(t):
                    if v:
                        d = found[ns[q]]
                        d[key] = d.get(key, 0) + v
        measured = self.steal.measured()
        out = []
        for (a, b, cpus, side, rest), share in zip(spans, found):
            length = b - a
            host = min(length, max((self.steal.within(c, a, b) for c in cpus), default=0)) \
                if measured else 0
            room = length - host
            busy = sum(share.values())
            if busy > room:         # two CPUs busy at once: scaled into the span
                share = {k: v * room // busy for k, v in share.items()}
                busy = sum(share.values())
            out.append(self._rest(share, side, rest, measured, host, room - busy))
        return out

    @staticmethod
    def _rest(share, side, rest, measured, host, left_ns):
        """@share with the host's steal and what nothing took (@left_ns) added."""
        if rest is not None:
            left = {rest: left_ns} if left_ns > 0 else {}
            if host:
                left[C.HOST_STEAL] = host
        else:
            left = host_steal.first(None if not measured else host, host, left_ns)
        for k, ns in left.items():
            share[k + (side,)] = share.get(k + (side,), 0) + ns
        return share

    def _span_arrays(self, A, B, kind, kinds):
        """Every span's parts as arrays, each cause's time on each CPU for every
        span at once, the scaling and the host's steal as arrays: (q the span,
        v its ns > 0, k the key's number in keys [(category, name, side)]), in
        each span in spans()'s order (its CPUs', then _rest's), q ascending.
        Span q is [A[q], B[q]) of kind kinds[kind[q]]: (CPUs, side, rest)."""
        np = self.np
        n = len(A)
        per_cpu = {}
        for x, (cpus, _, _) in enumerate(kinds):
            for c in cpus:
                per_cpu.setdefault(c, []).append(x)
        per_cpu = {c: np.flatnonzero(np.isin(kind, xs)) for c, xs in per_cpu.items()}
        keys, kid_of = [], {}

        def kid(key):
            got = kid_of.get(key)
            if got is None:
                got = kid_of[key] = len(keys)
                keys.append(key)
            return got
        qs, vs, ks = [], [], []
        host = np.zeros(n, np.int64)
        measured = self.steal.measured()
        for c in sorted(per_cpu):
            q = per_cpu[c]
            line = self.lines[c]
            side = self.side_of[c]
            a, b = A[q], B[q]
            if measured:
                host[q] = np.maximum(host[q], self.steal.within_all(np, c, a, b))
            for k, t in sorted(line.times(a, b), key=lambda kt: _order(line.keys[kt[0]])):
                nz = np.flatnonzero(t)
                qs.append(q[nz])
                vs.append(t[nz])
                ks.append(np.full(len(nz), kid(line.keys[k] + (side,)), np.int64))
        length = B - A
        host = np.minimum(host, length)
        room = length - host
        if qs:
            q, v, k = (np.concatenate(x) for x in (qs, vs, ks))
            busy = np.bincount(q, weights=v, minlength=n).astype(np.int64)
            over = busy > room              # two CPUs busy at once: scaled into it
            v = np.where(over[q], v * room[q] // np.maximum(busy[q], 1), v)
            busy = np.bincount(q, weights=v, minlength=n).astype(np.int64)
        else:
            q = v = k = np.zeros(0, np.int64)
            busy = np.zeros(n, np.int64)
        left = room - busy
        # _rest's parts: per (side, rest) of a span, its keys and whether each
        # takes what nothing took (left) or the host's steal
        slots = [[], []]
        for _, side, rest in kinds:
            if rest is not None:
                got = [(rest, False), (C.HOST_STEAL, True)]
            elif measured:
                got = [(C.HOST_STEAL, True), (C.HOST_OTHER, False)]
            else:
                got = [(C.HOST_UNMEASURED, False)]
            for m in range(2):
                slots[m].append((kid(got[m][0] + (side,)), got[m][1]) if m < len(got)
                                else (-1, False))
        qs, vs, ks = [q], [v], [k]
        span = np.arange(n)
        for slot in slots:
            sk = np.array([x[0] for x in slot] or [-1], np.int64)[kind]
            sv = np.where(np.array([x[1] for x in slot] or [False], bool)[kind], host, left)
            keep = (sk >= 0) & (sv > 0)
            qs.append(span[keep])
            vs.append(sv[keep])
            ks.append(sk[keep])
        q, v, k = (np.concatenate(x) for x in (qs, vs, ks))
        keep = v > 0
        order = np.argsort(q[keep], kind="stable")
        return q[keep][order], v[keep][order], k[keep][order], keys

    def run(self):
        outliers, T, log = self.outliers, self.T, self.log
        t_lo, t_hi = log.start_ns, log.end_ns
        todo, not_traced = [], [0, 0]
        for i, (cpu, start, length) in enumerate(outliers):
            if not self.cpus or start < t_lo or start > t_hi:
                not_traced[0] += 1
                not_traced[1] += length
                T.proc += 1
                T.at = i
                side = self.side_of.get(cpu)
                key = NOT_TRACED + (side,)
                T.main_of[i] = key[0]
                T.tally(key, length, True, length, lambda k=key: "%s: %s" % k[:2])
                T.note_worst(cpu, start, length, key, lambda k=key: "%s: %s" % k[:2], 0,
                             [outlier_part(key, length, None)])
                continue
            todo.append(i)
        # every phase of every outlier, charged at once
        self.progress("charging %d outliers' phases" % len(todo))
        budget = {}
        charge = self._charge_np if self.np is not None else self._charge_plain
        totals = charge(todo, budget)
        a = report(self.result.get("runs", []), log, self.slack_ns, T, 0,
                   not_traced, len(outliers), {"budget": budget_rows(budget)})
        return with_totals(a, totals, not_traced)

    def _charge_plain(self, todo, budget):
        """Charge the outliers @todo from their phases one at a time; their
        totals."""
        spans, owner, phase = [], [], []
        for n, i in enumerate(todo):
            for ph, a, b, cpus, side, rest in self.phases(i):
                spans.append((a, b, cpus, side, rest))
                owner.append(n)
                phase.append(ph)
        per = {}
        for n, ph, share in zip(owner, phase, self.spans(spans)):
            per.setdefault(n, []).append((ph, share))
        for got in per.values():
            own_path([share for _, share in got], self.typical)
        for n, i in enumerate(todo):
            if not n & 4095:
                self.progress("tallying outlier %d of %d" % (n, len(todo)))
            self.T.proc += 1
            self.T.at = i
            self.charge(i, per.get(n, []), budget)
        self.progress("the totals, each instant once")
        none = []
        for n in range(len(todo)):
            d = {}
            for _, share in per.get(n, []):
                for k, v in share.items():
                    if k[0] == C.NO_EVENT and v > 0:
                        d[k[2]] = d.get(k[2], 0) + v
            none.append(d)
        spans, sizes = self.total_spans(todo, none)
        out = {}
        for n, share in zip(sizes, self.spans(spans)):
            own_path([share], self.typical * n)
            for k, ns in share.items():
                f = fold_task(k)
                out[f] = out.get(f, 0) + ns
        return out

    def fold_outlier(self, i, phases):
        """(folded, phases_of, tasks, main) of outlier @i from its phases [(phase,
        share)]: its time per cause (a task's folded per comm: fold_task), each
        one's per phase, a task cause's [(Task, ns)] and the main cause (the
        largest part; on a tie, a kernel event before no kernel event, then in
        _order)."""
        folded, tasks, phases_of = {}, {}, {}
        for ph, got in phases:
            for k, ns in got.items():
                if ns <= 0:
                    continue
                f = self.folded_key(k)
                folded[f] = folded.get(f, 0) + ns
                p = phases_of.get(f)
                if p is None:
                    p = phases_of[f] = {}
                p[ph] = p.get(ph, 0) + ns
                if type(k[1]) is C.Task:
                    tasks.setdefault(f, []).append((k[1], ns))
        if not folded:
            folded = {C.HOST_UNMEASURED + (PHASE_SIDE["round trip"],): self.outliers[i][2]}
        main = max(folded, key=lambda k: (folded[k],) + _main_rank(k))
        return folded, phases_of, tasks, main

    def folded_key(self, k):
        """Cause key @k with a task folded per comm (fold_task), remembered."""
        f = self.fold.get(k)
        if f is None:
            f = self.fold[k] = fold_task(k)
        return f

    def add_budget(self, phases, budget):
        """Add an outlier's phases [(phase, share)] to the budget: per phase [the
        outliers that have it, ns measured, charged to kernel events and the
        host, to the backlog, {cause: ns}]."""
        kernel, late, seen = self.kernel, C.LATE + ("ping",), set()
        for ph, got in phases:
            b = budget.get(ph)
            if b is None:
                b = budget[ph] = [0, 0, 0, 0, {}]
            if ph not in seen:
                seen.add(ph)
                b[0] += 1
            by = b[4]
            for k, ns in got.items():
                if ns <= 0:
                    continue
                f = self.folded_key(k)
                by[f] = by.get(f, 0) + ns
                b[1] += ns
                if f[0] in kernel or f[:2] == C.HOST_STEAL:
                    b[2] += ns
                if f == late:
                    b[3] += ns

    def charge(self, i, phases, budget):
        """Charge outlier @i from its phases [(phase, share)] into the tallies."""
        cpu, start, length = self.outliers[i]
        self.add_budget(phases, budget)
        folded, phases_of, tasks, main = self.fold_outlier(i, phases)
        T = self.T
        T.main_of[i] = main[0]
        memo = []

        def chain():
            if not memo:
                memo.append(self.chain(i, folded, main))
            return memo[0]
        causes = T.causes
        for k, ns in folded.items():
            T.tally(k, ns, k == main, length, chain, None, _merged(tasks.get(k)))
            c4 = causes[k][4]
            for ph, v in (phases_of.get(k) or {}).items():
                c4[ph] = c4.get(ph, 0) + v
        if T.top and (len(T.worst) < T.top or (length, -start, -T.proc) > T.worst[0][:3]):
            T.note_worst(cpu, start, length, main, chain, self.traced(folded),
                         self.parts(folded, phases_of, tasks))
        if self.each is not None:
            self._each(i, folded, phases_of, tasks)

    def traced(self, folded):
        """The time of an outlier's parts that kernel events took."""
        return sum(v for k, v in folded.items() if k[0] in self.kernel)

    def _each(self, i, folded, phases_of, tasks):
        """Tell @each about outlier @i's parts, its tasks and their work."""
        cpu, start, length = self.outliers[i]
        parts = self.parts(folded, phases_of, tasks)
        pids = [t.pid for ts in tasks.values() for t, _ in ts]
        works = set()
        for c in self.cpus:
            works |= self.lines[c].works_in(start, start + length)
        self.each(cpu, start, length, [(p["category"], p["name"], p["ns"]) for p in parts],
                  pids, sorted(works))

    # ------------------------------------------------------------ numpy

    def _phases_np(self, todo):
        """phases() of every outlier of @todo at once: (A, B, kind, kinds, owner,
        phase) of each span, in the outliers' order and each one's in time order:
        [A, B) of kind kinds[kind] (CPUs, side, rest), the outlier's place in
        todo, the phase's in PHASES."""
        np, o = self.np, self.outliers
        n = len(todo)
        start = np.array([o[i][1] for i in todo], np.int64)
        end = start + np.array([o[i][2] for i in todo], np.int64)
        every = self.cpus
        ping = self.by_side.get("ping", [])
        pong = self.by_side.get("pong", [])
        kinds = [(every, "sub", None), (ping, "ping", C.LATE), (every, "ping", None),
                 (ping, "ping", None), (every, "pong", None), (pong, "pong", None)]
        SUB, LATE, EVERY_PING, PING, EVERY_PONG, PONG = range(6)
        ph = {p: x for x, p in enumerate(PHASES)}
        idx = np.arange(n)
        parts = []             # (mask, a, b, kind, phase, order in the outlier)

        def stamp(name):
            c = self.stamps.get(name)
            if not c:
                return np.zeros(n, np.int64)
            v = np.array([c[i] for i in todo], np.int64)
            return np.where((start <= v) & (v <= end), v, 0)
        if self.message:
            parts.append((np.ones(n, bool), start, end, SUB, ph["receive"], 0))
        else:
            first = start
            if self.stamps.get("send_ns"):
                send = np.array([self.stamps["send_ns"][i] for i in todo], np.int64)
                first = np.where((start + self.slack_ns < send) & (send <= end), send, start)
            sent, rx, tx = (stamp(x) for x in ("sent_ns", "peer_rx_ns", "peer_tx_ns"))
            has = sent != 0
            both = has & (rx != 0) & (tx != 0) & (sent <= rx) & (rx <= tx)
            # without a sent stamp, phases() keeps its spans as they are
            parts += [(first > start, start, first, LATE, ph["send"], 0),
                      (~has, first, end, EVERY_PING, ph["round trip"], 1),
                      (has & (sent > first), first, sent, PING, ph["send"], 1),
                      (both, sent, rx, EVERY_PONG, ph["out"], 2),
                      (both, rx, tx, PONG, ph["reflect"], 3),
                      (both, tx, end, EVERY_PING, ph["reply"], 4),
                      (has & ~both & (end > sent), sent, end, EVERY_PING, ph["trip"], 2)]
        cols = [[], [], [], [], [], []]
        for m, a, b, x, p, r in parts:
            if not self.message:    # phases()'s filter, on the spans with a sent stamp
                m = m & (~has | ((b > a) & bool(kinds[x][0])))
            k = int(m.sum())
            for c, val in zip(cols, (idx[m], a[m], b[m], np.full(k, x), np.full(k, p),
                                     np.full(k, r))):
                c.append(val)
        own, A, B, kind, phase, rank = (np.concatenate(c) if c else np.zeros(0, np.int64)
                                        for c in cols)
        order = np.lexsort((rank, own))
        return A[order], B[order], kind[order], kinds, own[order], phase[order]

    def _charge_np(self, todo, budget):
        """_charge_plain's tallies, budget and totals with numpy: every part of
        every outlier as arrays, folded, summed and ranked at once; an outlier's
        dicts are made only where its chain or parts are shown (the longest of a
        cause, the worst, @each)."""
        np, T, outliers = self.np, self.T, self.outliers
        G = len(todo)
        A, B, kind, kinds, own, span_ph = self._phases_np(todo)
        q, v, k, keys = self._span_arrays(A, B, kind, kinds)
        q, v, k = own_path_arrays(np, keys, own[q], q, v, k, self.typical)
        g = own[q]
        fkeys, fid_of = [], {}
        for key in keys:
            f = fold_task(key)
            if f not in fid_of:
                fid_of[f] = len(fkeys)
                fkeys.append(f)
        fid = np.array([fid_of[fold_task(key)] for key in keys], np.int64)
        f = fid[k] if len(k) else k
        F = max(1, len(fkeys))
        ph = span_ph[q]
        NPH = len(PHASES)
        self._budget_np(budget, own, span_ph, ph, f, v, fkeys)
        # the (outlier, cause) pairs and each outlier's main one
        pair, inv = np.unique(g * F + f, return_inverse=True)
        val = np.bincount(inv.reshape(-1), weights=v, minlength=len(pair)).astype(np.int64)
        pg, pf = pair // F, pair % F
        rank = np.zeros(F, np.int64)
        rank[sorted(range(len(fkeys)), key=lambda j: _main_rank(fkeys[j]))] = \
            np.arange(len(fkeys))
        o = np.lexsort((rank[pf], val, pg))
        last = np.ones(len(o), bool)
        last[:-1] = pg[o][1:] != pg[o][:-1]
        main_f = np.full(G, -1, np.int64)
        main_f[pg[o][last]] = pf[o][last]
        L = np.array([outliers[i][2] for i in todo], np.int64)
        nt = T.proc + 1             # the outliers taken before these: not traced
        cats = [fk[0] for fk in fkeys]
        for n, m in enumerate(main_f.tolist()):
            if m >= 0:
                T.main_of[todo[n]] = cats[m]
        # per cause: its parts, main count, phases, tasks and longest outlier
        by_f = np.argsort(pf, kind="stable")
        fb = np.searchsorted(pf[by_f], np.arange(F + 1)).tolist()
        primary = np.bincount(main_f[main_f >= 0], minlength=F).tolist()
        phsum = np.bincount(f * NPH + ph, weights=v, minlength=F * NPH).astype(
            np.int64).reshape(F, NPH).tolist()
        longest = np.lexsort((pg, -L[pg], pf))
        first = np.ones(len(longest), bool)
        first[1:] = pf[longest][1:] != pf[longest][:-1]
        long_of = dict(zip(pf[longest][first].tolist(), pg[longest][first].tolist()))
        is_task = np.array([type(key[1]) is C.Task for key in keys] or [False], bool)
        te = is_task[k] if len(k) else np.zeros(0, bool)
        K = max(1, len(keys))
        tpair, tinv = np.unique(g[te] * K + k[te], return_inverse=True)
        tns = np.bincount(tinv.reshape(-1), weights=v[te], minlength=len(tpair))
        tk = tpair % K
        tcount = np.bincount(tk, minlength=K).tolist()
        tsum = np.bincount(tk, weights=tns, minlength=K).astype(np.int64).tolist()
        tasks_of = {}
        for kk in sorted(set(tk.tolist())):
            tasks_of.setdefault(int(fid[kk]), []).append(
                (keys[kk][1], [tcount[kk], tsum[kk]]))
        self.progress("tallying %d outliers' causes" % G)
        view = _Views(self, np, todo, g, q, v, k, keys, span_ph.tolist())
        vals = val[by_f].tolist()
        for j, key in enumerate(fkeys):
            if fb[j] == fb[j + 1]:
                continue
            n = long_of[j]
            T.proc = nt + n
            T.bulk(key, vals[fb[j]:fb[j + 1]], primary[j],
                   {PHASES[p]: x for p, x in enumerate(phsum[j]) if x},
                   tasks_of.get(j, ()), int(L[n]), lambda n=n: view.chain(n))
        for n in np.flatnonzero(main_f < 0).tolist():   # no part at all
            T.proc = nt + n
            T.at = todo[n]
            self.charge(todo[n], [], {})
        if T.top:
            starts = [outliers[i][1] for i in todo]
            Ll = L.tolist()
            for n in heapq.nlargest(T.top, range(G), key=lambda n: (Ll[n], -starts[n], -n)):
                T.proc = nt + n
                folded, phases_of, tasks, main = view.fold(n)
                T.note_worst(outliers[todo[n]][0], starts[n], Ll[n], main,
                             lambda n=n: view.chain(n), self.traced(folded),
                             self.parts(folded, phases_of, tasks))
        if self.each is not None:
            for n, i in enumerate(todo):
                self._each(i, *view.fold(n)[:3])
        T.proc = nt + G - 1
        self.progress("the totals, each instant once")
        return self._totals_np(todo, g, v, k, keys)

    def _budget_np(self, budget, own, span_ph, ph, f, v, fkeys):
        """add_budget() of every outlier at once."""
        np, NPH = self.np, len(PHASES)
        F = max(1, len(fkeys))
        have = np.bincount(np.unique(own * NPH + span_ph) % NPH, minlength=NPH).tolist()
        ko = np.array([fk[0] in self.kernel or fk[:2] == C.HOST_STEAL for fk in fkeys] or
                      [False], bool)
        late = np.array([fk == C.LATE + ("ping",) for fk in fkeys] or [False], bool)

        def by_phase(mask):
            return np.bincount(ph[mask], weights=v[mask], minlength=NPH).astype(
                np.int64).tolist()
        every = np.ones(len(v), bool)
        measured, charged = by_phase(every), by_phase(ko[f] if len(f) else every)
        backlog = by_phase(late[f] if len(f) else every)
        by = np.bincount(ph * F + f, weights=v, minlength=NPH * F).astype(np.int64)
        by = by.reshape(NPH, F).tolist()
        for p, name in enumerate(PHASES):
            if have[p]:
                budget[name] = [have[p], measured[p], charged[p], backlog[p],
                                {fkeys[j]: x for j, x in enumerate(by[p]) if x}]

    def _totals_np(self, todo, g, v, k, keys):
        """_charge_plain's totals with numpy."""
        np = self.np
        G = len(todo)
        sides = sorted({key[2] for key in keys if key[0] == C.NO_EVENT})
        S = max(1, len(sides))
        per = np.zeros((G, S), np.int64)
        if sides:
            sid = {s: n for n, s in enumerate(sides)}
            ks = np.array([sid[key[2]] if key[0] == C.NO_EVENT else -1 for key in keys],
                          np.int64)[k]
            m = ks >= 0
            per = np.bincount(g[m] * S + ks[m], weights=v[m], minlength=G * S).astype(
                np.int64).reshape(G, S)
        A, B, kind, kinds, sizes = self._total_spans_np(todo, per, sides)
        q, v, k, keys = self._span_arrays(A, B, kind, kinds)
        q, v, k = own_path_arrays(np, keys, q, q, v, k,
                                  np.array(sizes, np.int64) * self.typical)
        fid, fold = [], {}
        for key in keys:
            fid.append(fold.setdefault(fold_task(key), len(fold)))
        got = np.bincount(np.array(fid, np.int64)[k], weights=v, minlength=len(fold))
        return {f: x for f, x in zip(fold, got.astype(np.int64).tolist()) if x}

    def _total_spans_np(self, todo, per, sides):
        """total_spans() with numpy, as _span_arrays() takes them (A, B, kind,
        kinds) and each one's outlier count: @per the no kernel event of each
        outlier of @todo (rows) on each of @sides (columns)."""
        np, o = self.np, self.outliers
        start = np.array([o[i][1] for i in todo], np.int64)
        end = start + np.array([o[i][2] for i in todo], np.int64)
        col = self.stamps.get("send_ns")
        flight = start
        if col and not self.message:
            send = np.array([col[i] for i in todo], np.int64)
            flight = np.where((start + self.slack_ns < send) & (send <= end), send, start)

        def merged(a, b):
            """merge(): (begins, ends, the members sorted, where each group begins)."""
            order = np.lexsort((b, a))
            a, b = a[order], b[order]
            new = np.ones(len(a), bool)
            new[1:] = a[1:] > np.maximum.accumulate(b)[:-1]
            at = np.flatnonzero(new)
            return a[at], np.maximum.reduceat(b, at) if len(at) else b[:0], order, at
        wa, wb, _, _ = merged(start, end)
        fa, fb, order, at = merged(flight, end)
        fa, fb = fa.astype(np.int64), fb.astype(np.int64)
        got = np.add.reduceat(per[order], at, axis=0) if len(at) else per[:0]
        default = "sub" if self.message else "ping"
        side = [sides[s] if x > 0 else default for s, x in zip(
            got.argmax(axis=1).tolist(), got.max(axis=1).tolist())] if len(at) else []
        sizes = np.diff(np.append(at, len(order))).tolist()
        kinds = [(self.cpus, x, None) for x in sorted(set(side))]
        of = {x[1]: n for n, x in enumerate(kinds)}
        A, B, kind = [fa], [fb], [np.array([of[x] for x in side], np.int64)]
        ping = self.by_side.get("ping", [])
        if ping:
            gaps = minus([(a, b, None) for a, b in zip(wa.tolist(), wb.tolist())],
                         [(a, b, None) for a, b in zip(fa.tolist(), fb.tolist())])
            kinds.append((ping, "ping", C.LATE))
            A.append(np.array([x[0] for x in gaps], np.int64))
            B.append(np.array([x[1] for x in gaps], np.int64))
            kind.append(np.full(len(gaps), len(kinds) - 1, np.int64))
            sizes += [0] * len(gaps)
        return tuple(np.concatenate(x) for x in (A, B, kind)) + (kinds, sizes)

    @staticmethod
    def parts(folded, phases_of, tasks):
        """An outlier's parts for result.json, largest first."""
        out = []
        for k, ns in folded.items():
            ph = phases_of.get(k) or {}
            out.append(outlier_part(k, ns, max(ph, key=ph.get) if ph else None,
                                    max(tasks[k], key=lambda t: t[1])[0]
                                    if k in tasks else None))
        out.sort(key=lambda p: -p["ns"])
        return out

    def chain(self, i, folded, main):
        """An outlier's chain: its largest episodes on each side, then what no
        kernel event took."""
        cpu, start, length = self.outliers[i]
        hi = start + length
        texts = []
        for c in self.cpus:
            eps = self.lines[c].episodes_in(self.flight(i), hi)
            eps.sort(key=lambda x: -x[1])
            side = self.side_of[c]
            shown = sorted(eps[:SHOWN], key=lambda x: x[0].begin)
            if shown:
                more = len(eps) - len(shown)
                texts.append("%s side: %s%s" % (
                    side, "; then ".join(format_chain(e, hi) for e, _ in shown),
                    "; then %d more episodes" % more if more else ""))
        none = sum(v for k, v in folded.items() if k[0] == C.NO_EVENT)
        host = sum(v for k, v in folded.items() if k[:2] == C.HOST_STEAL)
        late = sum(v for k, v in folded.items() if k[:2] == C.LATE)
        if host:
            texts.insert(0, "host preemption (steal) %s" % fmt_ns(host))
        if self.flight(i) > start:
            texts.insert(0, "sent %s late%s" % (
                fmt_ns(self.flight(i) - start),
                " (%s of it behind earlier messages)" % fmt_ns(late) if late else ""))
        if main[0] == C.NO_EVENT and not host:
            return "no kernel event for %s (%s side)%s" % (
                fmt_ns(none), main[2], ", with " + "; ".join(texts) if texts else "")
        if none - host > 0:
            texts.append("no kernel event for %s" % fmt_ns(none - host))
        return "; ".join(texts) or "%s: %s" % main[:2]

    # ------------------------------------------------------------ totals

    def total_spans(self, todo, none):
        """The spans the totals are charged in (module docstring, 4) and each
        one's outlier count: each group of overlapping flights (from the send call
        on) as one span on every CPU, its no kernel event on the side where its
        outliers had most (@none: {side: ns} per outlier of @todo), and the time
        only late messages were waiting to be sent on the sender's CPUs (what
        nothing took there: the backlog)."""
        wins = merge((self.outliers[i][1], self.outliers[i][1] + self.outliers[i][2], [n])
                     for n, i in enumerate(todo))
        flights = merge((self.flight(i), self.outliers[i][1] + self.outliers[i][2], [n])
                        for n, i in enumerate(todo))
        spans, sizes = [], []
        for a, b, members in flights:
            got = {}
            for n in members:
                for side, v in none[n].items():
                    got[side] = got.get(side, 0) + v
            side = max(sorted(got), key=got.get) if got else (
                "sub" if self.message else "ping")
            spans.append((a, b, self.cpus, side, None))
            sizes.append(len(members))
        ping = self.by_side.get("ping", [])
        for a, b in minus(wins, flights):
            if ping:
                spans.append((a, b, ping, "ping", C.LATE))
                sizes.append(0)
        return spans, sizes


def minus(spans, holes):
    """The parts of the merged @spans [(a, b, ...)] that no merged hole covers."""
    out, j = [], 0
    for a, b, _ in spans:
        cur = a
        while j < len(holes) and holes[j][1] <= cur:
            j += 1
        k = j
        while k < len(holes) and holes[k][0] < b:
            if holes[k][0] > cur:
                out.append((cur, holes[k][0]))
            cur = max(cur, holes[k][1])
            k += 1
        if cur < b:
            out.append((cur, b))
    return out


def _order(key):
    """A cause key's place in a stable order (whatever the timeline numbered it)."""
    return key[0], str(key[1]), getattr(key[1], "pid", -1)


def _main_rank(key):
    """How a folded cause key ranks against another of the same time as an
    outlier's main cause: a kernel event before no kernel event, then _order."""
    return key[0] != C.NO_EVENT, _order(key), key[2] or ""


def _merged(got):
    """[(Task, ns)] of one task cause in an outlier, a task in several phases as
    one part."""
    if not got or len(got) < 2:
        return got or ()
    merged = {}
    for t, v in got:
        merged[t] = merged.get(t, 0) + v
    return list(merged.items())


class _Views:
    """One outlier's phases as dicts again, from the numpy path's arrays (parts
    in span order, each span's in spans()'s order): where its chain or parts are
    shown."""

    def __init__(self, ends, np, todo, g, q, v, k, keys, phase):
        self.ends, self.todo, self.keys, self.phase = ends, todo, keys, phase
        self.bounds = np.searchsorted(g, np.arange(len(todo) + 1)).tolist()
        self.q, self.v, self.k = q, v, k
        self.memo = {}

    def phases(self, n):
        """[(phase, share)] of the @n-th outlier of todo."""
        lo, hi = self.bounds[n], self.bounds[n + 1]
        out, last = [], None
        for q, v, k in zip(self.q[lo:hi].tolist(), self.v[lo:hi].tolist(),
                           self.k[lo:hi].tolist()):
            if q != last:
                out.append((PHASES[self.phase[q]], {}))
                last = q
            share, key = out[-1][1], self.keys[k]
            share[key] = share.get(key, 0) + v
        return out

    def fold(self, n):
        got = self.memo.get(n)
        if got is None:
            got = self.memo[n] = self.ends.fold_outlier(self.todo[n], self.phases(n))
        return got

    def chain(self, n):
        folded, _, _, main = self.fold(n)
        return self.ends.chain(self.todo[n], folded, main)


def typical_ns(result, probe):
    """The median of the quantity that is a message's own way (probes.py's
    typical: ping's round trip from the send, sub's latency from the send), or
    0 where the result does not have it."""
    if probe is None or not probe.typical:
        return 0
    got = [(r.get("percentiles_ns") or {}).get("50") for r in result.get("runs") or []
           if isinstance(r, dict) and r.get("name") == probe.typical]
    got = [g for g in got if isinstance(g, int) and g > 0]
    return min(got) if got else 0


def own_path(shares, typical):
    """Take up to @typical ns of the no kernel event in @shares (the phases of one
    outlier, or one span) for the message's own way (causes.TYPICAL), from each
    no-kernel-event part in proportion, on its side and in its phase."""
    none = sorted(((n, s, k, v) for n, s in enumerate(shares) for k, v in s.items()
                   if k[0] == C.NO_EVENT and k[:2] != C.HOST_STEAL and v > 0),
                  key=lambda x: (x[0], x[2][1], x[2][2] or ""))
    none = [(s, k, v) for _, s, k, v in none]
    total = sum(v for _, _, v in none)
    take = min(typical, total)
    if take <= 0:
        return
    left = take
    for n, (s, k, v) in enumerate(none):
        part = left if n == len(none) - 1 else take * v // total
        part = min(part, v, left)
        left -= part
        s[k] = v - part
        if not s[k]:
            del s[k]
        t = C.TYPICAL + (k[2],)
        s[t] = s.get(t, 0) + part


def own_path_arrays(np, keys, grp, q, v, k, typical):
    """own_path() of every group of parts at once: parts (q their span, v ns, k
    the key's number in @keys, which gains the own-path keys) in groups @grp (the
    outlier or span of each, ascending with q), @typical ns per group (a number
    or an array). The new (q, v, k), zeros dropped, each span's own path last."""
    key_of = {key: n for n, key in enumerate(keys)}
    none = np.array([key[0] == C.NO_EVENT and key[:2] != C.HOST_STEAL for key in keys] or
                    [False], bool)
    e = np.flatnonzero(none[k] & (v > 0)) if len(k) else np.zeros(0, np.int64)
    if not len(e):
        return q, v, k
    order = sorted(range(len(keys)), key=lambda x: (str(keys[x][1]), keys[x][2] or ""))
    rank = np.zeros(len(keys), np.int64)
    rank[order] = np.arange(len(keys))
    e = e[np.lexsort((rank[k[e]], q[e]))]
    ge, ve = grp[e], v[e]
    G = int(ge.max()) + 1
    total = np.bincount(ge, weights=ve, minlength=G).astype(np.int64)
    typ = np.broadcast_to(np.asarray(typical, np.int64), (G,)) if np.ndim(typical) == 0 \
        else np.asarray(typical, np.int64)[:G]
    take = np.clip(np.minimum(typ, total), 0, None)[ge]
    tot = np.maximum(total[ge], 1)
    if len(take) and int(take.max()) * int(ve.max()) >= 1 << 62:     # as Python ints
        part = np.array([t * x // d for t, x, d in zip(take.tolist(), ve.tolist(),
                                                       tot.tolist())], np.int64)
    else:
        part = take * ve // tot
    last = np.ones(len(e), bool)
    last[:-1] = ge[1:] != ge[:-1]
    before = np.bincount(ge[~last], weights=part[~last], minlength=G).astype(np.int64)
    part[last] = np.clip(np.minimum(ve[last], take[last] - before[ge[last]]), 0, None)
    v = v.copy()
    v[e] -= part
    sides = [keys[x][2] for x in k[e].tolist()]
    for side in dict.fromkeys(sides):
        if C.TYPICAL + (side,) not in key_of:
            key_of[C.TYPICAL + (side,)] = len(keys)
            keys.append(C.TYPICAL + (side,))
    tk = np.array([key_of[C.TYPICAL + (side,)] for side in sides], np.int64)
    q, v, k = np.concatenate([q, q[e]]), np.concatenate([v, part]), np.concatenate([k, tk])
    keep = v > 0
    q, v, k = q[keep], v[keep], k[keep]
    order = np.argsort(q, kind="stable")
    return q[order], v[order], k[order]


def merge(spans):
    """[a, b, members] of the spans (a, b, [member]) merged where they overlap."""
    out = []
    for a, b, m in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
            out[-1][2] += m
        else:
            out.append([a, b, list(m)])
    return out


def budget_rows(budget):
    """attribution.budget: per phase, in order, the outliers that have it, the
    mean time its stamps measured and the mean charged to kernel events and the
    host (the rest: no kernel event, and in the send phase the backlog), the
    mean of that backlog, and the cause that took most of it."""
    out = []
    for phase in PHASES:
        if phase not in budget:
            continue
        n, measured, charged, late, by = budget[phase]
        row = {"phase": phase, "side": PHASE_SIDE[phase], "outliers": n,
               "measured_mean_ns": measured // n if n else 0,
               "charged_mean_ns": charged // n if n else 0}
        if late:
            row["backlog_mean_ns"] = late // n
        if by:
            k = max(sorted(by, key=_main_rank), key=by.get)
            row["dominant"] = {"category": k[0], "name": k[1], "side": k[2],
                               "share": round(by[k] / measured, 6) if measured else 0.0}
        out.append(row)
    return out
