#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""watch_inject - an application and a spinner of known count on one CPU, for
jtr watch's tests (run it in a pid namespace of its own: it pins tasks).

The application is sh's busy loop pinned to CPU (--no-app: the caller runs
one). With --hog-comm, a Python busy loop of that comm shares the CPU at
SCHED_IDLE: the application preempts it all the time, and it takes the CPU from
the application now and then. The
spinner (comm --spinner-comm, default jtr-inject) runs at SCHED_FIFO: it starts
on another CPU and is moved onto CPU, and back, only while it sleeps, so the
only times it takes CPU from the application are its --spins spins (the first
one --first-spin-us long, when given): exactly that many preemptions. --spins 0:
no spinner, the application runs --app-s. Prints "spins N" when done and writes
each spin's CLOCK_MONOTONIC begin,end to --out. The Python loops (--busy COMM
--until NS [--rt PRIO | --idle | --nice N] runs one) end by themselves after --max-s,
whatever happens to this process (sh's ends with the pid namespace)."""
import argparse
import os
import subprocess
import sys
import time


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def name_self(comm):
    with open("/proc/self/comm", "w") as f:
        f.write(comm)


def busy(a):
    """A busy loop of comm a.busy until a.until (CLOCK_MONOTONIC ns)."""
    name_self(a.busy)
    if a.nice:
        os.setpriority(os.PRIO_PROCESS, 0, a.nice)
    if a.rt:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(a.rt))
    elif a.idle:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    if a.sleep_us:                  # an application that sleeps between its turns
        while now_ns() < a.until:
            time.sleep(a.sleep_us / 1e6)
    while now_ns() < a.until:
        pass


def spinner(a):
    name_self(a.spinner_comm)
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    spans = []
    period = int(a.period_ms * 1e6)
    t = now_ns() + 10**9            # the first spin is its first wake-up there
    end = t + (a.spins - 1) * period + int(max(a.spin_us, a.first_spin_us) * 1000)
    print("ready %d" % end, flush=True)     # moved onto the CPU while it sleeps
    for i in range(a.spins):
        d = t - now_ns()
        if d > 0:
            time.sleep(d / 1e9)
        b = now_ns()
        spin_us = a.first_spin_us if i == 0 and a.first_spin_us else a.spin_us
        while now_ns() - b < spin_us * 1000:
            pass
        spans.append((b, now_ns()))
        t += period
    time.sleep(1.0)                 # moved off the CPU meanwhile: no I/O on it
    with open(a.out, "w") as f:
        f.write("".join("%d,%d\n" % s for s in spans))
    print("done", flush=True)


def loop(cpu, comm, until, idle=False):
    """A busy loop pinned to @cpu (its own process)."""
    return subprocess.Popen(["taskset", "-c", str(cpu), sys.executable, __file__, "--busy", comm,
                             "--until", str(until)] + (["--idle"] if idle else []))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cpu", type=int, nargs="?")
    ap.add_argument("--other", type=int, default=0)
    ap.add_argument("--spins", type=int, default=20)
    ap.add_argument("--period-ms", type=float, default=50)
    ap.add_argument("--spin-us", type=float, default=300)
    ap.add_argument("--first-spin-us", type=float, default=0,
                    help="the first spin's length, when it is to stand out")
    ap.add_argument("--app-s", type=float, default=0, help="then the app runs this long more")
    ap.add_argument("--no-app", action="store_true", help="the caller runs the application")
    ap.add_argument("--hog-comm", help="a SCHED_IDLE busy loop of this comm on CPU too")
    ap.add_argument("--spinner-comm", default="jtr-inject")
    ap.add_argument("--max-s", type=float, default=120, help="no loop runs longer")
    ap.add_argument("--out")
    ap.add_argument("--spinner", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--busy", help=argparse.SUPPRESS)
    ap.add_argument("--sleep-us", type=float, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--until", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--rt", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--idle", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--nice", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.busy:
        return busy(a)
    if a.spinner:
        return spinner(a)
    until = now_ns() + int(a.max_s * 1e9)
    tasks = []
    if not a.no_app:
        tasks.append(subprocess.Popen(["taskset", "-c", str(a.cpu), "sh", "-c",
                                       "while :; do :; done"]))
    if a.hog_comm:
        tasks.append(loop(a.cpu, a.hog_comm, until, idle=True))
    time.sleep(0.3)
    if a.spins:
        sp = subprocess.Popen(["taskset", "-c", str(a.other), sys.executable, __file__,
                               "--spinner"] + sys.argv[1:], stdout=subprocess.PIPE, text=True)
        word, end = sp.stdout.readline().split()
        assert word == "ready"
        subprocess.run(["taskset", "-p", "-c", str(a.cpu), str(sp.pid)], check=True,
                       stdout=subprocess.DEVNULL)
        time.sleep(max(0, int(end) - now_ns()) / 1e9 + 0.3)    # it sleeps after its last spin
        subprocess.run(["taskset", "-p", "-c", str(a.other), str(sp.pid)], check=True,
                       stdout=subprocess.DEVNULL)
        assert sp.stdout.readline().strip() == "done"
        sp.wait()
    time.sleep(a.app_s)
    for t in tasks:
        t.kill()
        t.wait()
    print("spins %d" % a.spins, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
