# SPDX-License-Identifier: GPL-2.0-only
"""vector - attribute.py's numpy path: the outlier windows whose events the
walker would turn into one interruption (or none) are charged here, a whole
CPU's windows at a time; every other window still goes through the walker, so
the result is the walker's, exactly (analysis/tests/attribution/test_vector.py
compares the two on the same input).

A CPU's windows are taken in the walker's order (start, end, outlier). The
walker carries no state into a window that starts after every earlier one
ended ("fresh": it settles everything at the earlier end), and from there it
reads the events from its walk start s (the lookback, or where the last walk
stopped) to the window's last event i1. Such a window is simple when no
later window overlaps it and [s, i1) holds only interrupt-like entry/exit
pairs (irq, vector, softirq, hrtimer, timer) that nest properly from an empty
stack (open ones at the end allowed) and passive events: no context switch,
workqueue item, NMI or page fault. Its episodes are then the top-level entries
(a softirq joins the episode before it, as the walker's last_irq rule says),
and when exactly one episode reaches into the window and explains the outlier
(with the entry allowance), or none does, the outlier is charged whole to one
cause here. So is a window whose walk is such interrupts, then one preemption
of the probe (_preemptions). The rest - several episodes, interrupts inside a
preemption, lost events, a probe that waits, split steal - are the walker's.
"""
from ..trace import causes as C
from ..trace import events as ev

ENTRIES = (ev.IRQ_ENTRY, ev.SOFTIRQ_ENTRY, ev.VEC_ENTRY, ev.HRTIMER_ENTRY, ev.TIMER_ENTRY)
EXITS = tuple(t + 1 for t in ENTRIES)
PASSIVE = (ev.SOFTIRQ_RAISE, ev.WAKEUP, ev.WAKING, ev.MIGRATE, ev.STEAL, ev.TASK,
           ev.TICK_STOP)
# the key of a simple window's one cause: kind << 40 | detail
VEC, IRQ, SOFTIRQ, TICK, TIMER, OTHER, NO_EVENT, NOT_TRACED, PREEMPT = (
    k << 40 for k in range(1, 10))
KIND = (1 << 40) - 1
BIG = 1 << 62


class Windows:
    """One CPU's outlier windows in the walker's order, with where its walk of
    each starts and stops and which are charged here (arrays, one per field).

    For window k: oi the outlier, begin/hi/lo its bounds, i0/i1 its events
    [i0, i1) in the CPU's time order, pos the walker's position before it, back
    where a restart would begin (restart: whether it does), prev_hi the end of
    the windows before it (the least int64 for the first), fresh: no earlier
    window reaches into it. fast[k]: charged here with code[k] (the cause, see key()), traced[k]
    and walk start s[k] (to spell out its chain); sender[k]: the record of its
    IPI's vector entry where that names the sender (-1: none)."""


def _windows(np, ts, begin, hi, slack_ns, lookback_events, lookback_ns):
    """The walker's bookkeeping of sorted windows, as arrays."""
    lo = begin - slack_ns
    i0 = ts.searchsorted(lo, "left")
    i1 = ts.searchsorted(hi, "right")
    n = len(begin)
    top = np.maximum.accumulate(hi)
    prev_hi = np.empty(n, np.int64)
    prev_hi[0] = np.iinfo(np.int64).min
    prev_hi[1:] = top[:-1]
    fresh = lo > prev_hi
    fresh[0] = True
    pos = np.zeros(n, np.int64)
    pos[1:] = np.maximum.accumulate(i1)[:-1]
    back = np.maximum(i0 - lookback_events,
                      np.clip(ts.searchsorted(lo - lookback_ns, "left"), pos, i0))
    restart = (pos < i0) & (pos < back)
    s = np.where(restart, back, pos)
    return lo, i0, i1, prev_hi, fresh, pos, back, restart, s


def _LUT(np, types):
    """A table of the 256 types: True for @types."""
    lut = np.zeros(256, bool)
    lut[list(types)] = True
    return lut


class _Events:
    """One CPU's events in time order, as the arrays the rules below read."""

    def __init__(self, np, recs, ts, idx):
        self.ts, self.idx = ts, idx
        self.n = n = len(ts)
        T = self.T = recs["type"][idx]
        A = self.A = recs["a"][idx].view(np.int64)
        self.is_ent = is_ent = _LUT(np, ENTRIES)[T]
        self.is_exit = is_exit = _LUT(np, EXITS)[T]
        self._last_exit = None
        self.passive = _LUT(np, PASSIVE)[T]
        cplx = ~(is_ent | is_exit | self.passive)
        delta = is_ent.astype(np.int64) - is_exit
        self.depth = np.cumsum(delta)
        self.before = self.depth - delta
        # each exit's entry: the last entry at its nesting level before it
        iv = np.flatnonzero(is_ent | is_exit)
        lev = np.where(is_ent[iv], self.depth[iv], self.before[iv])
        if len(lev) and -30000 < lev.min() and lev.max() < 30000:
            lev = lev.astype(np.int16)      # a radix sort
        srt = np.argsort(lev, kind="stable")
        o, lev = iv[srt], lev[srt]
        a, b = o[:-1], o[1:]
        pair = (lev[:-1] == lev[1:]) & is_ent[a] & is_exit[b]
        a, b = a[pair], b[pair]
        self.closer = np.full(n, -1, np.int64)
        self.closer[a] = b
        ok = (T[a] + 1 == T[b]) & (A[a] == A[b])
        self.partner = np.full(n + 1, BIG, np.int64)
        self.partner[:n][is_exit] = -1      # no entry of its own kind before it
        self.partner[b[ok]] = a[ok]
        self.ncplx = self.prefix(np, cplx)

    @staticmethod
    def prefix(np, mask):
        """Counts of mask before each position (n + 1 of them)."""
        out = np.zeros(len(mask) + 1, np.int64)
        np.cumsum(mask, out=out[1:])
        return out

    def nested(self, np, cs, ce):
        """Which ranges [cs, ce) hold only interrupt-like pairs and passive events,
        every exit with its entry inside the range."""
        good = self.ncplx[ce] == self.ncplx[cs]
        if len(cs):
            bounds = np.empty(2 * len(cs), np.int64)
            bounds[0::2], bounds[1::2] = cs, ce
            low = np.minimum.reduceat(self.partner, np.minimum(bounds, self.n))[0::2]
            good &= (cs >= ce) | (low >= cs)
        return good

    def episodes(self, np, cs, ce, clo):
        """The walker's episodes of the nested ranges [cs, ce) (increasing, disjoint)
        whose windows start at clo: (range, begin, end (-1: open), event of the
        first entry), in time order."""
        ts, T, n = self.ts, self.T, self.n
        ent = np.flatnonzero(self.is_ent)
        gw = cs.searchsorted(ent, "right") - 1
        inside = gw >= 0
        inside[inside] = ent[inside] < ce[gw[inside]]
        base = self.before[np.minimum(cs, n - 1)] if n else cs
        inside[inside] &= self.depth[ent[inside]] == base[gw[inside]] + 1
        g, gw = ent[inside], gw[inside]     # the top-level entries: groups
        gbeg = ts[g]
        gcl = self.closer[g]
        gend = np.where((gcl >= 0) & (gcl < ce[gw]), ts[np.maximum(gcl, 0)], -1)
        gt = T[g]
        # a softirq joins the episode before it unless it starts in the window after
        # that one ended before it (the walker's last_irq rule)
        merge = np.zeros(len(g), bool)
        if len(g) > 1:
            wlo = clo[gw[1:]]
            merge[1:] = (gw[1:] == gw[:-1]) & (gt[1:] == ev.SOFTIRQ_ENTRY) & (
                (gend[:-1] >= wlo) | (gbeg[1:] < wlo))
        # a joined softirq still open at the range's end: the exits nested in it
        # (its timers) extend the episode all the same
        open_joined = merge & (gend < 0)
        if open_joined.any():
            q = self.last_exit(np)[np.maximum(ce[gw[open_joined]] - 1, 0)]
            gend[open_joined] = np.where(q >= g[open_joined], ts[np.maximum(q, 0)], -1)
        first = np.flatnonzero(~merge)
        end = np.maximum.reduceat(gend, first) if len(first) else gend
        return gw[first], gbeg[first], end, g[first]

    def last_exit(self, np):
        """The last exit at or before each position (-1: none)."""
        if self._last_exit is None:
            self._last_exit = np.maximum.accumulate(
                np.where(self.is_exit, np.arange(self.n), -1)) if self.n else \
                np.zeros(0, np.int64)
        return self._last_exit


def _clipped(np, beg, end, lo, hi):
    """An episode's time inside [lo, hi] (end -1: still open at hi)."""
    b = np.maximum(beg, lo)
    e = np.where((end < 0) | (end > hi), hi, end)
    return np.where(e > b, e - b, 0)


def plan(np, log, cpu, outs, slack_ns, lookback_events, lookback_ns, allowance_ns,
         n_vectors, stolen, probe_pid, comms):
    """The Windows of @cpu's outliers @outs (an (n, 3) int64 array of begin, hi,
    outlier index, any order). @stolen: None (steal not measured) or {(cpu,
    start): ns}; a simple window with no episode and some steal is left to the
    walker unless the steal covers all of it or none. @probe_pid, @comms: as
    scan_switches found them."""
    recs, ts, idx = log.arrays(cpu)
    order = np.lexsort((outs[:, 2], outs[:, 1], outs[:, 0]))
    outs = outs[order]
    begin, hi, oi = outs[:, 0], outs[:, 1], outs[:, 2]
    w = Windows()
    w.cpu, w.oi, w.begin, w.hi = cpu, oi, begin, hi
    (w.lo, w.i0, w.i1, w.prev_hi, w.fresh, w.pos, w.back, w.restart,
     w.s) = _windows(np, ts, begin, hi, slack_ns, lookback_events, lookback_ns)
    m = len(begin)
    i1, s = w.i1, w.s
    length = hi - begin
    w.fast = np.zeros(m, bool)
    w.code = np.zeros(m, np.int64)
    w.traced = np.zeros(m, np.int64)
    w.sender = np.full(m, -1, np.int64)     # an IPI's vector entry with its sender: its record
    w.irq_names, w.task_names = [], []
    E = _Events(np, recs, ts, idx)
    # candidates: windows no other window touches
    single = w.fresh.copy()
    single[:-1] &= w.fresh[1:]
    cand = np.flatnonzero(single)
    nested = E.nested(np, s[cand], i1[cand])
    rest, cand = cand[~nested], cand[nested]
    if len(cand):
        _interrupts(np, w, E, recs, cand, length, allowance_ns, n_vectors, stolen)
    if len(rest) and probe_pid is not None:
        _preemptions(np, w, E, recs, rest, length, allowance_ns, probe_pid, comms)
    if stolen:      # the host's steal is charged first: the walker's
        kinds = w.code & ~KIND
        for k in np.flatnonzero(w.fast & (kinds != NO_EVENT)).tolist():
            if stolen.get((cpu, int(begin[k]))):
                w.fast[k] = False
    return w


def _interrupts(np, w, E, recs, cand, length, allowance_ns, n_vectors, stolen):
    """The nested windows @cand: charged here when one episode explains the
    outlier, or none is in it."""
    T, A, n, idx = E.T, E.A, E.n, E.idx
    lo, hi, i0, i1, s = w.lo, w.hi, w.i0, w.i1, w.s
    clo, chi = lo[cand], hi[cand]
    ep_w, ep_beg, ep_end, gpos = E.episodes(np, s[cand], i1[cand], clo)
    kept = (ep_end < 0) | (ep_end >= clo[ep_w])
    ep_w, ep_beg, ep_end, gpos = ep_w[kept], ep_beg[kept], ep_end[kept], gpos[kept]
    d = _clipped(np, ep_beg, ep_end, clo[ep_w], chi[ep_w])
    found = np.bincount(ep_w, minlength=len(cand))
    # one episode that explains the outlier: charged whole to it
    one = found[ep_w] == 1
    ep_w, d, gpos = ep_w[one], d[one], gpos[one]
    wl = length[cand][ep_w]
    traced = np.minimum(d, wl)
    whole = traced + allowance_ns >= wl
    ep_w, traced, gpos = ep_w[whole], traced[whole], gpos[whole]
    kind = T[gpos]
    code = np.zeros(len(gpos), np.int64)
    bvec = recs["b"][idx[gpos]]
    code = np.where(kind == ev.VEC_ENTRY, VEC | np.minimum(bvec, n_vectors).astype(np.int64),
                    code)
    code = np.where(kind == ev.HRTIMER_ENTRY, TICK, code)
    code = np.where(kind == ev.TIMER_ENTRY, TIMER, code)
    soft = kind == ev.SOFTIRQ_ENTRY
    code = np.where(soft, SOFTIRQ | np.clip(A[gpos], 0, KIND), code)
    odd = soft & ((A[gpos] < 0) | (A[gpos] >= KIND))   # a damaged vector: the walker's
    ep_w, traced, code, gpos, kind = (x[~odd] for x in (ep_w, traced, code, gpos, kind))
    irq = np.flatnonzero(kind == ev.IRQ_ENTRY)
    if len(irq):
        both = np.empty(len(irq), dtype=[("a", "<u8"), ("raw", "V32")])
        both["a"] = recs["a"][idx[gpos[irq]]]
        both["raw"] = recs["raw"][idx[gpos[irq]]]
        uniq, inv = np.unique(both.view("V40"), return_inverse=True)
        for u in uniq:
            r = bytes(u)
            w.irq_names.append("%d %s" % (int.from_bytes(r[:8], "little"), ev.cstr(r[8:])))
        code[irq] = IRQ | inv.reshape(-1)
    k = cand[ep_w]
    w.fast[k] = True
    w.code[k] = code
    w.traced[k] = traced
    sent = (kind == ev.VEC_ENTRY) & ((recs["flags"][idx[gpos]] & ev.VEC_SENDER) != 0)
    w.sender[k[sent]] = idx[gpos[sent]]
    # no episode: the events' types ("other events"), or no kernel event
    none = cand[found == 0]
    if len(none):
        bits = np.zeros(n + 1, np.int64)
        bits[:n] = np.left_shift(1, T.astype(np.int64)) & ~(1 << ev.STEAL | 1 << ev.TICK_STOP)
        bounds = np.empty(2 * len(none), np.int64)
        bounds[0::2], bounds[1::2] = i0[none], i1[none]
        mask = np.bitwise_or.reduceat(bits, np.minimum(bounds, n))[0::2]
        mask = np.where(i1[none] > i0[none], mask, 0)
        code = np.where(mask != 0, OTHER | mask, NO_EVENT)
        keep = np.ones(len(none), bool)
        if stolen is not None:      # the walker splits an outlier's steal
            starts, lens = w.begin[none].tolist(), length[none].tolist()
            for j in np.flatnonzero(code == NO_EVENT).tolist():
                got = stolen.get((w.cpu, starts[j]))
                if got is not None and 0 < got < lens[j]:
                    keep[j] = False
                elif got is not None:
                    code[j] = NO_EVENT | (1 if got else 2)
        w.fast[none[keep]] = True
        w.code[none[keep]] = code[keep]


def _preemptions(np, w, E, recs, cand, length, allowance_ns, probe, comms):
    """The windows @cand whose walk holds one preemption of the probe: nested
    interrupts, then the probe switched out while runnable, then (while the
    other task runs) only its own work - workqueue items, softirqs, timers - and
    at most the switch back to the probe, with nothing after it. The probe never
    waits on this CPU (else the walker's blocked state would matter). Charged
    here to the task switched in when the preemption, with the interrupt just
    before it as its head, is the window's one episode and explains it."""
    T, ts, idx, n = E.T, E.ts, E.idx, E.n
    sw = np.flatnonzero(T == ev.SWITCH)
    if not len(sw):
        return
    a = recs["a"][idx[sw]]
    prev = (a & np.uint64(0xffffffff)).astype(np.int64)
    nxt = (a >> np.uint64(32)).astype(np.int64)
    runnable = (recs["flags"][idx[sw]] & 1).astype(bool)
    if ((prev == probe) & ~runnable).any():
        return                      # the probe waits here: the walker's
    b_sw = recs["b"][idx[sw]]
    prev_prio = (b_sw & np.uint64(0xffff)).astype(np.int64)
    next_prio = ((b_sw >> np.uint64(16)) & np.uint64(0xffff)).astype(np.int64)
    # a real-time probe that loses its CPU to idle or a lower priority: RT
    # throttling, the walker's
    throttled = (prev_prio < C.RT_PRIO_END) & ((nxt == C.IDLE_PID) | (next_prio > prev_prio))
    lo, hi, i1, s = w.lo, w.hi, w.i1, w.s
    k = sw.searchsorted(s[cand], "left")
    has = k < len(sw)
    has[has] = sw[k[has]] < i1[cand[has]]
    cand, k = cand[has], k[has]
    out = sw[k]                     # the switch out
    good = (prev[k] == probe) & runnable[k] & (nxt[k] != probe) & ~throttled[k]
    k2 = np.minimum(k + 1, len(sw) - 1)
    back = (k + 1 < len(sw)) & (sw[k2] < i1[cand])
    good &= ~back | (nxt[k2] == probe)
    stop = np.where(back, sw[k2], i1[cand])     # the preemption's last event
    # while preempted: no interrupt of its own (a new episode), no event of the probe
    own = E.prefix(np, ~E.passive & (_LUT(np, (ev.VEC_ENTRY, ev.IRQ_ENTRY, ev.NMI,
                                              ev.PF_USER, ev.PF_KERNEL))[T] |
                                     (recs["pid"][idx] == probe) | (T > ev.STEAL) |
                                     (T == 0)))
    good &= own[stop] == own[out + 1]
    active = E.prefix(np, ~E.passive)
    after = np.where(back, stop + 1, i1[cand])
    good &= active[i1[cand]] == active[after]   # nothing after the switch back
    # before it: nested interrupts, all closed by the switch
    good &= E.nested(np, s[cand], out) & (E.before[out] == E.before[np.minimum(s[cand], n - 1)])
    cand, k, out, back, stop = (x[good] for x in (cand, k, out, back, stop))
    if not len(cand):
        return
    clo, chi = lo[cand], hi[cand]
    ep_w, ep_beg, ep_end, _ = E.episodes(np, s[cand], out, clo)
    # the last episode before the switch is its head when it reaches the window;
    # any other that does is an episode of its own (the walker's)
    last = np.ones(len(ep_w), bool)
    last[:-1] = ep_w[:-1] != ep_w[1:]
    alone = np.ones(len(cand), bool)
    alone[ep_w[~last & (ep_end >= clo[ep_w])]] = False
    head = np.zeros(len(cand), np.int64)
    has_head = np.zeros(len(cand), bool)
    reach = last & (ep_end >= clo[ep_w])
    head[ep_w[reach]] = ep_beg[reach]
    has_head[ep_w[reach]] = True
    begin = np.where(has_head, head, ts[out])
    end = np.where(back, ts[np.minimum(stop, n - 1)], -1)
    found = alone & ((end < 0) | (end >= clo))
    d = _clipped(np, begin, end, clo, chi)
    wl = length[cand]
    traced = np.minimum(d, wl)
    whole = found & (traced + allowance_ns >= wl)
    cand, k, out, traced = cand[whole], k[whole], out[whole], traced[whole]
    if not len(cand):
        return
    # the task: next pid, prio and comm of the switch out
    rec = idx[out]
    who = np.empty(len(cand), dtype=[("pid", "<i8"), ("prio", "<i8"), ("comm", "V16")])
    who["pid"] = nxt[k]
    who["prio"] = ((recs["b"][rec] >> np.uint64(16)) & np.uint64(0xffff)).astype(np.int64)
    who["comm"] = np.ascontiguousarray(recs["raw"][rec]).view(np.uint8).reshape(-1, 32)[
        :, 16:].copy().view("V16").reshape(-1)
    uniq, inv = np.unique(who.view("V32"), return_inverse=True)
    for u in uniq:
        r = bytes(u)
        pid, prio = int.from_bytes(r[:8], "little"), int.from_bytes(r[8:16], "little")
        w.task_names.append(C.Task(ev.cstr(r[16:]) or comms.get(pid) or "", pid, prio))
    w.fast[cand] = True
    w.code[cand] = PREEMPT | inv.reshape(-1)
    w.traced[cand] = traced


def key(code, vec_desc, names, softirq_name, no_event):
    """The (category, name) of a window's code; names: {IRQ: [irq names],
    PREEMPT: [Task]}; no_event: the three no-kernel-event causes (not
    measured, host steal, VM exits) by the code's detail."""
    kind, detail = code & ~KIND, code & KIND
    if kind == VEC:
        return vec_desc[detail][:2]
    if kind == IRQ:
        return C.HARDIRQ, names[IRQ][detail]
    if kind == PREEMPT:
        return C.TASK, names[PREEMPT][detail]
    if kind == SOFTIRQ:
        return C.SOFTIRQ, softirq_name(detail)
    if kind == TICK:
        return C.LOCAL_TIMER
    if kind == TIMER:
        return C.TIMER_SOFTIRQ
    if kind == OTHER:
        names = {ev.TYPE_NAMES.get(t, "type ?") for t in range(64) if detail >> t & 1}
        return C.OTHER, ", ".join(sorted(names))
    return no_event[detail]


def switches(np, log, programs=None):
    """attribute.scan_switches with numpy: ({cpu: probe pid}, {pid: comm}); the
    comms are gathered when first asked for (most windows never ask)."""
    recs = log.arrays(None)[0]
    types = np.array(recs["type"])
    at = np.flatnonzero(types == ev.SWITCH)
    cpu, flags = recs["cpu"][at].astype(np.int64), recs["flags"][at]
    a = recs["a"][at]
    prev = (a & np.uint64(0xffffffff)).astype(np.int64)
    counts = {}
    ran = (flags & 1).astype(bool) & (prev != 0)    # the idle task is never the probe
    for k, n in zip(*(x.tolist() for x in np.unique(cpu[ran] << 32 | prev[ran],
                                                      return_counts=True))):
        counts.setdefault(k >> 32, {})[k & 0xffffffff] = n
    if programs and len(at):
        comm = np.ascontiguousarray(recs["raw"][at]).view("S16")[0::2]
        texts, inv = np.unique(comm, return_inverse=True)
        names = np.array([ev.cstr(t) for t in texts.tolist()] + [""], object)
        # each switch's task's time on the CPU: since the switch before on that CPU
        ts = recs["ts_ns"][at].astype(np.int64)
        ran = np.ones(len(at), np.int64)
        for c in programs:
            on = np.flatnonzero(cpu == c)
            if len(on) > 1:
                d = np.diff(ts[on])
                ran[on[1:]] = np.where(d > 0, d, 1)
        for c, name in programs.items():
            sel = (cpu == c) & (names[inv.reshape(-1)] == name)
            if sel.any():
                pids, where = np.unique(prev[sel], return_inverse=True)
                counts[c] = dict(zip(pids.tolist(),
                                     np.bincount(where.reshape(-1),
                                                 weights=ran[sel]).tolist()))
    return {c: max(per, key=per.get) for c, per in counts.items()}, \
        _Comms(lambda: _comms(np, recs, types, at, prev, a))


class _Comms(dict):
    """{pid: comm}, filled by @fill on the first look."""

    def __init__(self, fill):
        super().__init__()
        self.fill = fill

    def __bool__(self):
        return True

    def get(self, pid, default=None):
        """The comm of pid (default when none named it)."""
        if self.fill is not None:
            self.update(self.fill())
            self.fill = None
        return super().get(pid, default)


def _comms(np, recs, types, at, prev, a):
    """scan_switches' comms: the last naming of each pid by a switch (prev, then
    next, of each record in order), else its first by a wake-up or migration."""
    raw = np.ascontiguousarray(recs["raw"][at]).view(np.uint8).reshape(-1, 32)
    comm = np.ascontiguousarray(raw).view("S16").reshape(-1)    # prev, next, prev, ...
    pid = np.empty(2 * len(at), np.int64)
    pid[0::2], pid[1::2] = prev, (a >> np.uint64(32)).astype(np.int64)
    has = raw[:, [0, 16]].reshape(-1) != 0
    pid, comm = pid[has], comm[has]
    last = len(pid) - 1 - np.unique(pid[::-1], return_index=True)[1]
    comms = dict(zip(pid[last].tolist(), comm[last].tolist()))
    first_byte = np.frombuffer(recs, np.uint8).reshape(-1, ev.RECORD_SIZE)[:, ev.RAW_OFFSET] \
        if len(recs) else np.zeros(0, np.uint8)
    for t in (ev.WAKEUP, ev.WAKING, ev.MIGRATE):
        at = np.flatnonzero((types == t) & (first_byte != 0))
        p, first = np.unique(recs["a"][at] & np.uint64(0xffffffff), return_index=True)
        text = np.ascontiguousarray(recs["raw"][at[first]]).view("S32").reshape(-1)
        for pp, cc in zip(p.tolist(), text.tolist()):
            comms.setdefault(pp, cc[:16])
    return {p: ev.cstr(c) for p, c in comms.items()}
