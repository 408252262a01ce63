# SPDX-License-Identifier: GPL-2.0-only
"""The bpftrace scripts in ebpf/bpftrace/: each is run on the last CPU while a
known load runs there, and what it prints at Ctrl-C is checked against the
load and, for interrupts, against /proc/interrupts."""
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import ROOT

# the tests that time or attribute real runs are marked measures (alone, after
# the rest); the others judge what the commands write and say, which holds beside
# other tests

BT_DIR = os.path.join(ROOT, "ebpf", "bpftrace")
SCRIPTS = ["irqs.bt", "cpu-tasks.bt", "runqlat.bt"]
CPU = max(os.sched_getaffinity(0))          # the last CPU: 1 on a 2-CPU machine
OTHER = min(os.sched_getaffinity(0))        # where the wake-up partner runs
LOAD_COMM = "jtr-bt-load"
PARTNER_COMM = "jtr-bt-partner"
SOFTIRQS = {"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED",
            "HRTIMER", "RCU"}

# The load: named LOAD_COMM, pinned to CPU by the test.  It sleeps 1 ms SLEEPS
# times (a wakeup and a switch-in each), is woken PINGS times through a pipe by
# a partner process named PARTNER_COMM pinned to OTHER (cross-CPU wakeups, so
# reschedule or function-call IPIs), sends UDP datagrams to itself over
# loopback (NET_RX softirqs on its CPU), reads a file with O_DIRECT (block
# IRQs, on whichever CPU the disk's IRQ goes to), then spins for BUSY seconds
# of CPU time (timer ticks).  Prints its pid and its partner's.
LOAD = r"""
import ctypes, mmap, os, random, socket, sys, time
libc = ctypes.CDLL(None)
def name(n):
    libc.prctl(15, n.encode(), 0, 0, 0)          # PR_SET_NAME
name(sys.argv[1])
sleeps, pings, udp, reads = (int(a) for a in sys.argv[3:7])
busy, other = float(sys.argv[7]), int(sys.argv[8])
partner = 0
if pings:
    (r1, w1), (r2, w2) = os.pipe(), os.pipe()
    partner = os.fork()
    if partner == 0:
        name(sys.argv[2])
        os.sched_setaffinity(0, {other})
        for _ in range(pings):
            os.write(w1, b"x")
            os.read(r2, 1)
        os._exit(0)
    os.sched_setaffinity(partner, {other})   # at once, not when the child first runs
for _ in range(sleeps):
    time.sleep(0.001)
for _ in range(pings):
    os.read(r1, 1)
    os.write(w2, b"x")
if partner:
    os.waitpid(partner, 0)
if udp:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    for _ in range(udp):
        s.sendto(b"x", s.getsockname())
        s.recv(1)
if reads:
    fd = os.open(sys.executable, os.O_RDONLY | os.O_DIRECT)
    size = os.fstat(fd).st_size
    buf = mmap.mmap(-1, 4096)
    try:
        for _ in range(reads):
            os.preadv(fd, [buf], random.randrange(0, max(size - 4096, 1)) & ~4095)
    except OSError:
        pass
    os.close(fd)
t = time.process_time()
while time.process_time() - t < busy:
    pass
print(os.getpid(), partner)
"""


def load_args(sleeps=0, pings=0, udp=0, reads=0, busy=0.0):
    """The load's command line and how it is pinned to CPU (Popen's arguments)."""
    if OTHER == CPU:
        pings = 0
    return {"args": [sys.executable, "-c", LOAD, LOAD_COMM, PARTNER_COMM, str(sleeps),
                     str(pings), str(udp), str(reads), str(busy), str(OTHER)],
            "preexec_fn": lambda: os.sched_setaffinity(0, {CPU})}


def cpu_time(pid, seconds, timeout):
    """Wait until process pid has run seconds of CPU time (user and system)."""
    from jtrpy.system.procs import proc_stat
    end = time.monotonic() + timeout
    while True:
        used = proc_stat(pid).cpu_ns / 1e9
        if used >= seconds:
            return used
        assert time.monotonic() < end, "pid %d ran %.2f s of CPU in %d s" % (pid, used, timeout)
        time.sleep(0.02)


def run_load(**load):
    """Run the load pinned to CPU; returns (pid, partner pid)."""
    p = subprocess.run(**load_args(**load), stdout=subprocess.PIPE, text=True, timeout=30,
                       check=True)
    pid, partner = p.stdout.split()
    return int(pid), int(partner)


def need_bpftrace():
    if os.geteuid() != 0:
        pytest.skip("bpftrace needs root to load BPF programs")
    bt = shutil.which("bpftrace")
    if not bt:
        pytest.skip("bpftrace is not installed")
    if not os.path.isdir("/sys/kernel/tracing/events"):
        subprocess.run(["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"], check=False)
    assert os.path.isdir("/sys/kernel/tracing/events"), "tracefs is not mounted"
    return bt


def perf_fds(pid):
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            if "perf_event" in os.readlink("/proc/%d/fd/%s" % (pid, fd)):
                n += 1
        except OSError:
            pass
    return n


class Bpftrace:
    """bpftrace SCRIPT ARGS... with its stdout read line by line."""

    def __init__(self, script, *args):
        self.bt = need_bpftrace()
        self.script = script
        self.p = subprocess.Popen([self.bt, os.path.join(BT_DIR, script)] + [str(a) for a in args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.err = []
        self.cond = threading.Condition()
        self.readers = [threading.Thread(target=self._read, args=(self.p.stdout, self.lines)),
                        threading.Thread(target=self._read, args=(self.p.stderr, self.err))]
        for t in self.readers:
            t.daemon = True
            t.start()

    def _read(self, f, into):
        for line in f:
            with self.cond:
                into.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def stdout(self):
        with self.cond:
            return "\n".join(self.lines)

    def matches(self, regex):
        """How many stdout lines so far match regex."""
        with self.cond:
            return sum(1 for line in self.lines if re.search(regex, line))

    def wait_for(self, regex, timeout=10.0, after=0):
        """The first stdout line matching regex after the first @after of them;
        fails after timeout."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                seen = 0
                for line in self.lines:
                    m = re.search(regex, line)
                    if m:
                        if seen == after:
                            return m
                        seen += 1
                left = end - time.monotonic()
                if left <= 0 or (self.p.poll() is not None and not any(
                        t.is_alive() for t in self.readers)):
                    raise AssertionError("no line matching %r from %s within %.0f s; stdout:\n%s"
                                         "\nstderr:\n%s" % (regex, self.script, timeout,
                                                            "\n".join(self.lines),
                                                            "\n".join(self.err)))
                self.cond.wait(min(left, 0.1))

    def wait_attached(self, timeout=10.0):
        """Wait until every probe is attached.  bpftrace runs BEGIN (and prints the
        usage line) before it attaches the other probes; each attached tracepoint
        or interval probe holds a perf event fd, BEGIN and END do not, so wait
        for nprobes - 2 such fds and then for the count to stop growing."""
        nprobes = int(self.wait_for(r"^Attaching (\d+) probes?\.\.\.", timeout).group(1))
        end = time.monotonic() + timeout
        last, since = -1, time.monotonic()
        while time.monotonic() < end:
            assert self.p.poll() is None, "bpftrace exited:\n%s\n%s" % (
                self.stdout(), "\n".join(self.err))
            n = perf_fds(self.p.pid)
            if n != last:
                last, since = n, time.monotonic()
            elif n >= nprobes - 2 and time.monotonic() - since >= 0.3:
                return
            time.sleep(0.02)
        raise AssertionError("%s: probes not attached within %.0f s (%d perf fds for %d probes)"
                             % (self.script, timeout, last, nprobes))

    def stop(self, timeout=30.0):
        """SIGINT, as Ctrl-C; returns all of stdout. bpftrace 0.17 now and then
        misses a SIGINT (about one run in 30 here): a person presses Ctrl-C
        again, and so does this, every 5 s."""
        end = time.monotonic() + timeout
        try:
            while True:
                self.p.send_signal(signal.SIGINT)
                try:
                    self.p.wait(min(5.0, max(0.1, end - time.monotonic())))
                    break
                except subprocess.TimeoutExpired:
                    if time.monotonic() >= end:
                        raise
        except subprocess.TimeoutExpired:
            raise AssertionError("%s did not stop within %.0f s of SIGINT; stdout:\n%s\nstderr:\n%s"
                                 % (self.script, timeout, self.stdout(), "\n".join(self.err)))
        finally:
            self.kill()
        for t in self.readers:
            t.join(5)
        assert self.p.returncode == 0, "%s exited %d:\n%s" % (self.script, self.p.returncode,
                                                              "\n".join(self.err))
        return self.stdout()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


@pytest.fixture
def bpftrace():
    started = []

    def start(script, *args):
        b = Bpftrace(script, *args)
        started.append(b)
        return b
    yield start
    for b in started:
        b.kill()


def parse_maps(text):
    """bpftrace's map printout -> {map: {key: value}}; a histogram's value is
    [(bucket, count)], a map without keys has the key None."""
    maps = {}
    hist = None
    for line in text.splitlines():
        m = re.match(r"^@(\w+)(?:\[(.*)\])?: (\d+)$", line)
        if m:
            maps.setdefault(m.group(1), {})[m.group(2)] = int(m.group(3))
            hist = None
            continue
        m = re.match(r"^@(\w+)(?:\[(.*)\])?: $", line)
        if m:
            hist = maps.setdefault(m.group(1), {}).setdefault(m.group(2), [])
            continue
        m = re.match(r"^\[([^\]]*?)\)?\]?\s+(\d+) \|[@ ]*\|$", line)
        if m and hist is not None:
            hist.append((m.group(1), int(m.group(2))))
            continue
        hist = None
    return maps


def hist_total(h):
    return sum(n for _, n in h)


def interrupts(col):
    """/proc/interrupts, CPU column @col: {row name: (count, description)}."""
    rows = {}
    with open("/proc/interrupts") as f:
        ncpu = len(f.readline().split())
        for line in f:
            parts = line.split()
            vals = parts[1:1 + ncpu]
            if len(vals) == ncpu and all(v.isdigit() for v in vals):
                rows[parts[0].rstrip(":")] = (int(vals[col]), " ".join(parts[1 + ncpu:]))
    return rows


def online_index(cpu):
    """/proc/interrupts has one column per online CPU: the column of @cpu."""
    with open("/proc/interrupts") as f:
        return f.readline().split().index("CPU%d" % cpu)


# --- irqs.bt ----------------------------------------------------------------

@pytest.mark.measures
def test_irqs_counts_match_proc_interrupts(bpftrace):
    bt = bpftrace("irqs.bt", CPU)
    bt.wait_for(r"^usage: irqs\.bt CPU \[INTERVAL\]; tracing CPU %d, Ctrl-C to stop$" % CPU)
    bt.wait_attached()
    col = online_index(CPU)
    before = interrupts(col)
    run_load(pings=300, udp=50, reads=30, busy=0.3)
    after = interrupts(col)
    out = bt.stop()
    maps = parse_maps(out)
    assert re.search(r"^=== \d\d:\d\d:\d\d CPU %d, at exit ===$" % CPU, out, re.M), out

    delta = {k: after[k][0] - before.get(k, (0, ""))[0] for k in after}
    vec = maps.get("vector_count", {})
    assert delta["LOC"] > 0, "no timer tick on CPU %d during a busy loop?" % CPU
    # bpftrace saw the interrupts /proc/interrupts counted while it was attached,
    # but for a few: the kernel skips a BPF tracing program when an interrupt
    # comes while another one runs on the CPU (one of ours with interrupts on,
    # as at softirq entry, or another tool's)
    def seen(n, d):
        return n >= 0.8 * d - 3
    assert seen(vec.get("local_timer", 0), delta["LOC"]), (delta["LOC"], out)
    assert seen(vec.get("reschedule", 0), delta.get("RES", 0)), (delta.get("RES"), out)
    assert seen(vec.get("call_function", 0) + vec.get("call_function_single", 0),
                delta.get("CAL", 0)), (delta.get("CAL"), out)
    assert seen(vec.get("irq_work", 0), delta.get("IWI", 0)), (delta.get("IWI"), out)
    # each vector's histogram holds one duration per counted interrupt
    for v, n in vec.items():
        if v == "irq_work":
            assert v not in maps.get("vector_ns", {})     # count only: no exit tracepoint
        else:
            assert hist_total(maps["vector_ns"][v]) == n, (v, out)

    hard = maps.get("hardirq_count", {})
    by_irq = {}
    for key, n in hard.items():
        irq, name = key.split(", ", 1)
        by_irq[irq] = by_irq.get(irq, 0) + n
        assert name in after[irq][1].replace(",", " ").split(), (key, after[irq])
        assert hist_total(maps["hardirq_ns"][key]) == n, (key, out)
    for irq, d in delta.items():
        if irq.isdigit() and d > 0:
            assert by_irq.get(irq, 0) > 0 and seen(by_irq[irq], d), \
                "IRQ %s: %d in /proc/interrupts\n%s" % (irq, d, out)

    soft = maps.get("softirq_count", {})
    assert set(soft) <= SOFTIRQS, out
    assert soft.get("NET_RX", 0) >= 1, "loopback UDP on CPU %d raised no NET_RX\n%s" % (CPU, out)
    for s, n in soft.items():
        assert hist_total(maps["softirq_ns"][s]) == n, (s, out)


@pytest.mark.measures
def test_irqs_interval_reports(bpftrace):
    bt = bpftrace("irqs.bt", CPU, 1)
    bt.wait_for(r"^usage: irqs\.bt CPU \[INTERVAL\]; tracing CPU %d, report every 1 s and at "
                r"exit, Ctrl-C to stop$" % CPU)
    bt.wait_attached()
    report = r"^=== \d\d:\d\d:\d\d CPU %d, last 1 s ===$" % CPU
    # the busy loop until two reports have come after the load has itself run
    # 0.3 s on the CPU (the second all inside the loop). On a busy machine one
    # report came empty now and then, its events in the section after it (with
    # bpftrace's own reader starved: both CPUs busy): one report after the load
    # failed in CI that way
    load = subprocess.Popen(**load_args(busy=60), stdout=subprocess.DEVNULL)
    try:
        cpu_time(load.pid, 0.3, timeout=10)
        awaited = bt.matches(report) + 1
        bt.wait_for(report, timeout=5, after=awaited)
    finally:
        load.kill()
        load.wait()
    out = bt.stop()
    sections = re.split(r"^=== \d\d:\d\d:\d\d CPU \d+, (last 1 s|at exit) ===$", out, flags=re.M)
    kinds = sections[1::2]
    assert kinds[-1] == "at exit" and "last 1 s" in kinds, out
    # a 1 s report of the two saw the busy loop's ticks
    ticks = [parse_maps(s).get("vector_count", {}).get("local_timer", 0)
             for k, s in zip(kinds, sections[2::2]) if k == "last 1 s"]
    assert max(ticks[awaited - 1:awaited + 1]) > 0, out


# --- cpu-tasks.bt -----------------------------------------------------------

@pytest.mark.measures
def test_cpu_tasks_shows_the_load(bpftrace):
    bt = bpftrace("cpu-tasks.bt", CPU)
    bt.wait_for(r"^usage: cpu-tasks\.bt CPU; tracing CPU %d, Ctrl-C to stop$" % CPU)
    bt.wait_attached()
    busy = 0.3
    pid, partner = run_load(sleeps=200, pings=100, busy=busy)
    out = bt.stop()
    maps = parse_maps(out)
    traced_ms = int(re.search(r"^CPU %d, traced for (\d+) ms$" % CPU, out, re.M).group(1))

    switched, oncpu = maps["switched_in"], maps["oncpu_us"]
    key = "%s, %d" % (LOAD_COMM, pid)
    # 200 sleeps and 100 pipe reads, each ends with a switch-in
    assert switched.get(key, 0) >= 150, out
    # it spun for 0.3 s of CPU time; printed in microseconds
    assert busy * 1e6 * 0.9 <= oncpu[key] <= traced_ms * 1000, out
    # the time slices of one CPU do not overlap
    assert sum(oncpu.values()) <= (traced_ms + 1) * 1000, out
    # only this CPU: the partner, woken 100 times on another CPU, ran here only
    # when it started (it is forked here, then moves)
    if partner:
        assert sum(n for k, n in switched.items() if k.endswith(", %d" % partner)) <= 2, out
    # sorted by value, largest last
    assert list(switched.values()) == sorted(switched.values()), out
    assert list(oncpu.values()) == sorted(oncpu.values()), out


# --- runqlat.bt -------------------------------------------------------------

@pytest.mark.measures
def test_runqlat_histogram(bpftrace):
    bt = bpftrace("runqlat.bt", CPU)
    bt.wait_for(r"^usage: runqlat\.bt CPU; tracing CPU %d, Ctrl-C to stop$" % CPU)
    bt.wait_attached()
    pid, partner = run_load(sleeps=200, pings=100)
    out = bt.stop()
    maps = parse_maps(out)

    count, mx = maps["count"], maps["max_us"]
    assert count.get(LOAD_COMM, 0) >= 150, out
    assert 0 <= mx[LOAD_COMM] < 1000000, out
    if partner:
        assert PARTNER_COMM not in count, out       # woken as often, but on another CPU
    hist = maps["runqlat_us"][None]
    assert hist and hist_total(hist) >= sum(count.values()) > 0, out
    # the largest latency falls in the histogram's last bucket
    last = hist[-1][0].split(",")[0]
    lo = int(last.replace("K", "000").replace("M", "000000")) if last[-1] in "KM" else int(last)
    assert max(mx.values()) >= lo, out


# --- all --------------------------------------------------------------------

@pytest.mark.parametrize("script", SCRIPTS)
def test_usage_without_cpu(script):
    bt = need_bpftrace()
    p = subprocess.run([bt, os.path.join(BT_DIR, script)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    assert re.search(r"^usage: %s CPU\b.*; the CPU number is required$" % re.escape(script),
                     p.stdout, re.M), p.stdout
    assert "tracing CPU" not in p.stdout
    assert not re.search(r"^@", p.stdout, re.M), p.stdout      # no report


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_header(script):
    path = os.path.join(BT_DIR, script)
    assert os.access(path, os.X_OK)
    with open(path) as f:
        text = f.read()
    assert re.match(r"#!/usr/bin/env bpftrace\n// SPDX-License-Identifier: GPL-2.0-only\n"
                    r"/\*\n \* %s - " % re.escape(script), text), text[:200]
    assert re.search(r"^ \* Usage: +%s CPU" % re.escape(script), text, re.M)
    assert re.search(r"^ \* Example: bpftrace ebpf/bpftrace/%s \d" % re.escape(script), text, re.M)
    # every probe but BEGIN/END and the wakeup recorder is filtered to the CPU
    assert "/cpu == $1" in text
