# SPDX-License-Identifier: GPL-2.0-only
"""values - the one grammar of option values, the same as lib/jtr_cli.c's.

docs/values.md is the user's page; tests/vectors/values.txt holds the cases
both sides must answer alike (analysis/tests/test_values.py runs them through
this module and through the C parsers).

  duration    NUMBER[UNIT], UNIT ns, us, ms, s, m or h; a fraction is exact
              to the ns, a part of a ns dropped (1.5ms); a bare number is in
              seconds
  count       a whole decimal number with an optional K, M or G (x 1000): 2M
  size        whole decimal bytes with an optional K, M or G (x 1024): 64K
  percent     NUMBER[%]; a bare number is a percentage (5 = 5 %)
  cpulist     1, 0-3 or 1,3-5
  int         decimal or 0x-hex, with an optional sign

Each parser takes the whole string or nothing and raises UsageError with a
message that quotes the value and shows the accepted form; the option layer
(cli/parser.py) puts the option's name in front.
"""
import re

from .errors import UsageError

U64_MAX = (1 << 64) - 1
NS_PER_S = 1_000_000_000
CPU_SETSIZE = 1024              # glibc's cpu_set_t: CPUs 0-1023

UNITS_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": NS_PER_S, "m": 60 * NS_PER_S,
            "h": 3600 * NS_PER_S}
UNIT_WORDS = {1: "ns", 1_000: "us", 1_000_000: "ms", NS_PER_S: "s", 60 * NS_PER_S: "m",
              3600 * NS_PER_S: "h"}
SCALE = {"k": 1, "m": 2, "g": 3}

DURATION_FORM = ("expected a number with an optional unit ns, us, ms, s, m or h, such as "
                 "10us, 500ms or 2m")
COUNT_FORM = ("expected a whole number with an optional K, M or G suffix, such as 2000000, 2M "
              "or 500K")
SIZE_FORM = "expected bytes with an optional K, M or G (x1024), e.g. 4096, 64K, 8M"
PERCENT_FORM = ("expected a number with an optional %, such as 1, 0.5 or 2.5% (a bare number "
                "is a percentage)")
CPU_FORM = "expected CPU numbers and ranges such as 1, 0-3 or 1,3-5"
INT_FORM = "expected a decimal or 0x-hex integer such as 5, -1 or 0x1f"

_DURATION = re.compile(r"(\d+)(?:\.(\d+))?([a-z]*)", re.ASCII)
_SCALED = re.compile(r"(\d+)([kKmMgG]?)", re.ASCII)
_PERCENT = re.compile(r"\d+(?:\.\d+)?%?", re.ASCII)
_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|\d+)", re.ASCII)
_CPU_ITEM = re.compile(r"(\d+)(?:-(\d+))?", re.ASCII)


def _range_error(text, lo, hi, unit=""):
    return UsageError("'%s' is out of range; expected %s%s..%s%s" % (text, lo, unit, hi, unit))


def parse_duration_ns(text, lo=0, hi=U64_MAX, bare_unit_ns=NS_PER_S):
    """A duration in ns; a bare number is in @bare_unit_ns (seconds but for the
    options that keep an older unit, see cli/parser.py's Duration)."""
    m = _DURATION.fullmatch(text or "")
    if not m or (m.group(3) and m.group(3) not in UNITS_NS):
        bare = ("is in seconds" if bare_unit_ns == NS_PER_S
                else "here is in " + UNIT_WORDS[bare_unit_ns])  # an option's older unit
        raise UsageError("'%s' is not a duration; %s (a bare number %s)"
                         % (text, DURATION_FORM, bare))
    unit = UNITS_NS[m.group(3)] if m.group(3) else bare_unit_ns
    frac = m.group(2) or ""
    ns = int(m.group(1)) * unit + (int(frac) * unit // 10 ** len(frac) if frac else 0)
    if not lo <= ns <= hi or ns > U64_MAX:
        raise UsageError("'%s' is out of range; expected %s to %s"
                         % (text, format_duration(lo), format_duration(hi)))
    return ns


def _scaled(text, base, lo, hi, what, form):
    m = _SCALED.fullmatch(text or "")
    if not m:
        raise UsageError("'%s' is not a %s; %s" % (text, what, form))
    v = int(m.group(1)) * base ** SCALE.get(m.group(2).lower(), 0)
    if not lo <= v <= hi or v > U64_MAX:
        raise _range_error(text, lo, hi)
    return v


def parse_count(text, lo=0, hi=U64_MAX):
    """A count; K, M and G are powers of 1000."""
    return _scaled(text, 1000, lo, hi, "count", COUNT_FORM)


def parse_size(text, lo=0, hi=U64_MAX):
    """A size in bytes; K, M and G are powers of 1024."""
    return _scaled(text, 1024, lo, hi, "size", SIZE_FORM)


def parse_percent(text, lo=0.0, hi=float("inf")):
    """A percentage: 5, 0.5 or 5% (a bare number is a percentage)."""
    if not _PERCENT.fullmatch(text or ""):
        raise UsageError("'%s' is not a percentage; %s" % (text, PERCENT_FORM))
    v = float(text.rstrip("%"))
    if not lo <= v <= hi:
        raise UsageError("'%s' is out of range; expected %g-%g (a percentage)" % (text, lo, hi))
    return v


def parse_int(text, lo=-(1 << 63), hi=(1 << 63) - 1):
    """A decimal or 0x-hex integer with an optional sign."""
    if not _INT.fullmatch(text or ""):
        raise UsageError("'%s' is not an integer; %s" % (text, INT_FORM))
    v = int(text, 0) if "x" in text.lower() else int(text)
    if not lo <= v <= hi:
        raise _range_error(text, lo, hi)
    return v


def parse_cpulist(text):
    """'1,3-5' -> [1, 3, 4, 5] (sorted, each CPU once)."""
    cpus = set()
    for part in (text or "").split(","):
        m = _CPU_ITEM.fullmatch(part)
        if not m:
            raise UsageError("'%s' is not a CPU list; %s" % (text, CPU_FORM))
        a = int(m.group(1))
        b = int(m.group(2)) if m.group(2) is not None else a
        if b < a:
            raise UsageError("'%s' is not a CPU list: range %d-%d ends before it starts; %s"
                             % (text, a, b, CPU_FORM))
        if b >= CPU_SETSIZE:
            raise UsageError("'%s' names CPU %d; this build handles CPUs 0-%d"
                             % (text, b, CPU_SETSIZE - 1))
        cpus.update(range(a, b + 1))
    return sorted(cpus)


def format_cpulist(cpus):
    """[0, 1, 2, 5] -> '0-2,5' (the inverse of parse_cpulist)."""
    out, cpus = [], sorted(set(cpus))
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def format_duration(ns):
    """A duration as an option value both sides read back exactly, in the largest
    unit that holds it whole: 2h, 10s, 500ms, 1500us, 0 (as lib/jtr_cli.c's
    jtr_format_duration)."""
    if ns == 0:
        return "0"
    for unit in sorted(UNIT_WORDS, reverse=True):
        if ns % unit == 0:
            return "%d%s" % (ns // unit, UNIT_WORDS[unit])
    return "%dns" % ns


def format_count(n):
    """A count as an option value both sides read back exactly: 2M, 500K, 1234."""
    for suffix, scale in (("G", 10 ** 9), ("M", 10 ** 6), ("K", 10 ** 3)):
        if n and n % scale == 0:
            return "%d%s" % (n // scale, suffix)
    return str(n)
