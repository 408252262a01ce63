# SPDX-License-Identifier: GPL-2.0-only
"""outliers - an outlier log (outliers.csv), the one format in which every
latency-measuring program (gap, null, send per sample; ping per round trip,
pong per reflection, sub per message) and any application records its
outliers, read for attribution and the timeline.

The log is ASCII: a header, then one line per outlier. The header starts with
cpu,start_ns,length_ns (CPU 0 to 65535; CLOCK_MONOTONIC start and length in ns,
whole numbers 0 to 2^64-1); optional columns may follow, each named once, in
any order:
  kind       one lower-case word: what was measured (rtt, reflect, latency, ...)
  seq        the message's sequence number (a whole number)
  stream     the stream it came on (a whole number: jtr sub --streams)
  label      free text of an application's own (at most 200 printable
             characters, no comma or double quote)
  NAME_ns    a CLOCK_MONOTONIC time inside the outlier (0: not known), e.g.
             ping's send_ns, sent_ns, peer_rx_ns, peer_tx_ns
A result's log is read only from inside its result's folder; every log as a
regular file of at most MAX_BYTES; an error names the line, never its
content."""
import re

from ..errors import UsageError
from ..system.files import decode_text, read_bytes
from ..system.memory import paused_gc
from ..system.numeric import numpy_or_none

HEADER = "cpu,start_ns,length_ns"
MAX_BYTES = 1 << 30             # 1 GiB: ~30 million outliers
MAX_CPU = 65535
MAX_NS = (1 << 64) - 1
WHAT = "outlier log"
_BODY = re.compile(r"(?:[0-9]{1,5},[0-9]{1,20},[0-9]{1,20}\n|\n)*")
_NUMBER = re.compile(r"[0-9]+")
_LINE = re.compile(r"([0-9]{1,5}),([0-9]{1,20}),([0-9]{1,20})")
_STAMP = re.compile(r"[a-z][a-z0-9_]{0,30}_ns")
_KIND = re.compile(r"[a-z][a-z0-9_]{0,31}")
_LABEL = re.compile(r"[^,\"\x00-\x1f\x7f]{0,200}")


class OutlierLog:
    """An outlier log: rows [(cpu, start_ns, length_ns)] and the optional columns
    by name ({name: [value per row]}: str for kind and label, int otherwise).
    A three-column log read with numpy keeps them as an (n, 3) uint64 array
    (array; rows made from it when asked for)."""

    def __init__(self, rows=None, columns=None, array=None):
        self._rows = rows
        self.array = array
        self.columns = columns or {}

    @property
    def rows(self):
        """[(cpu, start_ns, length_ns)] in log order."""
        if self._rows is None:
            self._rows = list(map(tuple, self.array.tolist()))
        return self._rows

    def outliers(self):
        """The array where there is one, else the rows: what attribute() takes."""
        return self.array if self.array is not None else self.rows

    def column(self, name):
        """The values of an optional column, None when the log has none."""
        return self.columns.get(name)


def read_outliers(result):
    """[(cpu, start_ns, length_ns)] of a Result's outlier log; UsageError when it is
    missing, outside the result's folder or names a bad line."""
    return read_outlier_log(result).rows


def read_outlier_log(result):
    """The OutlierLog of a Result (see read_outliers)."""
    return read_outliers_file(result.file("outliers"), within=result.folder, table=True)


def read_outliers_file(path, within=None, table=False, hint=None):
    """[(cpu, start_ns, length_ns)] of the outlier log at @path (inside the folder
    @within, when a result named it), or with @table its OutlierLog."""
    text = decode_text(read_bytes(path, WHAT, MAX_BYTES, within, hint or "the probes write "
                                  "outliers.csv into their results folder"), path, WHAT, "ascii")
    head, _, body = text.partition("\n")
    head = head.rstrip("\r")
    body = body.replace("\r\n", "\n")
    if body and not body.endswith("\n"):
        body += "\n"
    if head != HEADER:
        log = _read_columns(path, head, body)
        return log if table else log.rows
    rows = _read_triples(path, body, table)
    if isinstance(rows, OutlierLog):
        return rows
    return OutlierLog(rows) if table else rows


def _read_triples(path, body, table=False):
    """The rows of a three-column log (with @table and numpy: an OutlierLog of
    its array)."""
    np = numpy_or_none() if table else None
    with paused_gc():
        if _BODY.fullmatch(body):       # the fast path: the whole log is well formed
            if np is not None and "\n\n" not in body and not body.startswith("\n"):
                nums = np.fromstring(body.replace("\n", ","), dtype=np.uint64, sep=",")
                # a 20-digit number past 2^64 - 1 reads as 2^64 - 1: the exact path's
                if len(nums) == 3 * body.count("\n") and (not len(nums) or (
                        nums.max() < MAX_NS and nums[0::3].max() <= MAX_CPU)):
                    return OutlierLog(array=nums.reshape(-1, 3))
            nums = list(map(int, _NUMBER.findall(body)))
            if max(nums[1::3] + nums[2::3], default=0) <= MAX_NS and \
                    max(nums[0::3], default=0) <= MAX_CPU:
                return list(zip(nums[0::3], nums[1::3], nums[2::3]))
        return _parse_slowly(path, body)


def _columns(path, head):
    """The optional columns' names of a header; UsageError for a bad one."""
    names = head.split(",")
    if names[:3] != HEADER.split(","):
        raise UsageError("%s:1: not the header %r (optional columns may follow it): not a "
                         "jtr outlier log" % (path, HEADER))
    extra = names[3:]
    for n in extra:
        if n not in ("kind", "seq", "stream", "label") and not _STAMP.fullmatch(n):
            raise UsageError("%s:1: column %r: the optional columns are kind, seq, stream, "
                             "label and NAME_ns (a time); see docs/attribution.md"
                             % (path, n[:40]))
    if len(set(extra)) != len(extra):
        raise UsageError("%s:1: a column is named twice" % path)
    return extra


def _read_columns(path, head, body):
    """An OutlierLog with optional columns, checked line by line."""
    extra = _columns(path, head)
    width = 3 + len(extra)
    rows, cols = [], {n: [] for n in extra}
    ints = [(i + 3, cols[n]) for i, n in enumerate(extra) if n != "kind" and n != "label"]
    texts = [(i + 3, cols[n], _KIND if n == "kind" else _LABEL)
             for i, n in enumerate(extra) if n in ("kind", "label")]
    with paused_gc():
        for n, line in enumerate(body.split("\n"), 2):
            if not line:
                continue
            f = line.split(",")
            if len(f) != width or not _LINE.fullmatch(",".join(f[:3])) or \
                    any(not _NUMBER.fullmatch(f[i]) or len(f[i]) > 20 for i, _ in ints) or \
                    any(not rx.fullmatch(f[i]) for i, _, rx in texts):
                raise UsageError("%s:%d: expected %s: whole numbers (CPU 0 to %d, times 0 to "
                                 "2^64-1), kind a lower-case word, label printable text "
                                 "without commas; the log is damaged" % (path, n, head, MAX_CPU))
            cpu, start, length = int(f[0]), int(f[1]), int(f[2])
            if cpu > MAX_CPU or start > MAX_NS or length > MAX_NS:
                raise UsageError("%s:%d: CPU above %d or a time above 2^64-1"
                                 % (path, n, MAX_CPU))
            rows.append((cpu, start, length))
            for i, col in ints:
                col.append(int(f[i]))
            for i, col, _ in texts:
                col.append(f[i])
    return OutlierLog(rows, cols)


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
