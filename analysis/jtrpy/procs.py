"""procs - what /proc/PID/stat says of a task (one reader for the whole package)."""
import collections

ProcStat = collections.namedtuple("ProcStat", "comm state ppid flags starttime")


def proc_stat(pid):
    """ProcStat of task @pid (a pid or a tid), or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    return ProcStat(s[s.index("(") + 1:s.rindex(")")], rest[0], int(rest[1]), int(rest[6]),
                    int(rest[19]))
