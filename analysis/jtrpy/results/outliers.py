"""outliers - a result's outlier log (outliers.csv: cpu,start_ns,length_ns), the
probes' record of every interruption, read for attribution and the timeline.

The log is ASCII: the header, then one line per outlier of three whole numbers
(CPU 0 to 65535, times 0 to 2^64-1). It is read only from inside its result's
folder, as a regular file of at most MAX_BYTES; an error names the line, never
its content."""
import re

from ..errors import UsageError
from ..system.files import decode_text, read_bytes
from ..system.memory import paused_gc

HEADER = "cpu,start_ns,length_ns"
MAX_BYTES = 1 << 30             # 1 GiB: ~30 million outliers
MAX_CPU = 65535
MAX_NS = (1 << 64) - 1
WHAT = "outlier log"
_BODY = re.compile(r"(?:[0-9]{1,5},[0-9]{1,20},[0-9]{1,20}\n|\n)*")
_NUMBER = re.compile(r"[0-9]+")
_LINE = re.compile(r"([0-9]{1,5}),([0-9]{1,20}),([0-9]{1,20})")


def read_outliers(result):
    """[(cpu, start_ns, length_ns)] of a Result's outlier log; UsageError when it is
    missing, outside the result's folder or names a bad line."""
    return read_outliers_file(result.file("outliers"), within=result.folder)


def read_outliers_file(path, within=None):
    """[(cpu, start_ns, length_ns)] of the outlier log at @path (inside the folder
    @within, when a result named it)."""
    text = decode_text(read_bytes(path, WHAT, MAX_BYTES, within, "the gap probe writes "
                                  "outliers.csv into its results folder"), path, WHAT, "ascii")
    head, _, body = text.partition("\n")
    if head.rstrip("\r") != HEADER:
        raise UsageError("%s:1: not the header %r: not a jtr outlier log" % (path, HEADER))
    body = body.replace("\r\n", "\n")
    if body and not body.endswith("\n"):
        body += "\n"
    with paused_gc():
        if _BODY.fullmatch(body):       # the fast path: the whole log is well formed
            nums = list(map(int, _NUMBER.findall(body)))
            if max(nums[1::3] + nums[2::3], default=0) <= MAX_NS and \
                    max(nums[0::3], default=0) <= MAX_CPU:
                return list(zip(nums[0::3], nums[1::3], nums[2::3]))
        return _parse_slowly(path, body)


def by_cpu(outliers):
    """{cpu: ([start_ns], [length_ns])} of outliers, in log order."""
    out = {}
    for cpu, start, length in outliers:
        s = out.setdefault(cpu, ([], []))
        s[0].append(start)
        s[1].append(length)
    return out


def _parse_slowly(path, body):
    """Parse line by line, to name the first bad line."""
    out = []
    for n, line in enumerate(body.split("\n"), 2):
        if not line:
            continue
        m = _LINE.fullmatch(line)
        if not m or int(m.group(1)) > MAX_CPU or int(m.group(2)) > MAX_NS or \
                int(m.group(3)) > MAX_NS:
            raise UsageError("%s:%d: expected cpu,start_ns,length_ns: three whole numbers "
                             "(CPU 0 to %d, times 0 to 2^64-1); the log is damaged"
                             % (path, n, MAX_CPU))
        out.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    return out
