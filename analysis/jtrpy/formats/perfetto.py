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
              migrations as instants, and (jtr run app) its threads leaving the
              CPU blocked ("blocked in futex (tid N)")
  calls       jtr run app: every call of the timed function, from its entry to
              its return, on the CPU it returned on (named by the function; args:
              tid, length, the CPUs it entered and returned on); calls in flight
              together (threads that took turns) go to "calls 2", ... (at most
              8 threads)
and a counter "host steal" (ms the host took from the vCPU since the first
reading, kvm steal_time) where the log has it.

Slices on one thread nest properly, as Perfetto needs: entries and exits are
paired with a stack per thread in time order, so a slice ends when its exit
comes or, when that exit is not in the log, when the slice around it ends (args
"exit": "not in the log"); an exit whose entry is not in the log is an instant.
Times are CLOCK_MONOTONIC ns written as us with three decimals (exact), from
the earliest time in the file (zero_ns in otherData). The text comes out in
pieces (trace_chunks) that can be written as they come.

The walk over every kernel event is compiled: jtr-perfetto (ebpf/perfetto.c)
writes one CPU's interrupts, softirqs and tasks tracks from the log and a NAMES
file this module writes (the log's symbols and vector kinds, the categories);
this module writes the rest (the header, the processes, the runs and outliers)
and streams what jtr-perfetto prints in between. A 3 s traced ping of 540,772
events: 7.5 s in Python, 0.9 s so (docs/bench.md).
"""
import codecs
import json
import os
import selectors
import shutil
import subprocess
import tempfile

from ..errors import JtrError
from ..system.paths import probe_path
from ..trace import causes as C
from ..trace import syscalls
from ..units import fmt_ns

PID_BASE = 1000         # CPU n is process 1000 + n: Perfetto keeps pid 0 for the idle task
FORMAT = "jtr-perfetto/1"
CHUNK_EVENTS = 4096     # trace events per piece of text (outliers and runs)
PIECE_BYTES = 1 << 20   # bytes of jtr-perfetto's text per piece at most
PROGRESS_EVERY = 65536  # kernel events between jtr-perfetto's progress reports
SYMBOL_MAX = 512        # characters of a symbol name at most (the kernel's KSYM_NAME_LEN)

# the threads of a CPU's process: tid = pid * 100 + number
OUTLIERS, INTERRUPTS, SOFTIRQS, TASKS = 1, 2, 3, 4
CALLS = 20              # jtr run app's calls: threads 20, 21, ... (ebpf/perfetto.c)
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


def _inner(text):
    """A str as JSON string contents (what _js writes between the quotes)."""
    return _ENCODE(text)[1:-1]


def names_text(log, call=None):
    """What jtr-perfetto needs to name a log's events (ebpf/perfetto.c's NAMES):
    its symbols (the keys this reader would look up: '0x' and lowercase hex), its
    irq_vectors kinds with their slice names and categories, the categories, this
    machine's system call names (jtr run app's blocked threads) and @call, the
    name of jtr run app's calls (its function)."""
    lines = ["Y\t%d\t%s" % (nr, _inner(n)) for nr, n in syscalls.table().items()]
    if call:
        lines.append("F\tcall\t%s" % _inner(call[:SYMBOL_MAX]))
    for key, name in log.symbols.items():
        try:
            if key == "0x%x" % int(key, 16):
                lines.append("S\t%s\t%s" % (key[2:], _inner(name[:SYMBOL_MAX])))
        except (TypeError, ValueError):
            continue
    for i, kind in enumerate(log.vectors):
        lines.append("V\t%d\t%s\t%s\t%s" % (i, _inner(kind), _inner(vector_name(kind)),
                                            _inner(C.vector(kind)[0])))
    lines.append("V\t-1\tunknown\tunknown\t%s" % _inner(C.vector("unknown")[0]))
    for key, cat in (("hardirq", C.HARDIRQ), ("softirq", C.SOFTIRQ), ("nmi", C.NMI),
                     ("page_fault", C.PAGE_FAULT)):
        lines.append("C\t%s\t%s" % (key, _inner(cat)))
    return "\n".join(lines) + "\n"


def vector_name(kind):
    """The slice name of an irq_vectors kind: the tick is 'local timer'."""
    return "local timer" if kind == "local_timer" else kind


def kernel_tracks(log, cpu, t0, names, progress=None, done=0):
    """The kernel-event tracks of @cpu of @log as pieces of text (each trace event
    after ',\\n'), from jtr-perfetto (ebpf/perfetto.c: the walk over every event,
    compiled) with the NAMES file @names; @progress told how far it is (@done:
    the log's events walked before this CPU's)."""
    cmd = [probe_path("perfetto"), log.path, names, str(cpu), str(log.records), str(t0),
           str(log.start_ns), str(log.end_ns), str(PROGRESS_EVERY)]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    decode = codecs.getincrementaldecoder("utf-8")().decode
    err, said = b"", b""
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            sel.register(proc.stderr, selectors.EVENT_READ)
            while sel.get_map():
                for key, _ in sel.select():
                    data = os.read(key.fileobj.fileno(), PIECE_BYTES)
                    if not data:
                        sel.unregister(key.fileobj)
                    elif key.fileobj is proc.stdout:
                        yield decode(data)
                    else:
                        said += data
                        *lines, said = said.split(b"\n")
                        for line in lines:
                            if line.startswith(b"progress ") and progress:
                                n = done + int(line[9:])
                                progress("the Perfetto trace: %d %% of %d kernel events" % (
                                    100 * n // max(1, log.records, n), log.records))
                            elif not line.startswith(b"progress "):
                                err += line + b"\n"
        rest = decode(b"", final=True)
        if rest:
            yield rest
        if proc.wait() != 0:
            raise JtrError("the Perfetto trace of CPU %d: %s" % (
                cpu, (err + said).decode("utf-8", "replace").strip() or
                "jtr-perfetto ended with status %d" % proc.returncode))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


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


def trace_chunks(log, outliers=(), runs=(), about=None, progress=None, call=None):
    """The Trace Event JSON file as pieces of text (join them, or write one after
    the other): @log an EventLog (None: outliers only), @outliers from
    outlier_slices(), @runs from run_slices(), @about what otherData says of
    the source. @progress (a cli Progress, or None) is told how many of the log's
    events are done with each piece. @call: jtr run app's function, the name of
    its calls' slices."""
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
    folder = tempfile.mkdtemp(prefix="jtr-perfetto-") if log is not None else None
    try:
        names = os.path.join(folder, "names") if folder else None
        if names:
            with open(names, "w", encoding="utf-8") as f:
                f.write(names_text(log, call))
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
            piece = out.take(1)
            if piece:
                yield piece
            yield from kernel_tracks(log, cpu, t0, names, progress, done)
            done += len(log.cpu_ts.get(cpu, ()))
        piece = out.take(1)
        if piece:
            yield piece
        yield "\n]}\n"
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
