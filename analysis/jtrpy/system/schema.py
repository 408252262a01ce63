# SPDX-License-Identifier: GPL-2.0-only
"""schema - a small, explicit check of the fields a reader uses in a JSON
document jtr reads (result.json, trace.json, suite.json, oslat and cyclictest
files), so the code after it can rely on their types.

A spec says what each field must be: Int(lo, hi), Num (finite), Str, Bool,
Time, Opt(spec) (null allowed), List(spec), Tuple(specs), Obj({key: spec},
values=spec for the other keys, required=keys). A field that is absent is
left alone unless it is required; a field the spec does not name is not
looked at. check() raises UsageError, one line naming the file, the field
and what was expected:

  results/x/result.json: runs[2].histogram.buckets: expected a list of
  [lo_ns, hi_ns, count] buckets, got a string

Values are described, never quoted at length: a string as "a string (of N
characters)", a number as itself when short.
"""
import datetime
import math

from ..errors import UsageError

I64_MAX = (1 << 63) - 1
U64_MAX = (1 << 64) - 1
COUNT_MAX = 1 << 53         # ~9e15: 2.8 years of 10 ns loops; exact in a double


def describe(v):
    """A value as an error names it, without quoting text."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        s = str(v)
        return s if len(s) <= 24 else "an integer of %d digits" % len(s.lstrip("-"))
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(v) if len(repr(v)) <= 24 else "%.6g" % v
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list of %d" % len(v) if v else "an empty list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


class Mismatch(Exception):
    """A field that is not what its spec says: (where, expected, got)."""


class Spec:
    """What a field must be; check(v, at) raises Mismatch."""
    what = "a value"

    def check(self, v, at):
        raise NotImplementedError

    def fail(self, v, at, got=None):
        raise Mismatch(at, self.what, got or describe(v))


class Any(Spec):
    def check(self, v, at):
        pass


class Int(Spec):
    """A JSON integer (not true/false) in [lo, hi]."""

    def __init__(self, lo=0, hi=I64_MAX, what=None):
        self.lo, self.hi = lo, hi
        self.what = what or "a whole number from %s to %s" % (_bound(lo), _bound(hi))

    def check(self, v, at):
        if not isinstance(v, int) or isinstance(v, bool) or not self.lo <= v <= self.hi:
            self.fail(v, at)


class Num(Spec):
    """A finite JSON number in [lo, hi]."""

    def __init__(self, lo=None, hi=None, what=None):
        self.lo, self.hi = lo, hi
        self.what = what or ("a finite number" if lo is None and hi is None else
                             "a number from %s to %s" % (_bound(lo), _bound(hi)))

    def check(self, v, at):
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            self.fail(v, at)
        if isinstance(v, float) and not math.isfinite(v):
            self.fail(v, at)
        if (self.lo is not None and v < self.lo) or (self.hi is not None and v > self.hi):
            self.fail(v, at)


class Str(Spec):
    """A string of at most max_len characters."""

    def __init__(self, max_len=4096, what=None):
        self.max_len = max_len
        self.what = what or "a string of at most %d characters" % max_len

    def check(self, v, at):
        if not isinstance(v, str):
            self.fail(v, at)
        if len(v) > self.max_len:
            self.fail(v, at, "a string of %d characters" % len(v))


class Bool(Spec):
    what = "true or false"

    def check(self, v, at):
        if not isinstance(v, bool):
            self.fail(v, at)


class Time(Spec):
    """A UTC time as results write it: 2026-11-23T17:34:11.120Z."""
    what = "a UTC time like 2026-11-23T17:34:11.120Z"

    def check(self, v, at):
        if not isinstance(v, str) or len(v) > 40 or utc_time(v) is None:
            self.fail(v, at)


def utc_time(iso):
    """A result's ISO 8601 UTC time as an aware datetime, or None."""
    if not isinstance(iso, str):
        return None
    for fmt in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return datetime.datetime.strptime(iso, fmt).replace(tzinfo=datetime.timezone.utc)
        except ValueError:
            pass
    return None


class Opt(Spec):
    """@spec, or null."""

    def __init__(self, spec):
        self.spec = spec
        self.what = spec.what + " or null"

    def check(self, v, at):
        if v is not None:
            try:
                self.spec.check(v, at)
            except Mismatch as m:
                if m.args[0] == at:     # the value itself, not one inside it
                    self.fail(v, at, m.args[2])
                raise


class List(Spec):
    """A list whose items are @item; @valid(list) returns why it is wrong, or None."""

    def __init__(self, item, what=None, max_len=None, valid=None):
        self.item, self.max_len, self.valid = item, max_len, valid
        self.what = what or "a list"

    def check(self, v, at):
        if not isinstance(v, list):
            self.fail(v, at)
        if self.max_len is not None and len(v) > self.max_len:
            self.fail(v, at, "a list of %d" % len(v))
        for i, x in enumerate(v):
            self.item.check(x, "%s[%d]" % (at, i))
        why = self.valid(v) if self.valid else None
        if why:
            raise Mismatch(at + why[0], why[1], why[2])


class Tuple(Spec):
    """A list of exactly these items."""

    def __init__(self, *items, what=None):
        self.items = items
        self.what = what or "a list of %d" % len(items)

    def check(self, v, at):
        if not isinstance(v, list) or len(v) != len(self.items):
            self.fail(v, at)
        for i, (x, spec) in enumerate(zip(v, self.items)):
            try:
                spec.check(x, "%s[%d]" % (at, i))
            except Mismatch:
                self.fail(v, at, "[%s]" % ", ".join(describe(y) for y in v))


class Obj(Spec):
    """An object: @fields {key: spec}, @values the spec of every other key (None:
    not looked at), @required the keys that must be there."""

    def __init__(self, fields=None, values=None, required=(), what=None):
        self.fields, self.values, self.required = fields or {}, values, required
        self.what = what or "an object"

    def check(self, v, at):
        if not isinstance(v, dict):
            self.fail(v, at)
        for k in self.required:
            if k not in v:
                raise Mismatch(_join(at, k), self.fields[k].what, "nothing (missing)")
        for k, x in v.items():
            spec = self.fields.get(k, self.values)
            if spec is not None:
                spec.check(x, _join(at, k))


def _join(at, key):
    return "%s.%s" % (at, key) if at else key


def _bound(n):
    for name, v in (("2^63-1", I64_MAX), ("2^64-1", U64_MAX), ("2^53", COUNT_MAX)):
        if n == v:
            return name
    return str(n)


def check(doc, spec, path):
    """UsageError unless @doc (read from @path) is what @spec says."""
    try:
        spec.check(doc, "")
    except Mismatch as m:
        at, expected, got = m.args
        raise UsageError("%s: %s%sexpected %s, got %s" % (path, at, ": " if at else "",
                                                          expected, got))


# the values every jtr document shares
NS = Int(0, I64_MAX, "a time in ns (a whole number from 0 to 2^63-1)")
COUNT = Int(0, COUNT_MAX, "a count (a whole number from 0 to 2^53)")
CPU = Int(0, 65535, "a CPU number (0 to 65535)")
NAME = Str(256)
TEXT = Str(1 << 16)
