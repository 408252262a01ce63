# SPDX-License-Identifier: GPL-2.0-only
"""hdrlog - jtr histograms as HdrHistogram interval logs (.hlog).

An HdrHistogram with lowest discernible value 1 and D significant digits cuts
[0, 2^(m+1)) into steps of 1 and every later power of two into 2^m steps, with
m = ceil(log2(2 * 10^D)) - 1: D = 1, 2, 3, 4 give m = 4, 7, 10, 14. That is
jtr's log-linear grid with sub_bucket_bits = m (hist.py), bucket for bucket and
index for index; jtr's default 7 bits is HdrHistogram's 2 significant digits.
A jtr histogram of other precision goes onto the finest of those grids that is
at least as fine as its own (5 and 6 bits: 2 digits).

Each jtr bucket's count is recorded at the value jtr's percentile rule gives it:
the bucket's highest value, clamped to the run's [min_ns, max_ns]. So the
recorded maximum is the run's exact max_ns, and HdrHistogram's percentile (the
highest value equivalent to the bucket it lands in) is jtr's percentile, or
above it by less than one bucket where the grids differ.

The encoding is HdrHistogram's V2 compressed form: an 8-byte header (cookie
0x1c849314, length) and a zlib stream of the 40-byte V2 payload header (cookie
0x1c849313, payload length, normalizing offset 0, significant digits, lowest 1,
highest trackable, conversion ratio 1.0) followed by the counts as ZigZag LEB128
varints, a run of zeros written as its negated length; base64 on the line.
"""
import base64
import datetime
import math
import struct
import zlib

from ..errors import UsageError
from ..results import hist
from ..results.quantity import tagged
from ..system.schema import utc_time

ENCODING_COOKIE = 0x1c849303 | 0x10
COMPRESSION_COOKIE = 0x1c849304 | 0x10
LOG_FORMAT_VERSION = "1.3"
LEGEND = '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"'
MAX_VALUE_UNIT_RATIO = 1e6  # Interval_Max in ms for ns values, as HdrHistogram's log writer


def half_count_magnitude(digits):
    """m for @digits significant digits: sub-bucket half count 2^m."""
    return int(math.ceil(math.log2(2 * 10 ** digits))) - 1


def digits_for_bits(bits):
    """The fewest significant digits whose grid is at least as fine as @bits."""
    for d in range(1, 6):
        if half_count_magnitude(d) >= bits:
            return d
    raise ValueError("sub_bucket_bits %d is finer than HdrHistogram's 5 digits" % bits)


def _zigzag_leb128(v):
    """HdrHistogram's ZigZag LEB128 of a signed 64-bit value (at most 9 bytes,
    the ninth carrying 8 bits)."""
    z = ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    for _ in range(8):
        if z < 0x80:
            out.append(z)
            return bytes(out)
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z & 0xFF)
    return bytes(out)


def recorded_values(run):
    """[(value, count)] ascending: each bucket's count at its highest value clamped
    to [min_ns, max_ns] (jtr's percentile rule), equal values added."""
    out = {}
    lo_ns, hi_ns = run.get("min_ns"), run.get("max_ns")
    for _, hi, count in run["histogram"]["buckets"]:
        v = hi
        if lo_ns is not None:
            v = max(v, lo_ns)
        if hi_ns is not None:
            v = min(v, hi_ns)
        out[v] = out.get(v, 0) + count
    return sorted(out.items())


def encode(values, digits):
    """The base64 V2 compressed encoding of [(value, count)] ascending."""
    m = half_count_magnitude(digits)
    counts = {}
    for v, c in values:
        i = hist.bucket_index(m, v)  # HdrHistogram's counts index, see above
        counts[i] = counts.get(i, 0) + c
    body = bytearray()
    last = -1
    for i in sorted(counts):
        gap = i - last - 1
        if gap == 1:
            body += _zigzag_leb128(0)
        elif gap > 1:
            body += _zigzag_leb128(-gap)
        body += _zigzag_leb128(counts[i])
        last = i
    highest = max([2] + [v for v, _ in values])
    header = struct.pack(">iiiiqqd", ENCODING_COOKIE, len(body), 0, digits, 1, highest, 1.0)
    z = zlib.compress(header + bytes(body))
    return base64.b64encode(struct.pack(">ii", COMPRESSION_COOKIE, len(z)) + z).decode("ascii")


def run_interval(result, run):
    """(start in seconds since the epoch, length in seconds) of @run: its
    CLOCK_MONOTONIC start placed on the result's wall-clock start (started_at,
    which check_exportable requires)."""
    t0 = utc_time(result["started_at"]).timestamp()
    start = t0
    if run.get("start_mono_ns") is not None and result.get("started_mono_ns"):
        start = t0 + (run["start_mono_ns"] - result["started_mono_ns"]) / 1e9
    length = run.get("duration_ns")
    if length is None:
        length = max((result.get("ended_mono_ns") or 0) -
                     (result.get("started_mono_ns") or 0), 0)
    return start, length / 1e9


def tag(name):
    """A run name as an interval tag: no commas or blanks."""
    return "".join(ch if ch.isalnum() or ch in "-_.:/" else "_" for ch in str(name)) or "run"


def check_exportable(results, labels):
    """UsageError unless every run of @results has a histogram of a precision an
    HdrHistogram log can carry."""
    for r, label in zip(results, labels):
        runs = r.get("runs")
        if not runs or not all(isinstance(x, dict) and isinstance(x.get("histogram"), dict)
                               for x in runs):
            raise UsageError("%s: the result has no runs with histograms; export results "
                             "of jtr gap, jtr null or jtr clock" % label)
        if utc_time(r.get("started_at")) is None:
            raise UsageError("%s: the result has no started_at: an HdrHistogram log needs "
                             "its start time" % label)
        for i, x in enumerate(runs):
            try:
                digits_for_bits(x["histogram"].get("sub_bucket_bits", 7))
            except ValueError as e:
                raise UsageError("%s: %s" % (label, e))
            start, length = run_interval(r, x)
            if not 0 <= start <= MAX_SECONDS or length > MAX_SECONDS:
                raise UsageError("%s: runs[%d].start_mono_ns: places the run outside the "
                                 "years 1970 to 2286 (started_mono_ns and started_at "
                                 "disagree); the result is damaged" % (label, i))


def hlog_text(results, labels):
    """The .hlog of loaded @results (labels for the comments): one tagged interval
    line per run, in time order."""
    lines, intervals = [], []
    for result, _ in zip(results, labels):
        for run in result.get("runs", []):
            h = run.get("histogram") or {}
            bits = h.get("sub_bucket_bits", 7)
            start, length = run_interval(result, run)
            values = recorded_values(run)
            intervals.append((start, length, tag(run.get("name")), digits_for_bits(bits),
                              values, run.get("max_ns", values[-1][0] if values else 0)))
    if not intervals:
        return None
    base = min(i[0] for i in intervals)
    when = datetime.datetime.fromtimestamp(base, datetime.timezone.utc)
    lines.append("#[Written by jtr from %s]" % ", ".join(labels))
    lines.append("#[Values in ns; each jtr bucket's count at its highest value, clamped "
                 "to the run's min and max]")
    lines.append("#[Quantity of each tag: %s]" % ", ".join(
        "%s=%s" % (tag(name), q) for result in results for name, q in tagged(result)))
    lines.append("#[Histogram log format version %s]" % LOG_FORMAT_VERSION)
    lines.append("#[StartTime: %.3f (seconds since epoch), %s]"
                 % (base, when.strftime("%a %b %d %H:%M:%S UTC %Y")))
    lines.append("#[BaseTime: %.3f (seconds since epoch)]" % base)
    lines.append(LEGEND)
    for start, length, t, digits, values, max_ns in sorted(intervals, key=lambda i: i[:3]):
        lines.append("Tag=%s,%.3f,%.3f,%.3f,%s" % (t, start - base, length,
                                                   max_ns / MAX_VALUE_UNIT_RATIO,
                                                   encode(values, digits)))
    return "\n".join(lines) + "\n"


# --- reading ---------------------------------------------------------------

V2_ENCODING_COOKIE = 0x1c849303 | 0x10
V2_COMPRESSION_COOKIE = 0x1c849304 | 0x10
V2_HEADER = struct.Struct(">iiiiqqd")


MAX_PAYLOAD = 16 << 20     # one inflated histogram (a 5-digit one needs under 1 MiB)
MAX_COUNT = 1 << 53         # jtr's limit of a count (results/fields.py)
MAX_TAG = 256               # a tag becomes a run's name
MAX_SECONDS = 1e10          # times in a log: seconds, up to the year 2286


class LogError(ValueError):
    """What is wrong with a log, for a one-line message."""


def _read_leb128(data, pos):
    """(ZigZag LEB128 value, next position) at @pos of @data."""
    z, shift = 0, 0
    for k in range(9):
        if pos >= len(data):
            raise LogError("a count runs past the end of the histogram")
        b = data[pos]
        pos += 1
        if k == 8:
            z |= b << 56
            break
        z |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            break
    v = (z >> 1) ^ -(z & 1)
    return v, pos


def decode(text):
    """(buckets [[lo, hi, count], ...] ascending in the histogram's own units,
    significant digits) of one base64 V2 compressed histogram."""
    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (ValueError, TypeError):
        raise LogError("not base64")
    if len(raw) < 8:
        raise LogError("too short for a histogram")
    cookie, length = struct.unpack(">ii", raw[:8])
    if cookie & ~0xf0 in (0x1c849302, 0x1c849309):  # V1, V0 compressed
        raise LogError("an HdrHistogram of an older encoding (cookie 0x%08x); jtr reads V2, "
                       "which HdrHistogram has written since 2.1.7" % (cookie & 0xffffffff))
    if cookie != V2_COMPRESSION_COOKIE:
        raise LogError("cookie 0x%08x is not a compressed HdrHistogram" % (cookie & 0xffffffff))
    try:
        inflate = zlib.decompressobj()
        payload = inflate.decompress(raw[8:8 + max(length, 0)], MAX_PAYLOAD + 1)
    except zlib.error as e:
        raise LogError("the compressed histogram does not inflate (%s)" % e)
    if len(payload) > MAX_PAYLOAD:
        raise LogError("the histogram inflates to more than %d MiB" % (MAX_PAYLOAD >> 20))
    if len(payload) < V2_HEADER.size:
        raise LogError("the histogram's header is cut short")
    pcookie, plen, offset, digits, lowest, highest, _ = V2_HEADER.unpack_from(payload)
    if pcookie != V2_ENCODING_COOKIE:
        raise LogError("payload cookie 0x%08x is not HdrHistogram's V2"
                       % (pcookie & 0xffffffff))
    if offset != 0:
        raise LogError("a normalizing index offset (%d) is not supported" % offset)
    if not 0 <= digits <= 5 or lowest < 1:
        raise LogError("significant digits %d, lowest value %d are out of range"
                       % (digits, lowest))
    m = half_count_magnitude(digits)
    unit = int(math.floor(math.log2(lowest)))
    # the last index whose values (shifted by the unit) stay below 2^63
    last = hist.bucket_index(m, ((1 << 63) - 1) >> unit)
    body = payload[V2_HEADER.size:V2_HEADER.size + max(plen, 0)]
    buckets, pos, idx, total = [], 0, 0, 0
    while pos < len(body):
        v, pos = _read_leb128(body, pos)
        if v < 0:
            idx += -v
            continue
        if v:
            if idx > last:
                raise LogError("a count at values beyond 2^63 (jtr's times end there)")
            total += v
            if total > MAX_COUNT:
                raise LogError("its counts add up to more than 2^53")
            lo, hi = hist.bucket_lo_hi(m, idx)
            buckets.append([lo << unit, ((hi + 1) << unit) - 1, v])
        idx += 1
    return buckets, digits


def _seconds(line, key):
    """The number after '#[KEY: ' in a header line, or None."""
    prefix = "#[%s: " % key
    if not line.startswith(prefix):
        return None
    try:
        v = float(line[len(prefix):].split()[0].rstrip("]"))
    except (ValueError, IndexError):
        return None
    return v if 0 <= v <= MAX_SECONDS else None


def read_log(text):
    """The intervals of an interval log: (start_time, [{"tag", "start", "length",
    "max", "buckets", "digits"}]) with start in seconds since the epoch where the
    log says when it started (else from its own zero); LogError naming the line."""
    start_time = base_time = None
    raw = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("#"):
            s = _seconds(line, "StartTime")
            if s is not None:
                start_time = s
            b = _seconds(line, "BaseTime")
            if b is not None:
                base_time = b
            continue
        if line.startswith('"StartTimestamp"') or line.startswith("StartTimestamp"):
            continue
        fields = line.split(",")
        tag = None
        if fields[0].startswith("Tag="):
            tag = fields.pop(0)[len("Tag="):]
            if len(tag) > MAX_TAG:
                raise LogError("line %d: a tag of %d characters (at most %d: it names a run)"
                               % (n, len(tag), MAX_TAG))
        if len(fields) != 4:
            raise LogError("line %d is not 'StartTimestamp,Interval_Length,Interval_Max,"
                           "Histogram'" % n)
        try:
            t0, length, vmax = float(fields[0]), float(fields[1]), float(fields[2])
        except ValueError:
            raise LogError("line %d: the times are not numbers" % n)
        if not all(0 <= v <= MAX_SECONDS for v in (t0, length)) or not math.isfinite(vmax):
            raise LogError("line %d: the times are not finite numbers from 0 to %g s"
                           % (n, MAX_SECONDS))
        try:
            buckets, digits = decode(fields[3])
        except LogError as e:
            raise LogError("line %d: %s" % (n, e))
        raw.append({"tag": tag, "start": t0, "length": length, "max": vmax,
                    "buckets": buckets, "digits": digits})
    if not raw:
        raise LogError("no interval lines")
    # as HdrHistogram's reader: timestamps are relative to BaseTime, else to
    # StartTime, unless they are absolute themselves (after 2000-01-01)
    absolute = raw[0]["start"] > 946684800
    base = base_time if base_time is not None else (
        0.0 if absolute or start_time is None else start_time)
    for r in raw:
        r["start"] += base
    return (start_time if start_time is not None else min(r["start"] for r in raw)), raw
