# SPDX-License-Identifier: GPL-2.0-only
"""events - read and write jtr's kernel-event log (events.bin + trace.json).

The log is what the tracer (eBPF, or perf converted) records on the probe's
CPUs. Its layout is declared here for the Python side and in ebpf/trace.h for
the C side; analysis/tests/test_parity.py parses trace.h and requires the same
magic, version, sizes, field order and type numbers. events.bin is a 64-byte header (struct
jtr_ev_header) followed by 64-byte little-endian records (struct jtr_ev):

    ts_ns u64, pid u32, cpu u16, type u8, flags u8, a u64, b u64, raw 32 bytes

where raw is either a string (one comm or IRQ action name, or two 16-byte
comms for sched_switch) or four u64 (x[0..3]), depending on the type.
trace.json beside it holds what needs the tracing machine to resolve: the
traced CPUs, the names of the irq_vectors kinds and kernel symbols.

Reading is fast because nothing is decoded up front: read_events() takes the
timestamps and CPUs of all records with memoryview casts, sorts each CPU's
records by time (the kernel hands them over nearly sorted) and keeps the raw
bytes; a record becomes an Event only when someone asks for it.
"""
import array
import heapq
import os
import struct
from bisect import bisect_left, bisect_right
from itertools import compress
from typing import NamedTuple

from ..errors import UsageError
from ..system.files import read_bytes, read_json, write_json
from ..system.memory import paused_gc
from ..system.numeric import numpy_or_none
from ..system.schema import COUNT, CPU, NAME, NS, Bool, Int, List, Obj, Opt, Str, check
from ..values import parse_cpulist
from ..vocab import MAX_LOG_BYTES
from . import syscalls

MAGIC = b"JTREVT1\0"
VERSION = 1
RECORD_SIZE = 64
HEADER_SIZE = 64
ITER_SLICE = 1 << 16    # index entries made into Python numbers at a time (iter_events)
TRACE_FORMAT = "jtr-trace/1"
LOG_NAME = "events.bin"
TRACE_NAME = "trace.json"
WHAT = "event log"

# the fields of trace.json the readers use (system/schema.py checks them)
TRACE_FIELDS = Obj({
    "cpus": List(CPU, "a list of CPU numbers"), "start_ns": Opt(NS), "end_ns": Opt(NS),
    "backend": Opt(Str(64)), "consumer_cpu": Opt(Int(-1, 65535)),
    "nohz_full": Opt(Str(4096)),
    "symbols": Obj(values=Str(), what="an object of address: symbol name"),
    "vectors": List(NAME, "a list of irq_vectors kind names"),
    "events": Obj({"dropped": Opt(COUNT), "per_type": Obj(values=COUNT),
                   "dropped_per_type": Obj(values=COUNT)}),
    "cost": Obj({"setup_cpu_ns": Opt(NS), "tracing_cpu_ns": Opt(NS), "convert_ns": Opt(NS),
                 "process_cpus": Opt(Str(256))}),
    "prog_stats": Opt(Str(16)),
    "programs": Obj(values=Obj({"run_time_ns": Opt(NS), "run_count": Opt(COUNT),
                                "timed_runs": Opt(COUNT)})),
    "steal": Obj({"available": Bool(), "reason": Opt(Str(256))}, required=("available",)),
    "cgroups": Obj({h: Obj(values=Obj({"path": Opt(Str(4096)), "label": Str(256)},
                                      required=("label",)),
                           what="an object of cgroup id: its path and label")
                    for h in ("v2", "v1")}),
}, what="a trace description object")

# struct jtr_ev_header: magic, version, record_size, start_ns, end_ns, records,
# dropped, reserved
HEADER = struct.Struct("<8sIIQQQQ16s")
# struct jtr_ev: ts_ns, pid, cpu, type, flags, a, b, and 32 raw bytes (a string,
# two 16-byte comms, or four u64)
RECORD = struct.Struct("<QIHBBQQ32s")
RECORD_FIELDS = ("ts_ns", "pid", "cpu", "type", "flags", "a", "b", "raw")
HEAD = struct.Struct("<QIHBBQQ")        # a record without its raw bytes
X4 = struct.Struct("<4Q")
# byte offsets in a record, for the readers that look at one field of many
PID_OFFSET, CPU_OFFSET, TYPE_OFFSET, A_OFFSET, RAW_OFFSET = 8, 12, 14, 16, 32
COMM_LEN = 16

# enum jtr_ev_type (ebpf/trace.h); the numbers are in every log
IRQ_ENTRY, IRQ_EXIT, SOFTIRQ_RAISE, SOFTIRQ_ENTRY, SOFTIRQ_EXIT = 1, 2, 3, 4, 5
VEC_ENTRY, VEC_EXIT, NMI, SWITCH, WAKEUP, WAKING, MIGRATE = 6, 7, 8, 9, 10, 11, 12
PF_USER, PF_KERNEL, WQ_START, WQ_END = 13, 14, 15, 16
HRTIMER_ENTRY, HRTIMER_EXIT, TIMER_ENTRY, TIMER_EXIT = 17, 18, 19, 20
# the host's steal counter (kvm steal_time) moved: a = its ns so far, b = what the
# CPU's previous look saw; flags STEAL_FIRST: the CPU's first look (b = a). The
# events that look at it (before their own record) are STEAL_LOOKS.
STEAL = 21
STEAL_FIRST = 1
STEAL_LOOKS = frozenset((VEC_ENTRY, IRQ_ENTRY, NMI, SWITCH))
# an IPI's vector entry whose send the tracer saw (ipi_send_cpu, _cpumask): flags
# VEC_SENDER, raw[:16] the sender's comm, x[2] the callback (VEC_SITE: the send's
# callsite, a reschedule has no callback), x[3] the sender's pid | its CPU << 32
VEC_SENDER, VEC_SITE = 1, 8
# a task's groups, once per task (again when they change), before the switch
# that brings it in: a = pid | tgid << 32, b = its cgroup v2 id, x[2] = its
# cgroup v1 id in the memory controller's hierarchy, raw[:16] = comm; trace.json
# "cgroups" names the ids (ebpf/cgroups.h)
TASK = 22
# jtr run app: a call of the timed function returned (ts its return): a = its
# entry, b = the CPU at entry | the CPU at return << 32, pid the thread
CALL = 23
# jtr run app: a thread of the application leaves its CPU blocked (before the
# switch): pid the thread, a = the system call it is in (NO_SYSCALL: none, a
# page fault or another exception), b = its state
BLOCK = 24
NO_SYSCALL = (1 << 64) - 1
# timer:tick_stop, when what it says on the CPU changes: a = 1 the tick stopped (0:
# it could not), b = what kept it (a TICK_DEP_MASK_* bit, TICK_DEPS; 0 none)
TICK_STOP = 25
TICK_DEPS = {1: "POSIX_TIMER", 2: "PERF_EVENTS", 4: "SCHED", 8: "CLOCK_UNSTABLE", 16: "RCU",
             32: "RCU_EXP"}
APP = 2             # flags: the task is a thread of the application (jtr run app, watch --app)
APP_NEXT = 4        # a switch's flags: its next task is one
# a sched_waking of a thread of the application (flags APP): raw[16:32] is the
# waker's comm (the record's pid is the waker)

# the kernel tracepoint each type comes from: the names in trace.json "per_type"
TYPE_NAMES = {
    IRQ_ENTRY: "irq_handler_entry", IRQ_EXIT: "irq_handler_exit",
    SOFTIRQ_RAISE: "softirq_raise", SOFTIRQ_ENTRY: "softirq_entry",
    SOFTIRQ_EXIT: "softirq_exit", VEC_ENTRY: "vector_entry", VEC_EXIT: "vector_exit",
    NMI: "nmi_handler", SWITCH: "sched_switch", WAKEUP: "sched_wakeup",
    WAKING: "sched_waking", MIGRATE: "sched_migrate_task", PF_USER: "page_fault_user",
    PF_KERNEL: "page_fault_kernel", WQ_START: "workqueue_execute_start",
    WQ_END: "workqueue_execute_end", HRTIMER_ENTRY: "hrtimer_expire_entry",
    HRTIMER_EXIT: "hrtimer_expire_exit", TIMER_ENTRY: "timer_expire_entry",
    TIMER_EXIT: "timer_expire_exit", STEAL: "steal_time", TASK: "task_groups",
    CALL: "app_call", BLOCK: "app_block", TICK_STOP: "tick_stop",
}
SOFTIRQ_NAMES = ("HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET",
                 "SCHED", "HRTIMER", "RCU")
VECTOR_KINDS = ("local_timer", "reschedule", "call_function", "call_function_single",
                "irq_work", "thermal_apic", "x86_platform_ipi", "error_apic", "spurious_apic")
# task state bits as sched_switch prints them (TASK_REPORT order)
_STATE_LETTERS = "SDTtXZPI"


class Event(NamedTuple):
    """One decoded record, fields in the order of struct jtr_ev."""
    ts_ns: int
    pid: int
    cpu: int
    type: int
    flags: int
    a: int
    b: int
    raw: bytes

    @property
    def type_name(self):
        """The tracepoint name, or 'type N' for a type this reader does not know."""
        return TYPE_NAMES.get(self.type, "type %d" % self.type)

    @property
    def text(self):
        """raw as one NUL-terminated string (comm, IRQ action name)."""
        return cstr(self.raw)

    @property
    def prev_comm(self):
        """sched_switch: the comm of the task switched out."""
        return cstr(self.raw[:16])

    @property
    def next_comm(self):
        """sched_switch: the comm of the task switched in."""
        return cstr(self.raw[16:])

    @property
    def x(self):
        """raw as four u64 (x[0] is a page fault's error code)."""
        return X4.unpack(self.raw)


def cstr(raw):
    """Bytes up to the first NUL as text (undecodable bytes escaped)."""
    n = raw.find(b"\0")
    return (raw if n < 0 else raw[:n]).decode("utf-8", "backslashreplace")


def decode(rec, offset=0):
    """The Event in the 64 bytes of rec at offset."""
    return Event._make(RECORD.unpack_from(rec, offset))


def pack_raw(raw):
    """The 32 raw bytes for write_events: bytes, a str, two comms or up to four u64."""
    if raw is None:
        return b""
    if isinstance(raw, str):
        raw = raw.encode()
    elif isinstance(raw, (tuple, list)):
        if raw and all(isinstance(s, str) for s in raw):
            if len(raw) != 2:
                raise UsageError("raw %r: give two comms (prev, next)" % (raw,))
            return b"".join(s.encode()[:15].ljust(16, b"\0") for s in raw)
        vals = list(raw) + [0] * (4 - len(raw))
        return X4.pack(*vals[:4])
    if len(raw) > 32:
        raise UsageError("raw field of %d bytes: at most 32 fit a record" % len(raw))
    return bytes(raw)


def _events_path(path):
    """events.bin for a results folder, or the file itself."""
    if os.path.isdir(path):
        return os.path.join(path, LOG_NAME)
    return path


class EventLog:
    """A read event log: raw records, a per-CPU time index and the trace.json metadata.

    cpu_ts[cpu] is the sorted list of that CPU's timestamps and cpu_index[cpu]
    the record numbers in the same order, so bisect on cpu_ts finds a window
    and event(cpu_index[cpu][k]) decodes one record of it. With numpy the
    index is built as arrays (arrays(cpu)) and the lists only when asked for.
    """

    def __init__(self, path, data, header, records, complete, meta):
        """Index the records of data; meta is trace.json (defaults filled in here)."""
        self.path = path
        self.data = data
        (_, self.version, self.record_size, start_ns, end_ns, _, self.dropped, _) = header
        self.records = records
        self.complete = complete
        self._arrays = _index_arrays(data, records)
        if self._arrays is None:
            self._ts, self._idx = _index(data, records)
            last = max((ts[-1] for ts in self._ts.values() if ts), default=0)
            cpus = self._ts
        else:
            self._ts, self._idx = None, None
            cpus = self._arrays[1]
            last = max((int(ts[-1]) for ts in self._arrays[1].values() if len(ts)), default=0)
        self.start_ns = start_ns or meta.get("start_ns") or 0
        self.end_ns = end_ns or meta.get("end_ns") or last
        if "cpus" not in meta:
            meta["cpus"] = sorted(cpus)
        meta.setdefault("vectors", list(VECTOR_KINDS))
        meta.setdefault("symbols", {})
        meta.setdefault("start_ns", self.start_ns)
        meta.setdefault("end_ns", self.end_ns)
        self.meta = meta
        self._groups = None
        self._ticks = None
        self.symbols = meta["symbols"]
        self.vectors = meta["vectors"]

    def __len__(self):
        """The number of records."""
        return self.records

    def tick_states(self):
        """The nohz_full CPUs trace.json names, and each CPU's timer:tick_stop
        states in time order: ({cpu}, {cpu: ([ts], [(stopped, dependency)])}),
        made once."""
        if self._ticks is None:
            text = (self.meta.get("nohz_full") or "").strip()
            try:
                nohz = set(parse_cpulist(text)) if text else set()
            except UsageError:
                nohz = set()
            per = {}
            for e in self.of_type(TICK_STOP):
                per.setdefault(e.cpu, []).append((e.ts_ns, e.a, e.b))
            for v in per.values():
                v.sort()
            self._ticks = nohz, {c: ([t for t, _, _ in v], [(a, b) for _, a, b in v])
                                 for c, v in per.items()}
        return self._ticks

    @property
    def cpu_ts(self):
        """{cpu: [ts_ns in time order]}: a list, or with numpy an array.array of
        8-byte ints (a sequence of Python ints as a list is, at 8 bytes an entry
        where a list of ints takes 40: the walks of a 2 GiB log)."""
        if self._ts is None:
            self._ts = {c: _int_array(ts) for c, ts in self._arrays[1].items()}
        return self._ts

    @property
    def cpu_index(self):
        """{cpu: [record number, in the order of cpu_ts]} (as cpu_ts)."""
        if self._idx is None:
            self._idx = {c: _int_array(idx) for c, idx in self._arrays[2].items()}
        return self._idx

    def arrays(self, cpu):
        """With numpy: (records, ts, index) of one CPU: the log's records as a numpy
        structured array (RECORD_DTYPE), and the CPU's timestamps and record
        numbers in time order (empty arrays for a CPU without records); None
        without numpy."""
        if self._arrays is None:
            return None
        recs, ts, idx = self._arrays
        if cpu not in ts:
            empty = recs["ts_ns"][:0]
            return recs, empty, empty.astype("int64")
        return recs, ts[cpu], idx[cpu]

    def event(self, i):
        """Decode record number i (0 is the first after the header)."""
        return Event._make(RECORD.unpack_from(self.data, HEADER_SIZE + i * RECORD_SIZE))

    def window(self, cpu, lo_ns, hi_ns, limit=None):
        """The Events of one CPU with lo_ns <= ts_ns <= hi_ns, in time order (the
        first @limit of them, when given)."""
        if self._ts is None:
            _, ts, idx = self.arrays(cpu)
            k0, k1 = ts.searchsorted(lo_ns, "left"), ts.searchsorted(hi_ns, "right")
            if limit is not None:
                k1 = min(k1, k0 + limit)
            return [self.event(int(i)) for i in idx[k0:k1]]
        ts = self.cpu_ts.get(cpu, [])
        idx = self.cpu_index.get(cpu, [])
        k0, k1 = bisect_left(ts, lo_ns), bisect_right(ts, hi_ns)
        if limit is not None:
            k1 = min(k1, k0 + limit)
        return [self.event(idx[k]) for k in range(k0, k1)]

    def switch_breaks(self):
        """{cpu: switches whose prev is not the task the CPU's switch before put
        on}, for the CPUs that have any: switches missing from the log (dropped,
        or never recorded: on some guests the kernel makes switches that fire no
        sched_switch, ftrace's included). A log's first switch on a CPU is not
        counted."""
        out = {}
        if self._arrays is not None:
            recs, ts, idx = self._arrays
            for cpu, ix in idx.items():
                a = recs["a"][ix[recs["type"][ix] == SWITCH]]
                n = int(((a[1:] & 0xffffffff) != (a[:-1] >> 32)).sum())
                if n:
                    out[cpu] = n
            return out
        last = {}
        for e in self.iter_events():
            if e.type != SWITCH:
                continue
            if e.cpu in last and e.a & 0xffffffff != last[e.cpu]:
                out[e.cpu] = out.get(e.cpu, 0) + 1
            last[e.cpu] = e.a >> 32
        return out

    def last_before(self, cpu, ts_ns):
        """The last Event of one CPU with ts_ns < @ts_ns, or None."""
        if self._ts is None:
            _, ts, idx = self.arrays(cpu)
            k = int(ts.searchsorted(ts_ns, "left"))
            return self.event(int(idx[k - 1])) if k else None
        ts = self.cpu_ts.get(cpu, [])
        k = bisect_left(ts, ts_ns)
        return self.event(self.cpu_index[cpu][k - 1]) if k else None

    def iter_events(self, cpu=None):
        """All Events in time order, of one CPU or (None) of all merged. With numpy
        the index is read a slice at a time (ITER_SLICE records), never made into
        lists: a log's walk costs no memory beyond the log and its index."""
        if self._arrays is not None:
            cpus = sorted(self._arrays[1]) if cpu is None else [cpu]
            streams = [_slices(self._arrays[1][c], self._arrays[2][c]) for c in cpus
                       if c in self._arrays[1]]
        else:
            cpus = sorted(self.cpu_index) if cpu is None else [cpu]
            streams = [zip(self.cpu_ts[c], self.cpu_index[c]) for c in cpus
                       if c in self.cpu_index]
        for _, i in (streams[0] if len(streams) == 1 else heapq.merge(*streams)):
            yield self.event(i)

    def type_counts(self):
        """Records per type name, counted from the log itself."""
        types = bytes(memoryview(self.data)[HEADER_SIZE + TYPE_OFFSET:HEADER_SIZE +
                                            self.records * RECORD_SIZE:RECORD_SIZE])
        counts = {}
        for t in set(types):
            counts[TYPE_NAMES.get(t, "type %d" % t)] = types.count(t)
        return counts

    def of_type(self, t):
        """The Events of one type, in record order."""
        types = bytes(memoryview(self.data)[HEADER_SIZE + TYPE_OFFSET:HEADER_SIZE +
                                            self.records * RECORD_SIZE:RECORD_SIZE])
        i = types.find(t)
        while i >= 0:
            yield self.event(i)
            i = types.find(t, i + 1)

    def steal_readings(self):
        """{cpu: [(ts_ns, prev_ns, a, b)]} of the steal_time records, in time order:
        the counter went from b to a between the CPU's previous look (at prev_ns: its
        last STEAL_LOOKS record before ts_ns; the log's start for none) and this one."""
        types = bytes(memoryview(self.data)[HEADER_SIZE + TYPE_OFFSET:HEADER_SIZE +
                                            self.records * RECORD_SIZE:RECORD_SIZE])
        out = {}
        i = types.find(STEAL)
        while i >= 0:
            e = self.event(i)
            ts, idx = self.cpu_ts[e.cpu], self.cpu_index[e.cpu]
            k = bisect_left(ts, e.ts_ns) - 1    # the CPU's records before it
            while k >= 0 and types[idx[k]] not in STEAL_LOOKS:
                k -= 1
            out.setdefault(e.cpu, []).append((e.ts_ns, ts[k] if k >= 0 else self.start_ns,
                                              e.a, e.b))
            i = types.find(STEAL, i + 1)
        for rows in out.values():
            rows.sort()
        return out

    def task_groups(self):
        """{pid: label} of the tasks whose cgroup shows a container, pod or systemd
        unit (trace.json "cgroups", ebpf/cgroups.h): the v2 cgroup's label, else
        the v1 cgroup's; a task's last task_groups record wins. Made once."""
        if self._groups is None:
            cg = self.meta.get("cgroups") or {}
            v2, v1 = cg.get("v2") or {}, cg.get("v1") or {}
            self._groups = {}
            for e in self.of_type(TASK):
                lab = (v2.get(str(e.b)) or {}).get("label") or \
                    (v1.get(str(e.x[2])) or {}).get("label")
                pid = e.a & 0xffffffff
                if lab:
                    self._groups[pid] = lab
                else:
                    self._groups.pop(pid, None)
        return self._groups

    def symbol(self, addr):
        """The kernel symbol at addr from trace.json, or the address in hex."""
        key = "0x%x" % addr
        return self.symbols.get(key, key)

    def vector_kind(self, kind):
        """The irq_vectors kind name for index kind ('unknown' when out of range)."""
        return vector_kind(self.vectors, kind)


def _int_array(a):
    """A numpy array of 8-byte ints as an array.array('q') (native order)."""
    out = array.array("q")
    out.frombytes(a.astype("=i8", copy=False).tobytes())
    return out


def _slices(ts, idx):
    """(ts, record number) pairs of two index arrays, made ITER_SLICE at a time."""
    for k in range(0, len(idx), ITER_SLICE):
        yield from zip(ts[k:k + ITER_SLICE].tolist(), idx[k:k + ITER_SLICE].tolist())


def vector_kind(vectors, kind):
    """The name of irq_vectors kind index kind in a trace.json vectors list."""
    if 0 <= kind < len(vectors):
        return vectors[kind]
    return "unknown"


def record_dtype(np):
    """struct jtr_ev as a numpy dtype (fields of RECORD_FIELDS)."""
    return np.dtype([("ts_ns", "<u8"), ("pid", "<u4"), ("cpu", "<u2"), ("type", "u1"),
                     ("flags", "u1"), ("a", "<u8"), ("b", "<u8"), ("raw", "V32")])


def _index_arrays(data, records):
    """_index with numpy: (records array, {cpu: int64 ts array}, {cpu: record
    numbers}); None without numpy."""
    np = numpy_or_none()
    if np is None:
        return None
    if records == 0:
        return np.zeros(0, record_dtype(np)), {}, {}
    recs = np.frombuffer(data, dtype=record_dtype(np), count=records, offset=HEADER_SIZE)
    ts = recs["ts_ns"].view("<i8")         # signed, so that window bounds may be below 0
    if ts.min() < 0:
        return None                         # a time past 2^63 ns (a damaged log): plain path
    order = np.argsort(ts, kind="stable")   # nearly sorted: a merge sort's best case
    cpus = recs["cpu"][order]
    distinct = np.unique(cpus).tolist()
    per_index = {c: order if len(distinct) == 1 else order[cpus == c] for c in distinct}
    return recs, {c: ts[idx] for c, idx in per_index.items()}, per_index


def _index(data, records):
    """Per-CPU sorted timestamps and record numbers of the records in data."""
    if records == 0:
        return {}, {}
    body = memoryview(data)[HEADER_SIZE:HEADER_SIZE + records * RECORD_SIZE]
    ts = body.cast("Q")[0::RECORD_SIZE // 8].tolist()
    cpus = body.cast("H")[CPU_OFFSET // 2::RECORD_SIZE // 2].tolist()
    order = sorted(range(records), key=ts.__getitem__)
    distinct = set(cpus)
    if len(distinct) == 1:
        per_index = {cpus[0]: order}
    elif len(distinct) <= 16 and max(distinct) < 256:   # a pass per CPU, all of it in C
        in_order = bytes(map(cpus.__getitem__, order))
        per_index = {}
        for c in distinct:
            mask = bytes(1 if i == c else 0 for i in range(256))
            per_index[c] = list(compress(order, in_order.translate(mask)))
    else:
        per_index = {c: [] for c in distinct}
        appends = {c: per_index[c].append for c in distinct}
        for i in order:
            appends[cpus[i]](i)
    per_ts = {c: list(map(ts.__getitem__, idx)) for c, idx in per_index.items()}
    return per_ts, per_index


def _read_trace_json(path, within=None):
    """trace.json as a dict ({} when absent); UsageError when it is not one, or
    not inside the folder @within (when a result named the log)."""
    if not os.path.lexists(path):
        return {}
    try:
        meta = read_json(path, TRACE_FORMAT, "trace description", within=within)
        check(meta, TRACE_FIELDS, path)
    except UsageError as e:
        raise UsageError("%s; remove it to read the log without symbol names" % e)
    return meta


def read_events(path, within=None):
    """Read events.bin (a file or the results folder holding it) and its trace.json;
    @within: the results folder a result named the log in (both files must be
    inside it)."""
    p = _events_path(path)
    data = read_bytes(p, WHAT, MAX_LOG_BYTES, within,
                      "give a results folder with events.bin, or the file")
    if len(data) < HEADER_SIZE:
        raise UsageError("%s: truncated header (%d bytes, a log starts with %d): not a "
                         "complete jtr event log" % (p, len(data), HEADER_SIZE))
    header = HEADER.unpack_from(data, 0)
    magic, version, record_size, _, end_ns, records, _, _ = header
    if magic != MAGIC:
        raise UsageError("%s: not a jtr event log (it does not start with the magic "
                         "JTREVT1)" % p)
    if version != VERSION:
        raise UsageError("%s: event log version %d, this jtr reads version %d; read it with "
                         "the jtr that wrote it" % (p, version, VERSION))
    if record_size != RECORD_SIZE:
        raise UsageError("%s: record size %d, expected %d: damaged or foreign log"
                         % (p, record_size, RECORD_SIZE))
    room = (len(data) - HEADER_SIZE) // RECORD_SIZE
    complete = not (end_ns == 0 and records == 0)
    if not complete:
        records = room  # the tracer was killed before it wrote the header: use what is there
    elif records > room:
        raise UsageError("%s: truncated: the header says %d records, the file holds %d; "
                         "copy the whole file" % (p, records, room))
    meta = _read_trace_json(os.path.join(os.path.dirname(p) or ".", TRACE_NAME), within)
    if meta.get("floor_only"):
        raise UsageError("%s: written by jtr trace --floor-only %s, whose programs record "
                         "nothing (a cost floor for make bench); trace again without "
                         "--floor-only" % (p, meta["floor_only"]))
    with paused_gc():
        return EventLog(p, data, header, records, complete, meta)


def write_events(path, events, start_ns, end_ns, dropped=0, meta=None):
    """Write an event log and trace.json beside it; returns the events.bin path.

    events are Events or tuples in Event order (raw as accepted by pack_raw);
    they are written in the order given. meta updates trace.json's top level.
    """
    p = _events_path(path)
    recs = []
    per_type, cpus = {}, set()
    for ev in events:
        ts_ns, pid, cpu, typ, flags, a, b = ev[:7]
        raw = pack_raw(ev[7] if len(ev) > 7 else None)
        recs.append(RECORD.pack(ts_ns, pid, cpu, typ, flags, a, b, raw))
        name = TYPE_NAMES.get(typ, "type %d" % typ)
        per_type[name] = per_type.get(name, 0) + 1
        cpus.add(cpu)
    header = HEADER.pack(MAGIC, VERSION, RECORD_SIZE, start_ns, end_ns, len(recs), dropped,
                         b"")
    with open(p, "wb") as f:
        f.write(header)
        f.write(b"".join(recs))
    trace = {
        "format": TRACE_FORMAT, "cpus": sorted(cpus), "start_ns": start_ns, "end_ns": end_ns,
        "events": {"total": len(recs), "dropped": dropped, "per_type": per_type,
                   "dropped_per_type": {}},
        "vectors": list(VECTOR_KINDS), "symbols": {}, "backend": "synthetic", "programs": {},
    }
    trace.update(meta or {})
    write_json(os.path.join(os.path.dirname(p) or ".", TRACE_NAME), trace)
    return p


def ipi_sender(ev, sym):
    """An IPI's sender, from its vector entry (VEC_SENDER): 'java (pid 812, CPU 0)
    flush_tlb_func', or '... sent at resched_curr+0x5a' for a callsite; @sym
    names an address."""
    x = ev.x
    return "%s (pid %d, CPU %d) %s%s" % (
        cstr(ev.raw[:COMM_LEN]) or "?", x[3] & 0xffffffff, x[3] >> 32,
        "sent at " if ev.flags & VEC_SITE else "", sym(x[2]))


def _task(comm, pid, prio):
    """comm(pid N, prio P) as sched_switch lines show a task."""
    return "%s(pid %d, prio %d)" % (comm, pid, prio)


def task_state(state, preempted):
    """sched_switch's prev_state letters: R+ when preempted, else S, D, ... or R."""
    if preempted:
        return "R+"
    letters = "".join(c for i, c in enumerate(_STATE_LETTERS) if state & (1 << i))
    return letters or "R"


def describe(ev, meta):
    """What an event says, without its time and CPU: 'hrtimer_expire_entry tick_sched_timer'."""
    t, a, b = ev.type, ev.a, ev.b
    syms = meta.get("symbols", {}) if meta else {}

    def sym(addr):
        """Symbol or hex address."""
        key = "0x%x" % addr
        return syms.get(key, key)

    if t == VEC_ENTRY or t == VEC_EXIT:
        kind = vector_kind(meta.get("vectors", VECTOR_KINDS) if meta else VECTOR_KINDS, b)
        text = "%s_%s vector=%d" % (kind, "entry" if t == VEC_ENTRY else "exit", a)
        if t == VEC_ENTRY and ev.flags & VEC_SENDER:
            text += " from " + ipi_sender(ev, sym)
        return text
    if t == IRQ_ENTRY:
        return "irq_handler_entry %d %s" % (a, ev.text)
    if t == IRQ_EXIT:
        return "irq_handler_exit %d ret=%s" % (a, {0: "unhandled", 1: "handled",
                                                   2: "wake_thread"}.get(b, str(b)))
    if t in (SOFTIRQ_RAISE, SOFTIRQ_ENTRY, SOFTIRQ_EXIT):
        name = SOFTIRQ_NAMES[a] if a < len(SOFTIRQ_NAMES) else "vec %d" % a
        return "%s %s" % (ev.type_name, name)
    if t == SWITCH:
        return "sched_switch prev=%s(pid %d, prio %d, %s) -> %s" % (
            ev.prev_comm, a & 0xffffffff, b & 0xffff, task_state(b >> 32, ev.flags & 1),
            _task(ev.next_comm, a >> 32, (b >> 16) & 0xffff))
    if t in (WAKEUP, WAKING):
        text = "%s %s target_cpu=%d" % (ev.type_name, _task(ev.text, a, b >> 32),
                                         b & 0xffffffff)
        if t == WAKING and ev.flags & APP:
            text += " by %s(pid %d)" % (cstr(ev.raw[COMM_LEN:]) or "?", ev.pid)
        return text
    if t == CALL:
        return "app_call %.1f us, CPU %d -> %d" % ((ev.ts_ns - a) / 1e3, b & 0xffffffff,
                                                   b >> 32)
    if t == BLOCK:
        return "app_block %s" % ("outside a system call" if a == NO_SYSCALL else
                                 syscalls.name(a))
    if t == TICK_STOP:
        return "tick_stop success=%d dependency=%s" % (a, TICK_DEPS.get(b, "NONE" if not b
                                                                    else "0x%x" % b))
    if t == MIGRATE:
        return "sched_migrate_task %s(pid %d) cpu %d -> %d" % (
            ev.text, a, b & 0xffffffff, b >> 32)
    if t == NMI:
        return "nmi_handler %s %d ns%s" % (sym(a), b, "" if ev.flags else " unhandled")
    if t in (PF_USER, PF_KERNEL):
        return "%s address=0x%x ip=%s error_code=0x%x" % (ev.type_name, a, sym(b), ev.x[0])
    if t == HRTIMER_ENTRY and ev.x[0]:
        return "%s %s expires=%.6f s (%+.1f us)" % (ev.type_name, sym(b), ev.x[0] / 1e9,
                                                     (ev.ts_ns - ev.x[0]) / 1e3)
    if t in (WQ_START, WQ_END, HRTIMER_ENTRY, TIMER_ENTRY):
        return "%s %s" % (ev.type_name, sym(b))
    if t in (HRTIMER_EXIT, TIMER_EXIT):
        return "%s 0x%x" % (ev.type_name, a)
    if t == TASK:
        cg = (meta or {}).get("cgroups") or {}

        def group(h, gid):
            g = (cg.get(h) or {}).get(str(gid)) or {}
            return "%s %d%s" % (h, gid, " %s" % g["path"] if g.get("path") else "")
        return "task_groups %s(pid %d, tgid %d) %s %s" % (
            cstr(ev.raw[:COMM_LEN]), a & 0xffffffff, a >> 32, group("v2", b),
            group("v1", ev.x[2]))
    if t == STEAL:
        if ev.flags & STEAL_FIRST:
            return "steal_time host steal so far %.6f s (first reading)" % (a / 1e9)
        return "steal_time host took %.1f us (so far %.6f s)" % ((a - b) / 1e3, a / 1e9)
    return "%s a=0x%x b=0x%x" % (ev.type_name, a, b)
