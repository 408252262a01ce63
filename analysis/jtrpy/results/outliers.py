"""outliers - a result's outlier log (outliers.csv: cpu,start_ns,length_ns), the
probes' record of every interruption, read for attribution and the timeline."""
from ..errors import UsageError
from ..system.memory import paused_gc

HEADER = "cpu,start_ns,length_ns"


def read_outliers(result):
    """[(cpu, start_ns, length_ns)] of a Result's outlier log; UsageError when it is
    missing or names a bad line."""
    path = result.file("outliers")
    return read_outliers_file(path)


def read_outliers_file(path):
    """[(cpu, start_ns, length_ns)] of the outlier log at @path."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise UsageError("%s: no such outlier log (the gap probe writes outliers.csv into "
                         "its results folder)" % path)
    except OSError as e:
        raise UsageError("%s: cannot read: %s" % (path, e.strerror))
    if not lines or lines[0].strip() != HEADER:
        raise UsageError("%s:1: header %r, expected %r" % (
            path, lines[0] if lines else "", HEADER))
    with paused_gc():
        return _parse(path, lines)


def by_cpu(outliers):
    """{cpu: ([start_ns], [length_ns])} of outliers, in log order."""
    out = {}
    for cpu, start, length in outliers:
        s = out.setdefault(cpu, ([], []))
        s[0].append(start)
        s[1].append(length)
    return out


def _parse(path, lines):
    """The rows after the header: a fast path, and a slow one that finds the bad line."""
    body = [line for line in lines[1:] if line]
    cells = ",".join(body).split(",")
    try:   # the fast path: one int() per cell, checked as a whole
        if len(cells) == 3 * len(body):
            nums = list(map(int, cells))
            if not nums or min(nums) >= 0:
                out = list(zip(nums[0::3], nums[1::3], nums[2::3]))
                if all(line.count(",") == 2 for line in body):
                    return out
    except ValueError:
        pass
    return _parse_slowly(path, lines)


def _parse_slowly(path, lines):
    """Parse line by line, to name the first bad line."""
    out = []
    for n, line in enumerate(lines[1:], 2):
        parts = line.split(",")
        try:
            cpu, start, length = int(parts[0]), int(parts[1]), int(parts[2])
            if len(parts) != 3 or cpu < 0 or start < 0 or length < 0:
                raise ValueError
        except (ValueError, IndexError):
            if not line.strip():
                continue
            raise UsageError("%s:%d: bad line %r: expected cpu,start_ns,length_ns as three "
                             "non-negative integers" % (path, n, line))
        out.append((cpu, start, length))
    return out
