# SPDX-License-Identifier: GPL-2.0-only
"""perfetto - a run's kernel events and outliers as a Trace Event JSON file (the
Chrome trace format) that Perfetto (ui.perfetto.dev) and chrome://tracing open.

Each traced CPU is a process "CPU n" (pid PID_BASE + n, sorted by CPU) with
threads (tracks):
  outliers    the probe's runs on that CPU, each outlier a slice inside them, named
              by its cause's category and carrying its causes in args; outliers
              that overlap part-way (round trips a stall held together, timed
              from their intended send) go to "outliers 2", ... (at most
              MAX_LANES threads)
  interrupts  hardirqs (irq_handler entry..exit), irq_vectors (local timer = the
              tick, IPIs: reschedule, call_function, irq_work, ...), NMIs, and the
              hrtimers they expire nested inside them
  softirqs    softirq entry..exit with the timers they expire (softirq_raise is
              left out: the softirq's own slice follows it)
  tasks       who ran on the CPU (sched_switch to sched_switch), workqueue items
              inside the kworker that ran them; page faults, wake-ups and
              migrations as instants
and a counter "host steal" (ms the host took from the vCPU since the first
reading, kvm steal_time) where the log has it.

Slices on one thread nest properly, as Perfetto needs: entries and exits are
paired with a stack per thread in time order, so a slice ends when its exit
comes or, when that exit is not in the log, when the slice around it ends (args
"exit": "not in the log"); an exit whose entry is not in the log is an instant.
Times are CLOCK_MONOTONIC ns written as us with three decimals (exact), from
the earliest time in the file (zero_ns in otherData). The text comes out in
pieces (trace_chunks, CHUNK_EVENTS events each) that can be written as they come.
"""
import json

from ..trace import causes as C
from ..trace import events as ev
from ..units import fmt_ns

PID_BASE = 1000         # CPU n is process 1000 + n: Perfetto keeps pid 0 for the idle task
FORMAT = "jtr-perfetto/1"
CHUNK_EVENTS = 4096     # trace events per piece of text

# the threads of a CPU's process: tid = pid * 100 + number
OUTLIERS, INTERRUPTS, SOFTIRQS, TASKS = 1, 2, 3, 4
LANE_BASE = 10          # outliers overlapping others: threads 11, 12, ...
MAX_LANES = 64          # threads of outliers on one CPU at most
THREAD_NAMES = {OUTLIERS: "outliers", INTERRUPTS: "interrupts", SOFTIRQS: "softirqs",
                TASKS: "tasks"}
NO_EXIT = "not in the log"


_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_TEXTS = {}             # the JSON of each name and category seen: a few hundred recur
TEXTS_MAX = 65536


def _js(v):
    """Compact JSON, UTF-8 left as is (old Perfetto refuses \\u escapes); one encoder
    for all (json.dumps with options makes one a call: a third of the export's time),
    the text of each string kept, a flat object's members written here (the
    encoder took 6 us for an event's few args)."""
    tv = type(v)
    if tv is str:
        t = _TEXTS.get(v)
        if t is None:
            if len(_TEXTS) >= TEXTS_MAX:
                _TEXTS.clear()
            t = _TEXTS[v] = _ENCODE(v)
        return t
    if tv is dict:
        parts = []
        for k, x in v.items():
            tx = type(x)
            if type(k) is not str or not (tx is int or tx is str):
                return _ENCODE(v)
            parts.append("%s:%s" % (_js(k), x if tx is int else _js(x)))
        return "{" + ",".join(parts) + "}"
    return _ENCODE(v)


def _us(ns):
    """ns >= 0 as us with three decimals, exactly: 1234567 -> '1234.567'."""
    return "%d.%03d" % divmod(ns, 1000)


def _tid(pid, number):
    return pid * 100 + number


def _pid(cpu):
    return PID_BASE + cpu


class _Out:
    """Collects trace events (JSON text each) and hands them out in pieces."""

    def __init__(self, t0):
        self.t0 = t0
        self.lines = []
        self.count = 0
        self.named = set()

    def thread(self, pid, tid):
        """Name a thread (and sort it) before its first event."""
        self.named.add(tid)
        k = tid - pid * 100
        self.meta(pid, tid, "thread_name",
                  {"name": THREAD_NAMES.get(k) or "outliers %d" % (k - LANE_BASE + 1)})
        # the outliers' threads first, then interrupts, softirqs, tasks
        sort = k - LANE_BASE if k >= LANE_BASE else 0 if k == OUTLIERS else 100 + k
        self.meta(pid, tid, "thread_sort_index", {"sort_index": sort})

    def slice(self, pid, tid, name, cat, start, end, args):
        if tid not in self.named:
            self.thread(pid, tid)
        # _us() written out: two calls fewer a slice
        self.lines.append(
            '{"ph":"X","pid":%d,"tid":%d,"ts":%d.%03d,"dur":%d.%03d,"name":%s,"cat":%s,'
            '"args":%s}' % (pid, tid, *divmod(start - self.t0, 1000), *divmod(end - start, 1000),
                            _js(name), _js(cat), _js(args)))

    def instant(self, pid, tid, name, cat, ts, args):
        if tid not in self.named:
            self.thread(pid, tid)
        self.lines.append(
            '{"ph":"i","s":"t","pid":%d,"tid":%d,"ts":%s,"name":%s,"cat":%s,"args":%s}'
            % (pid, tid, _us(ts - self.t0), _js(name), _js(cat), _js(args)))

    def counter(self, pid, name, ts, args):
        self.lines.append('{"ph":"C","pid":%d,"ts":%s,"name":%s,"args":%s}'
                          % (pid, _us(ts - self.t0), _js(name), _js(args)))

    def meta(self, pid, tid, name, args):
        tid_part = "" if tid is None else '"tid":%d,' % tid
        self.lines.append('{"ph":"M","pid":%d,%s"name":%s,"args":%s}'
                          % (pid, tid_part, _js(name), _js(args)))

    def take(self, least=None):
        """The events collected so far as one piece of text (None while fewer than
        @least, CHUNK_EVENTS by default), the first without a leading comma."""
        if not self.lines or len(self.lines) < (CHUNK_EVENTS if least is None else least):
            return None
        text = ("" if self.count == 0 else ",\n") + ",\n".join(self.lines)
        self.count += len(self.lines)
        self.lines = []
        return text


class _Cpu:
    """The kernel-event tracks of one CPU: entries and exits paired with a stack
    per thread in time order, so what is written nests."""

    def __init__(self, out, cpu, log):
        self.out = out
        self.pid = _pid(cpu)
        self.log = log
        self.vectors = log.vectors
        self.stacks = {INTERRUPTS: [], SOFTIRQS: [], TASKS: []}
        self.mark = {INTERRUPTS: 0, SOFTIRQS: 0, TASKS: 0}     # latest push or close
        self.where = {}         # timer key -> the thread it was pushed on
        self.cut = set()        # workqueue items closed by a switch: their end is no orphan
        self.steal_base = None
        self.last_ts = 0

    def push(self, track, key, ts, name, cat, args):
        self.stacks[track].append([key, ts, name, cat, args])
        self.mark[track] = ts

    def close(self, track, item, ts, lost=False):
        key, start, name, cat, args = item
        if lost:
            args["exit"] = NO_EXIT
        self.out.slice(self.pid, _tid(self.pid, track), name, cat, start, ts, args)
        self.mark[track] = ts

    def pop(self, track, key, ts, more=None):
        """Close the open slice @key at @ts (and, first, the slices opened inside
        it whose exits are not in the log); False when it is not open."""
        stack = self.stacks[track]
        for k in range(len(stack) - 1, -1, -1):
            if stack[k][0] == key:
                while len(stack) > k + 1:
                    self.close(track, stack.pop(), ts, lost=True)
                item = stack.pop()
                if more:
                    item[4].update(more)
                self.close(track, item, ts)
                return True
        return False

    def orphan(self, track, e, what):
        """An exit whose entry is not in the log: an instant."""
        self.out.instant(self.pid, _tid(self.pid, track), "%s (entry not in the log)" % what,
                         "exit", e.ts_ns, {"event": ev.describe(e, self.log.meta)})

    def instant(self, track, e, name, cat):
        self.out.instant(self.pid, _tid(self.pid, track), name, cat, e.ts_ns,
                         {"event": ev.describe(e, self.log.meta)})

    def timer_track(self):
        """Where an expiring timer runs: inside the open interrupt, else inside
        the open softirq, else (its interrupt not in the log) on interrupts."""
        if self.stacks[INTERRUPTS] or not self.stacks[SOFTIRQS]:
            return INTERRUPTS
        return SOFTIRQS

    def switch(self, e):
        """sched_switch: the task running so far ends, the next one starts."""
        stack = self.stacks[TASKS]
        prev_pid, next_pid = e.a & 0xffffffff, e.a >> 32
        prev_prio, next_prio = e.b & 0xffff, (e.b >> 16) & 0xffff
        state = ev.task_state(e.b >> 32, e.flags & 1)
        while len(stack) > 1:           # workqueue items the task was switched out in
            item = stack.pop()
            self.cut.add(item[0])
            item[4]["switched out"] = True
            self.close(TASKS, item, e.ts_ns)
        if stack:
            item = stack.pop()
            item[4]["state"] = state
            if item[4]["pid"] != prev_pid:
                item[4]["switched out as"] = "%s (pid %d)" % (e.prev_comm, prev_pid)
            self.close(TASKS, item, e.ts_ns)
        else:                           # the first switch: prev ran since the log's start
            start = min(self.log.start_ns, e.ts_ns)
            self.out.slice(self.pid, _tid(self.pid, TASKS), task_name(e.prev_comm, prev_pid),
                           "task", start, e.ts_ns, {
                               "pid": prev_pid, "prio": prev_prio, "state": state,
                               "since": "the log's start (no earlier switch in it)"})
        self.push(TASKS, "task", e.ts_ns, task_name(e.next_comm, next_pid), "task",
                  {"pid": next_pid, "prio": next_prio})

    def event(self, e):
        """One event of this CPU, in time order."""
        t, a, b = e.type, e.a, e.b
        self.last_ts = e.ts_ns
        if t == ev.VEC_ENTRY:
            kind = self.log.vector_kind(b)
            self.push(INTERRUPTS, ("vec", a), e.ts_ns, vector_name(kind),
                      vector_category(kind), {"vector": a})
        elif t == ev.VEC_EXIT:
            if not self.pop(INTERRUPTS, ("vec", a), e.ts_ns):
                self.orphan(INTERRUPTS, e, vector_name(self.log.vector_kind(b)))
        elif t == ev.IRQ_ENTRY:
            self.push(INTERRUPTS, ("irq", a), e.ts_ns, "irq %d %s" % (a, e.text), C.HARDIRQ,
                      {"irq": a, "action": e.text})
        elif t == ev.IRQ_EXIT:
            ret = {0: "unhandled", 1: "handled", 2: "wake_thread"}.get(b, str(b))
            if not self.pop(INTERRUPTS, ("irq", a), e.ts_ns, {"ret": ret}):
                self.orphan(INTERRUPTS, e, "irq %d" % a)
        elif t == ev.SOFTIRQ_ENTRY:
            self.push(SOFTIRQS, ("softirq", a), e.ts_ns, "softirq " + softirq_name(a),
                      C.SOFTIRQ, {"vec": a})
        elif t == ev.SOFTIRQ_EXIT:
            if not self.pop(SOFTIRQS, ("softirq", a), e.ts_ns):
                self.orphan(SOFTIRQS, e, "softirq " + softirq_name(a))
        elif t == ev.SOFTIRQ_RAISE:
            pass                # its softirq's slice follows; a raise adds nothing to read
        elif t in (ev.HRTIMER_ENTRY, ev.TIMER_ENTRY):
            what = "hrtimer" if t == ev.HRTIMER_ENTRY else "timer"
            track = self.timer_track()
            self.where[(what, a)] = track
            args = {"function": self.log.symbol(b)}
            if t == ev.HRTIMER_ENTRY and e.x[0] and e.ts_ns >= e.x[0]:
                args["late_ns"] = e.ts_ns - e.x[0]
            self.push(track, (what, a), e.ts_ns, "%s %s" % (what, self.log.symbol(b)), "timer",
                      args)
        elif t in (ev.HRTIMER_EXIT, ev.TIMER_EXIT):
            what = "hrtimer" if t == ev.HRTIMER_EXIT else "timer"
            track = self.where.pop((what, a), INTERRUPTS)
            if not self.pop(track, (what, a), e.ts_ns):
                self.orphan(track, e, what)
        elif t == ev.NMI:
            # the tracepoint fires at the handler's end with its length: a slice
            # back from here, starting no earlier than what is open or closed
            start = max(e.ts_ns - b, self.mark[INTERRUPTS])
            self.out.slice(self.pid, _tid(self.pid, INTERRUPTS), "NMI " + self.log.symbol(a),
                           C.NMI, start, e.ts_ns, {"handler": self.log.symbol(a),
                                                   "handled": bool(e.flags), "delta_ns": b})
            self.mark[INTERRUPTS] = e.ts_ns
        elif t == ev.SWITCH:
            self.switch(e)
        elif t == ev.WQ_START:
            if not self.stacks[TASKS]:      # its kworker's switch-in is not in the log
                self.push(TASKS, "task", e.ts_ns, task_name("", e.pid), "task",
                          {"pid": e.pid, "since": "its first event (no switch in the log)"})
            self.cut.discard(("wq", a))
            self.push(TASKS, ("wq", a), e.ts_ns, "workqueue " + self.log.symbol(b), "workqueue",
                      {"function": self.log.symbol(b)})
        elif t == ev.WQ_END:
            if not self.pop(TASKS, ("wq", a), e.ts_ns) and ("wq", a) not in self.cut:
                self.orphan(TASKS, e, "workqueue")
            self.cut.discard(("wq", a))
        elif t in (ev.PF_USER, ev.PF_KERNEL):
            self.instant(TASKS, e, "page fault " + ("user" if t == ev.PF_USER else "kernel"),
                         C.PAGE_FAULT)
        elif t in (ev.WAKEUP, ev.WAKING):
            self.instant(TASKS, e, "%s %s" % ("wakeup" if t == ev.WAKEUP else "waking",
                                              task_name(e.text, a)), "wakeup")
        elif t == ev.MIGRATE:
            self.instant(TASKS, e, "migrate %s" % task_name(e.text, a), "migrate")
        elif t == ev.STEAL:
            if self.steal_base is None:
                self.steal_base = b
            self.out.counter(self.pid, "host steal", e.ts_ns,
                             {"ms": round((a - self.steal_base) / 1e6, 6)})
        else:
            self.instant(TASKS, e, e.type_name, "other")

    def finish(self, end_ns):
        """Close what is still open at the log's end (or its last event, if later)."""
        end_ns = max(end_ns, self.last_ts)
        for track, stack in self.stacks.items():
            while stack:
                item = stack.pop()
                if track == TASKS and item[0] == "task":
                    item[4]["until"] = "the log's end"
                    self.close(track, item, max(end_ns, item[1]))
                else:
                    self.close(track, item, max(end_ns, item[1]), lost=True)


def task_name(comm, pid):
    """'kworker/1:2 (pid 123)', 'pid 123' without a comm."""
    return "%s (pid %d)" % (comm, pid) if comm else "pid %d" % pid


softirq_name = C.softirq


def vector_name(kind):
    """The slice name of an irq_vectors kind: the tick is 'local timer'."""
    return "local timer" if kind == "local_timer" else kind


def vector_category(kind):
    """The attribution's category of a vector kind."""
    return C.vector(kind)[0]


def cause_text(category, name):
    return "%s: %s" % (category, name) if name else category


def outlier_slices(table, walked=None, worst=(), extra=None):
    """[(cpu, start_ns, length_ns, name, args)] of the outliers of @table (an
    OutlierLog), in log order, named by the category of their cause: from
    @walked ({(cpu, start_ns): parts [(category, name, ns)], largest first}: the
    attribution's charges per outlier), else from their row in @worst (the
    attribution's worst, which adds their chains), else "outlier". @extra
    ({(cpu, start_ns): {arg: value}}) adds args."""
    chains = {(w.get("cpu"), w.get("start_ns")): w for w in worst or ()
              if isinstance(w, dict)}
    columns = [(k, table.column(k)) for k in table.columns]
    out = []
    for i, (cpu, start, length) in enumerate(table.rows):
        args = {"outlier": i + 1, "length": fmt_ns(length), "length_ns": length}
        parts = walked.get((cpu, start)) if walked else None
        name = "outlier"
        if parts:
            name = parts[0][0]
            args["cause"] = cause_text(parts[0][0], parts[0][1])
            if len(parts) > 1:
                args["parts"] = ["%s %s" % (cause_text(c, n), fmt_ns(ns)) for c, n, ns in parts]
        w = chains.get((cpu, start))
        if w is not None:
            if not parts:
                name = w.get("category") or name
                args["cause"] = cause_text(w.get("category"), w.get("name"))
            args["chain"] = w.get("chain")
            args["events"] = w.get("events")
        for k, col in columns:
            args[k] = col[i]
        if extra and (cpu, start) in extra:
            args.update(extra[(cpu, start)])
        out.append((cpu, start, length, name, args))
    return out


def run_slices(result):
    """[(cpu, start_ns, end_ns, name, args)] of a result's runs that say their CPU
    and CLOCK_MONOTONIC span: the probe's run under its outliers."""
    out = []
    tool = result.get("tool") or "run"
    for r in result.get("runs") or ():
        if not isinstance(r, dict):
            continue
        cpu, t0, d = r.get("cpu"), r.get("start_mono_ns"), r.get("duration_ns")
        if not (isinstance(cpu, int) and cpu >= 0 and isinstance(t0, int) and
                isinstance(d, int) and t0 >= 0 and d >= 0):
            continue
        args = {"run": r.get("name"), "samples": r.get("samples")}
        pct = r.get("percentiles_ns") or {}
        for k in ("50", "99", "99.99"):
            if isinstance(pct.get(k), (int, float)):
                args["p" + k] = fmt_ns(pct[k])
        if isinstance(r.get("max_ns"), (int, float)):
            args["max"] = fmt_ns(r["max_ns"])
        o = r.get("outliers") or {}
        if isinstance(o, dict) and o.get("count") is not None:
            args["outliers"] = o.get("count")
        if isinstance(r.get("lost_time_pct"), (int, float)):
            args["lost"] = "%.3f %%" % r["lost_time_pct"]
        out.append((cpu, t0, t0 + d, "%s %s" % (tool, r.get("name") or "run"), args))
    return out


def _lanes(items):
    """[(lane, item)] of (start, end, name, cat, args) items: in a lane (0, 1, ...)
    items nest or follow each other; one that overlaps another part-way goes to
    the next lane. Past MAX_LANES an item is drawn inside what is open in the
    last lane, shorter (args "drawn_ns"; its length stays in "length_ns")."""
    lanes = []                  # per lane: the ends of the items open in it
    out = []
    for it in sorted(items, key=lambda it: (it[0], -it[1])):
        start, end = it[0], it[1]
        for n, stack in enumerate(lanes):
            while stack and stack[-1] <= start:
                stack.pop()
            if not stack or stack[-1] >= end:
                stack.append(end)
                out.append((n, it))
                break
        else:
            if len(lanes) < MAX_LANES:
                lanes.append([end])
                out.append((len(lanes) - 1, it))
                continue
            stack = lanes[-1]
            end = stack[-1]     # > start: the ends at or before it were let go above
            args = dict(it[4], drawn_ns=end - start)
            args["drawn"] = "shorter: more than %d outliers overlap here" % MAX_LANES
            stack.append(end)
            out.append((len(lanes) - 1, (start, end) + tuple(it[2:4]) + (args,)))
    return out


def zero_ns(log, outliers=(), runs=()):
    """The time written as 0: the earliest of the log's start, its first event,
    the first outlier and the first run."""
    times = [o[1] for o in outliers] + [r[1] for r in runs]
    if log is not None:
        times += [log.start_ns] + [ts[0] for ts in log.cpu_ts.values() if len(ts)]
    return min(times) if times else 0


def cpus_traced(log):
    """The CPUs the tracer recorded (trace.json "cpus") and those with events."""
    return set(log.meta.get("cpus") or ()) | set(log.cpu_ts)


def trace_chunks(log, outliers=(), runs=(), about=None, progress=None):
    """The Trace Event JSON file as pieces of text (join them, or write one after
    the other): @log an EventLog (None: outliers only), @outliers from
    outlier_slices(), @runs from run_slices(), @about what otherData says of
    the source. @progress (a cli Progress, or None) is told how many of the log's
    events are done with each piece."""
    t0 = zero_ns(log, outliers, runs)
    out = _Out(t0)
    traced = cpus_traced(log) if log is not None else set()
    cpus = traced | {o[0] for o in outliers} | {r[0] for r in runs}
    other = {"format": FORMAT, "clock": "CLOCK_MONOTONIC", "zero_ns": t0,
             "time_unit": "ts and dur in us, three decimals (ns)"}
    other.update(about or {})
    if log is not None:
        other.update({"log_start_ns": log.start_ns, "log_end_ns": log.end_ns,
                      "events": log.records, "dropped": log.dropped})
    yield '{"displayTimeUnit":"ns","otherData":%s,"traceEvents":[\n' % _js(other)
    by_cpu, done = {}, 0
    for cpu, start, end, name, args in runs:
        by_cpu.setdefault(cpu, []).append((start, end, name, "run", args))
    for cpu, start, length, name, args in outliers:
        by_cpu.setdefault(cpu, []).append((start, start + length, name, "outlier", args))
    for cpu in sorted(cpus):
        pid = _pid(cpu)
        out.meta(pid, None, "process_name", {"name": "CPU %d" % cpu})
        out.meta(pid, None, "process_sort_index", {"sort_index": cpu})
        for n, (start, end, name, cat, args) in _lanes(by_cpu.get(cpu, ())):
            out.slice(pid, _tid(pid, LANE_BASE + n if n else OUTLIERS), name, cat, start, end,
                      args)
            piece = out.take()
            if piece:
                yield piece
        if cpu not in traced:
            continue
        walk = _Cpu(out, cpu, log)
        lines, n = out.lines, done
        for n, e in enumerate(log.iter_events(cpu), done + 1):
            walk.event(e)
            if len(lines) < CHUNK_EVENTS:
                continue
            piece = out.take()
            lines = out.lines
            if progress:
                progress("the Perfetto trace: %d %% of %d kernel events" % (
                    100 * n // max(1, log.records, n), log.records))
            yield piece
        done = n
        walk.finish(log.end_ns)
    piece = out.take(1)
    if piece:
        yield piece
    yield "\n]}\n"
