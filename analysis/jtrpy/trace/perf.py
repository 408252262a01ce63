# SPDX-License-Identifier: GPL-2.0-only
"""perf - the perf backend: the same kernel events as the eBPF tracer, from
`perf record`, converted into jtr's event log.

For machines that forbid BPF (lockdown, containers without CAP_BPF) but allow
perf on tracepoints. `perf record -k CLOCK_MONOTONIC -C CPUS -e ...` records the
tracepoints this kernel has (the same list as ebpf/trace.c, irq_vectors pairs
discovered in tracefs) on the probe's CPUs; when it stops, `perf script` prints
them and each line becomes one record of events.bin (docs/attribution.md), with
trace.json beside it, so attribution reads both backends the same way. Function
names come printed by perf; they get stand-in addresses in trace.json's symbol
table. Events perf lost (its buffer full) are counted from `perf report --stats`.
"""
import os
import re
import shutil
import signal
import subprocess
import time

from ..system import packages, signals
from ..system.cpus import online_cpus
from ..system.procs import children_cpu_ns, proc_stat
from ..values import format_cpulist, parse_cpulist
from . import events as ev

BACKEND = "perf"               # trace.json "backend" of its logs (vocab.BACKENDS)
TRACEFS = "/sys/kernel/tracing"
TYPED = [
    ("irq", "irq_handler_entry"), ("irq", "irq_handler_exit"), ("irq", "softirq_raise"),
    ("irq", "softirq_entry"), ("irq", "softirq_exit"), ("nmi", "nmi_handler"),
    ("sched", "sched_switch"), ("sched", "sched_wakeup"), ("sched", "sched_waking"),
    ("sched", "sched_migrate_task"), ("exceptions", "page_fault_user"),
    ("exceptions", "page_fault_kernel"), ("workqueue", "workqueue_execute_start"),
    ("workqueue", "workqueue_execute_end"), ("timer", "hrtimer_expire_entry"),
    ("timer", "hrtimer_expire_exit"), ("timer", "timer_expire_entry"),
    ("timer", "timer_expire_exit"), ("timer", "tick_stop"),
]
# perf prints tid -1 for an event whose task is exiting (its pid already detached)
LINE = re.compile(r"^\s*(-?\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+([\w]+):([\w]+):\s?(.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")
STATE_RUNNING = ("R", "R+")
FAKE_BASE = 0xfffffffffe000000     # stand-in addresses for the names perf prints


def perf_path():
    """The perf program, or None."""
    return shutil.which("perf")


def unavailable():
    """Why the perf backend cannot run here, or None."""
    if os.environ.get("JTR_NO_PERF"):
        return "perf is switched off for this run (JTR_NO_PERF is set)"
    if not perf_path():
        return "perf is not installed (%s)" % packages.program_hint("perf")
    return tracefs_ready()


def tracefs_ready():
    """None when tracefs is mounted on TRACEFS (mounting it, as the eBPF tracer
    does, when it is not and this process may), else why it is not."""
    if os.path.isdir(os.path.join(TRACEFS, "events")):
        return None
    if os.geteuid() == 0 and os.path.isdir(TRACEFS):
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        if os.path.isdir(os.path.join(TRACEFS, "events")):
            return None
    return ("tracefs is not mounted on %s; mount it with 'mount -t tracefs nodev %s'"
            % (TRACEFS, TRACEFS))


def tracepoints():
    """(perf event names, irq_vectors kinds) this kernel has."""
    names = ["%s:%s" % (c, n) for c, n in TYPED
             if os.path.isdir(os.path.join(TRACEFS, "events", c, n))]
    kinds = []
    vdir = os.path.join(TRACEFS, "events", "irq_vectors")
    if os.path.isdir(vdir):
        for e in sorted(os.listdir(vdir)):
            if e.endswith("_entry") and os.path.isdir(os.path.join(vdir, e[:-6] + "_exit")):
                kinds.append(e[:-6])
    for k in kinds:
        names += ["irq_vectors:%s_entry" % k, "irq_vectors:%s_exit" % k]
    return names, kinds


class PerfRecord:
    """A perf recording running in the background on some CPUs, into workdir/name:
    started, waited for until it records, stopped. The command is the subclass's."""

    what = "perf record"

    def __init__(self, cpus_list, workdir, name):
        self.dir = workdir
        self.data = os.path.join(workdir, name)
        self.cpus = cpus_list
        self.start_ns = self.end_ns = None
        self.proc = None
        self.err = ""
        # perf's own CPU time (ns): until it records (from /proc, in clock ticks),
        # and in all (its rusage when it is reaped)
        self.setup_cpu_ns = self.cpu_ns = None
        self.others = []           # the CPUs perf itself runs on ([]: anywhere)

    def command(self):
        """The perf command line."""
        raise NotImplementedError

    def _start(self):
        # perf itself runs off the recorded CPUs where there are others, like the
        # eBPF tracer's draining thread, so its wake-ups are not in the measurement
        others = self.others = sorted((set(online_cpus()) & os.sched_getaffinity(0)) -
                                      set(parse_cpulist(self.cpus)))

        self.proc = signals.spawn(self.command(), stop=False, affinity=others,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def wait_ready(self, timeout_s=30):
        """Start perf and wait until it has written its header; None or why not."""
        return self._wait(timeout_s)

    def _wait(self, timeout_s):
        self._start()
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                self.err = self.proc.stderr.read().strip()
                return "%s failed: %s" % (self.what, self.err.splitlines()[-1] if self.err
                                          else "exit %d" % self.proc.returncode)
            if os.path.exists(self.data) and os.path.getsize(self.data) > 0:
                time.sleep(0.3)    # the events are enabled right after the header
                self.start_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
                st = proc_stat(self.proc.pid)
                self.setup_cpu_ns = st.cpu_ns if st else None
                return None
            time.sleep(0.05)
        self.proc.kill()
        self.proc.wait()
        return "%s did not start within %d s" % (self.what, timeout_s)

    def stop(self):
        """SIGTERM perf; it writes its data file and exits. Its exit status."""
        self.end_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        before = children_cpu_ns()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        _, err = self.proc.communicate()
        self.cpu_ns = children_cpu_ns() - before
        self.err = "\n".join(line for line in err.splitlines() if line.strip()
                             and "perf record:" not in line)
        rc = self.proc.returncode
        return 0 if rc in (0, -signal.SIGTERM, 128 + signal.SIGTERM) else rc

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class PerfTracer(PerfRecord):
    """perf record running in the background on the probe's CPUs."""

    backend = BACKEND

    def __init__(self, cpus_list, workdir):
        super().__init__(cpus_list, workdir, "perf.data")
        self.names, self.kinds = tracepoints()
        self.refused = []          # tracepoints perf may not enable here

    def command(self):
        # -B: no build-id pass over the data at the end (tracepoints need none)
        cmd = [perf_path(), "record", "-q", "-B", "-k", "CLOCK_MONOTONIC", "-C", self.cpus,
               "-o", self.data]
        for n in self.names:
            cmd += ["-e", n]
        return cmd

    def wait_ready(self, timeout_s=30):
        """Start perf record and wait until it has written its header; None or why
        not. A tracepoint perf may not enable (irq_vectors:irq_work_exit: the kernel
        refuses it to perf, against an irq_work loop) is left out with its pair."""
        for _ in range(8):
            why = self._wait(timeout_s)
            m = re.search(r"No permission to enable (\S+) event", why or "")
            if not m:
                return why
            bad = m.group(1)
            drop = {bad}
            if bad.startswith("irq_vectors:"):
                kind = bad.split(":", 1)[1].rsplit("_", 1)[0]
                drop |= {"irq_vectors:%s_entry" % kind, "irq_vectors:%s_exit" % kind}
                self.kinds = [k for k in self.kinds if k != kind]
            self.names = [n for n in self.names if n not in drop]
            self.refused += sorted(drop)
        return why

    def move_into(self, outdir):
        """Convert perf.data into events.bin + trace.json in @outdir."""
        cost = {"setup_cpu_ns": self.setup_cpu_ns,
                # /proc's ticks and the rusage at exit are rounded differently
                "tracing_cpu_ns": (max(0, self.cpu_ns - (self.setup_cpu_ns or 0))
                                   if self.cpu_ns is not None else None),
                "process_cpus": format_cpulist(self.others) if self.others else None}
        convert(self.data, outdir, self.kinds, self.cpus, self.start_ns, self.end_ns,
                self.refused, cost=cost)
        shutil.rmtree(self.dir, ignore_errors=True)


def lost_events(data):
    """Events perf lost, from `perf report --stats` (0 if it says none)."""
    p = subprocess.run([perf_path(), "report", "-i", data, "--stats"], capture_output=True,
                       text=True)
    m = re.search(r"LOST events:\s+(\d+)", p.stdout)
    return int(m.group(1)) if m else 0


def convert(data, outdir, kinds, cpus_list, start_ns, end_ns, refused=(), cost=None):
    """perf.data -> events.bin and trace.json in @outdir; returns the record count.
    @cost: perf record's CPU time (trace.json "cost"), to which the conversion's own
    time is added."""
    t0 = time.monotonic_ns()
    p = subprocess.Popen([perf_path(), "script", "-i", data, "--ns", "-F",
                          "tid,cpu,time,event,trace"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    kind_of = {k: i for i, k in enumerate(kinds)}
    symbols, recs = {}, []

    def addr(name):
        """A stand-in address for a function name perf printed."""
        if name.startswith("0x"):
            return int(name, 16)
        a = symbols.get(name)
        if a is None:
            a = symbols[name] = FAKE_BASE + 16 * len(symbols)
        return a

    unparsed = 0
    current = {}    # cpu -> the task running there: next_pid of its last sched_switch
    for line in p.stdout:
        m = LINE.match(line)
        if not m:
            unparsed += bool(line.strip())
            continue
        tid, cpu, sec, frac, cat, name, rest = m.groups()
        tid, cpu = int(tid), int(cpu)
        if tid < 0:     # an exiting task: the one the CPU switched to last
            tid = current.get(cpu, 0)
        if name == "sched_switch":
            nxt = re.search(r"next_pid=(\d+)", rest)
            if nxt:
                current[cpu] = int(nxt.group(1))
        ts = int(sec) * 1_000_000_000 + int(frac)
        if start_ns is not None and not start_ns <= ts <= end_ns:
            continue
        try:
            rec = to_record(ts, tid, cpu, cat, name, rest, kind_of, addr)
        except (KeyError, ValueError):
            unparsed += 1
            continue
        if rec:
            recs.append(rec)
    p.wait()
    dropped = lost_events(data)
    cost = dict(cost or {}, convert_ns=time.monotonic_ns() - t0)
    meta = {"backend": BACKEND, "programs_kind": "perf record", "vectors": list(kinds),
            "cost": cost,
            "symbols": {"0x%x" % a: n for n, a in symbols.items()},
            "cpu_list": cpus_list, "tool": "trace", "log": "events.bin",
            "missing": list(refused),
            "warnings": (["perf lost %d events (its buffer was full)" % dropped]
                         if dropped else []) +
                        (["%d lines of perf script could not be read" % unparsed]
                         if unparsed else [])}
    if cpus_list:
        meta["cpus"] = parse_cpulist(cpus_list)
    if os.path.exists("/sys/devices/system/cpu/nohz_full"):    # as the eBPF tracer says
        try:
            with open("/sys/devices/system/cpu/nohz_full") as f:
                meta["nohz_full"] = f.read().strip().replace("(null)", "")
        except OSError:
            pass
    ev.write_events(outdir, recs, start_ns or 0, end_ns or 0, dropped=dropped, meta=meta)
    return len(recs)


def to_record(ts, tid, cpu, cat, name, rest, kind_of, addr):
    """One perf script line's event as a write_events tuple, or None."""
    f = dict(FIELD.findall(rest))
    if cat == "irq_vectors":
        kind, _, end = name.rpartition("_")
        t = ev.VEC_ENTRY if end == "entry" else ev.VEC_EXIT
        return (ts, tid, cpu, t, 0, int(f.get("vector", 0)), kind_of.get(kind, 0xffff), None)
    if name == "irq_handler_entry":
        return (ts, tid, cpu, ev.IRQ_ENTRY, 0, int(f["irq"]), 0, f.get("name", "")[:31])
    if name == "irq_handler_exit":
        return (ts, tid, cpu, ev.IRQ_EXIT, 0, int(f["irq"]), int(f.get("ret") == "handled"),
                None)
    if name in ("softirq_raise", "softirq_entry", "softirq_exit"):
        t = {"softirq_raise": ev.SOFTIRQ_RAISE, "softirq_entry": ev.SOFTIRQ_ENTRY,
             "softirq_exit": ev.SOFTIRQ_EXIT}[name]
        return (ts, tid, cpu, t, 0, int(f["vec"]), 0, None)
    if name == "sched_switch":
        prev_pid, next_pid = int(f["prev_pid"]), int(f["next_pid"])
        state = f.get("prev_state", "R")
        preempted = state in STATE_RUNNING
        return (ts, tid, cpu, ev.SWITCH, int(preempted), prev_pid | next_pid << 32,
                int(f["prev_prio"]) | int(f["next_prio"]) << 16 | (0 if preempted else 1) << 32,
                (comm_field(rest, "prev_comm"), comm_field(rest, "next_comm")))
    if name in ("sched_wakeup", "sched_waking"):
        t = ev.WAKEUP if name == "sched_wakeup" else ev.WAKING
        return (ts, tid, cpu, t, 0, int(f["pid"]),
                int(f.get("target_cpu", cpu)) | int(f.get("prio", 0)) << 32,
                comm_field(rest, "comm"))
    if name == "sched_migrate_task":
        return (ts, tid, cpu, ev.MIGRATE, 0, int(f["pid"]),
                int(f["orig_cpu"]) | int(f["dest_cpu"]) << 32, comm_field(rest, "comm"))
    if name in ("page_fault_user", "page_fault_kernel"):
        t = ev.PF_USER if name == "page_fault_user" else ev.PF_KERNEL
        return (ts, tid, cpu, t, 0, _int(f.get("address", "0")), addr(f.get("ip", "0x0")),
                (_int(f.get("error_code", "0")),))
    if name == "workqueue_execute_start":
        m = re.search(r"work struct (0x[0-9a-f]+|\S+): function (\S+)", rest)
        return (ts, tid, cpu, ev.WQ_START, 0, _int(m.group(1)) if m else 0,
                addr(m.group(2)) if m else 0, None)
    if name == "workqueue_execute_end":
        m = re.search(r"work struct (0x[0-9a-f]+|\S+)", rest)
        return (ts, tid, cpu, ev.WQ_END, 0, _int(m.group(1)) if m else 0, 0, None)
    if name in ("hrtimer_expire_entry", "timer_expire_entry"):
        t = ev.HRTIMER_ENTRY if name[0] == "h" else ev.TIMER_ENTRY
        obj = f.get("hrtimer") or f.get("timer") or "0x0"
        return (ts, tid, cpu, t, 0, _int(obj), addr(f.get("function", "0x0")), None)
    if name in ("hrtimer_expire_exit", "timer_expire_exit"):
        t = ev.HRTIMER_EXIT if name[0] == "h" else ev.TIMER_EXIT
        obj = f.get("hrtimer") or f.get("timer") or "0x0"
        return (ts, tid, cpu, t, 0, _int(obj), 0, None)
    if name == "tick_stop":
        dep = f.get("dependency", "NONE")
        return (ts, tid, cpu, ev.TICK_STOP, 0, int(f.get("success", 0)),
                next((k for k, v in ev.TICK_DEPS.items() if v == dep), 0), None)
    if name == "nmi_handler":
        return (ts, tid, cpu, ev.NMI, int(f.get("handled", 0)), addr(f.get("handler", "0x0")),
                int(f.get("delta_ns", 0)), None)
    return None


def _int(text):
    """Hex (0x...) or decimal text as an int; 0 when it is neither."""
    try:
        return int(text, 0)
    except ValueError:
        return 0


def comm_field(rest, key):
    """A comm field: everything after key= up to the next ' word=' (comms hold spaces)."""
    m = re.search(r"\b%s=(.*?)(?= \w+=| ==>|$)" % key, rest)
    return m.group(1)[:15] if m else ""
