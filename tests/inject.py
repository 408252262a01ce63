#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""inject - interference with a known cause, for the attribution ground-truth tests.

Each mode does one kind of thing to a CPU at a steady rate and writes, one
line per injection, the CLOCK_MONOTONIC ns just before and just after it
("begin,end"), so a test can tell which outliers it caused.

  fifo CPU       a SCHED_FIFO task named jtr-inject on CPU spins --spin-us
                 every --period-ms (task preemption)
  ipi CPU        from another CPU, read /dev/cpu/CPU/cpuid: the kernel runs
                 cpuid on CPU through a call-function-single IPI
  disk FILE      from another CPU, O_DIRECT reads of FILE (a block device or
                 a file on one): each completes with the device's interrupt,
                 wherever its affinity points; --jitter-us J issues each read
                 at a random point of the J us after its period's start (reads
                 at a fixed phase of a probe whose interval divides the period
                 complete at that one phase of every wake-up: inside 650 of
                 1,000 in one run, 3 in the next)
  busy CPU       a task of the normal scheduler named jtr-inject on CPU that
                 never sleeps for --duration s: two tasks runnable there with
                 the probe (on a nohz_full CPU the tick then runs, kept by
                 the scheduler); one line, its whole span
"""
import argparse
import array
import glob
import mmap
import os
import random
import sys
import time

NAME = "jtr-inject"


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def set_comm(name):
    with open("/proc/self/comm", "w") as f:
        f.write(name)


def sleep_until(t_ns):
    d = t_ns - now_ns()
    if d > 0:
        time.sleep(d / 1e9)


def lock_memory():
    """mlockall(MCL_CURRENT | MCL_FUTURE): no page faults from here on (as root)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mlockall(1 | 2)


def fifo(a, emit):
    """Spin on the CPU at SCHED_FIFO: each spin preempts whatever runs there.
    A line runs from the spin's start (the injector surely ran from there: its
    thread's CPU time is no better, it counted 55 us of the interrupt that woke
    it once) to just before it sleeps again, its Python after the spin included
    (300 us once on a busy host); memory is locked first, so no page fault
    lengthens it. Its Python back from the sleep comes before a line's begin
    (up to 201 us on a busy host)."""
    lock_memory()
    os.sched_setaffinity(0, {a.target})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(a.prio))
    spin_ns = int(a.spin_us * 1000)
    period_ns = int(a.period_ms * 1e6)
    end = now_ns() + int(a.duration * 1e9)
    st = array.array("q", [0]) * (2 * (int(a.duration * 1e3 / a.period_ms) + 2))
    n = 0
    t = now_ns() + period_ns
    while t < end:
        sleep_until(t)
        while True:
            b = now_ns()
            while now_ns() - b < spin_ns:
                pass
            t += period_ns
            e = now_ns()
            st[n], st[n + 1] = b, e
            n += 2
            if t >= end or t <= e:
                break
            time.sleep((t - e) / 1e9)
    # leave the CPU before the results are written: that is not an injection
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    others = set(range(os.cpu_count())) - {a.target}
    if others:
        os.sched_setaffinity(0, others)
    for i in range(0, n, 2):
        emit(st[i], st[i + 1])


def ipi(a, emit):
    """Run cpuid on the target CPU from another one: one IPI per read."""
    os.sched_setaffinity(0, {a.source})
    fd = os.open("/dev/cpu/%d/cpuid" % a.target, os.O_RDONLY)
    period_ns = int(a.period_ms * 1e6)
    end = now_ns() + int(a.duration * 1e9)
    t = now_ns()
    while t < end:
        sleep_until(t)
        b = now_ns()
        os.pread(fd, 16, 0)
        emit(b, now_ns())
        t += period_ns
    os.close(fd)


def disk(a, emit):
    """Direct reads from another CPU: each completion is one device interrupt."""
    os.sched_setaffinity(0, {a.source})
    fd = os.open(a.dev, os.O_RDONLY | os.O_DIRECT)
    size = os.lseek(fd, 0, os.SEEK_END)
    if size < 4096:
        raise SystemExit("inject: %s: too small for 4 KiB direct reads" % a.dev)
    buf = mmap.mmap(-1, 4096)
    period_ns = int(a.period_ms * 1e6)
    end = now_ns() + int(a.duration * 1e9)
    rnd = random.Random(1)
    jitter_ns = int(a.jitter_us * 1000)
    t = now_ns()
    while t < end:
        sleep_until(t + (rnd.randrange(jitter_ns) if jitter_ns else 0))
        off = rnd.randrange(0, size // 4096) * 4096
        b = now_ns()
        os.preadv(fd, [buf], off)
        emit(b, now_ns())
        t += period_ns
    os.close(fd)


def busy(a, note):
    """A normal task that never sleeps on CPU a.target for a.duration s (its span
    from before it moves there)."""
    b = now_ns()
    os.sched_setaffinity(0, {a.target})
    end = b + int(a.duration * 1e9)
    while now_ns() < end:
        pass
    note(b, now_ns())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("fifo", "ipi", "disk", "busy"))
    ap.add_argument("target", help="CPU (fifo, ipi) or a file on the block device (disk)")
    ap.add_argument("--source", type=int, default=0, help="CPU the ipi/disk load runs on")
    ap.add_argument("--prio", type=int, default=10)
    ap.add_argument("--period-ms", type=float, default=20)
    ap.add_argument("--spin-us", type=float, default=200)
    ap.add_argument("--jitter-us", type=float, default=0)
    ap.add_argument("--duration", type=float, default=2)
    ap.add_argument("--out", required=True)
    ap.add_argument("--start-when", metavar="GLOB",
                    help="first wait (unpinned, looking every 5 ms, 60 s at most) until a "
                    "path matches GLOB: the injector is started, its Python loaded, before "
                    "what it waits for (its start took a second on a busy host)")
    ap.add_argument("--delay", type=float, default=0,
                    help="seconds to wait (after --start-when) before injecting")
    a = ap.parse_args()
    if a.start_when:
        give_up = time.monotonic() + 60
        while not glob.glob(a.start_when) and time.monotonic() < give_up:
            time.sleep(0.005)
    time.sleep(a.delay)
    if a.mode == "disk":
        a.dev = a.target
    else:
        a.target = int(a.target)
    set_comm(NAME)
    done = []
    {"fifo": fifo, "ipi": ipi, "disk": disk, "busy": busy}[a.mode](
        a, lambda b, e: done.append((b, e)))
    with open(a.out, "w") as f:
        for b, e in done:
            f.write("%d,%d\n" % (b, e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
