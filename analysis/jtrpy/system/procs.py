# SPDX-License-Identifier: GPL-2.0-only
"""procs - what /proc/PID/stat says of a task and /proc/stat of the CPUs (one reader
of each for the whole package)."""
import collections
import os
import resource

ProcStat = collections.namedtuple("ProcStat", "comm state ppid flags starttime cpu_ns")


def proc_stat(pid):
    """ProcStat of task @pid (a pid or a tid), or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    # utime and stime are in clock ticks (USER_HZ: 10 ms on most machines)
    cpu_ns = (int(rest[11]) + int(rest[12])) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    return ProcStat(s[s.index("(") + 1:s.rindex(")")], rest[0], int(rest[1]), int(rest[6]),
                    int(rest[19]), cpu_ns)


def children_cpu_ns():
    """CPU time (user and system) of every child this process has waited for, in ns:
    the difference around one child's wait is that child's whole CPU time."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return int(round((ru.ru_utime + ru.ru_stime) * 1e9))


def cpu_times():
    """{"all" or a CPU number: [user, nice, system, idle, iowait, irq, softirq, steal]}
    in clock ticks so far (/proc/stat; guest time is inside user), or None."""
    out = {}
    try:
        with open("/proc/stat") as f:
            for line in f:
                if not line.startswith("cpu"):
                    break
                v = line.split()
                ticks = [int(x) for x in v[1:9]]
                out["all" if v[0] == "cpu" else int(v[0][3:])] = ticks + [0] * (8 - len(ticks))
    except (OSError, ValueError):
        return None
    return out
