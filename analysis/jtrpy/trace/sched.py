# SPDX-License-Identifier: GPL-2.0-only
"""sched - the scheduler's own account of a CPU, for the cross-check:
`perf sched record` beside the tracer (SchedRecorder, kept as sched.data in the
results folder) and `perf sched timehist` of it read back as slices (one per
time a task left a CPU: it ran from its previous switch to that time).

Times and run times come printed in us (truncated), so a slice is known to
RESOLUTION_NS either way.
"""
import os
import re
import subprocess
import tempfile

from ..errors import UsageError
from ..system import packages
from ..system.files import move_file
from . import perf

NAME = "sched.data"
FILE_ROLE = "sched"          # its role in a result's "files"
TOOL = "perf sched timehist"
RESOLUTION_NS = 1000    # timehist prints us
HOW_TO_RECORD = "record it with 'jtr run --cross-check'"
# "   12117.186312 [0001]  bash[6817/6774]   0.000   0.032   0.077" ("<idle>" has no [tid])
LINE = re.compile(r"^\s*(\d+)\.(\d{6})\s+\[(\d+)\]\s+(.*?)(?:\[(-?\d+)(?:/(-?\d+))?\])?"
                  r"\s+\d+\.\d+\s+\d+\.\d+\s+(\d+)\.(\d{3})\s*$")


class SchedRecorder(perf.PerfRecord):
    """perf sched record on the probe's CPUs, beside the tracer, into a temporary folder."""

    what = "perf sched record"

    def __init__(self, cpus_list):
        super().__init__(cpus_list, tempfile.mkdtemp(prefix="jtr-sched-"), NAME)

    def command(self):
        return [perf.perf_path(), "sched", "record", "-q", "-k", "CLOCK_MONOTONIC",
                "-C", self.cpus, "-o", self.data]

    def move_into(self, outdir):
        """sched.data into the results folder."""
        try:
            move_file(self.data, os.path.join(outdir, NAME))
        finally:
            self.cleanup()


def record_unavailable():
    """Why jtr run cannot record sched.data here, or None."""
    why = perf.unavailable()
    return "--cross-check needs perf sched record: %s" % why if why else None


def unavailable():
    """Why perf sched record cannot run here, or None."""
    why = perf.unavailable()
    return "--cross-check needs perf sched record: %s" % why if why else None


def timehist_unavailable():
    """Why perf sched timehist cannot run here, or None."""
    if not perf.perf_path():
        return ("--cross-check needs perf sched timehist: perf is not installed (%s)"
                % packages.program_hint("perf"))
    return None


def timehist_slice(line):
    """One line of `perf sched timehist` as a slice (cpu, tid, pid, comm, begin_ns,
    end_ns), or None for a line that is not one; tid -1: a task it cannot place."""
    m = LINE.match(line)
    if not m:
        return None
    sec, usec, cpu, comm, tid, pid, ms, us = m.groups()
    comm = comm.strip()
    end = int(sec) * 1_000_000_000 + int(usec) * 1000
    run = int(ms) * 1_000_000 + int(us) * 1000
    if tid is None:
        # a task perf has no name for prints as ":TID" (perf 6.1: a thread of
        # another pid namespace), the idle task as "<idle>"
        bare = re.fullmatch(r":(\d+)", comm)
        tid = pid = int(bare.group(1)) if bare else 0 if comm == "<idle>" else -1
    tid = int(tid)
    return (int(cpu), tid, int(pid) if pid is not None else tid, comm, end - run, end)


def read_timehist(path, cpus):
    """Slices (cpu, tid, pid, comm, begin_ns, end_ns) of `perf sched timehist` on @cpus,
    in time order per CPU; tid 0 is the idle task."""
    cmd = [perf.perf_path(), "sched", "timehist", "-i", path]
    if cpus:
        cmd += ["-C", ",".join(str(c) for c in sorted(cpus))]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors="replace")
    slices = [s for s in map(timehist_slice, p.stdout) if s]
    err = p.stderr.read()
    if p.wait() != 0:
        lines = [x for x in err.splitlines() if x.strip()]
        raise UsageError("perf sched timehist -i %s failed: %s; %s" % (
            path, lines[-1] if lines else "exit %d" % p.returncode, HOW_TO_RECORD))
    slices.sort(key=lambda s: (s[0], s[5]))
    return slices


def read_switches(path):
    """What timehist does not say right, from the sched_switch records in @path
    (perf script, read as the perf backend reads it): pid -> comm (prev_comm,
    next_comm), and the pid of each thread that was leaving for good, by (cpu,
    time as timehist prints it). timehist names tasks from perf's thread table,
    which misses names given before the recording or on CPUs it did not record
    (the probe's thread shows as ':TID'), and it shows an exiting thread's last
    slice as ':-1[-1/PID]' (the sample's tid; the record's prev_pid is right)."""
    p = subprocess.Popen([perf.perf_path(), "script", "-i", path, "--ns", "-F",
                          "tid,cpu,time,event,trace"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, errors="replace")
    comms, exits = {}, {}
    for line in p.stdout:
        m = perf.LINE.match(line)
        if not m or m.group(6) != "sched_switch":
            continue
        rest = m.group(7)
        f = dict(perf.FIELD.findall(rest))
        for side in ("prev", "next"):
            comm = perf.comm_field(rest, side + "_comm")
            if comm and f.get(side + "_pid", "").isdigit():
                comms[int(f[side + "_pid"])] = comm
        if m.group(1) == "-1" and f.get("prev_pid", "").isdigit():
            exits[(int(m.group(2)), int(m.group(3)) * 1_000_000_000 +
                   int(m.group(4)) // 1000 * 1000)] = int(f["prev_pid"])
    p.wait()
    return comms, exits


def read_sched(path, cpus):
    """What @path (sched.data) says of @cpus: (slices, comms, lost), slices as
    read_timehist()'s with the exiting threads' pids put back (read_switches),
    comms pid -> name, lost the events perf lost recording them."""
    slices = read_timehist(path, cpus)
    comms, exits = read_switches(path)
    for i, s in enumerate(slices):
        pid = exits.get((s[0], s[5])) if s[1] < 0 else None
        if pid is not None:
            slices[i] = (s[0], pid, pid, comms.get(pid, s[3])) + s[4:]
    return slices, comms, perf.lost_events(path)
