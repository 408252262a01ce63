# SPDX-License-Identifier: GPL-2.0-only
"""values: the one grammar of option values (docs/values.md). The cases both
sides must answer alike are in tests/vectors/values.txt (test_value_vectors); the
refusals' words are compared with the C parsers' (build/tests/jtr-values)."""
import os
import subprocess

import pytest

from jtrpy import values as V
from jtrpy.errors import UsageError

S = V.NS_PER_S


@pytest.mark.parametrize("text, ns", [
    ("10", 10 * S), ("10s", 10 * S), ("0.5", S // 2), ("500ms", S // 2), ("2m", 120 * S),
    ("1h", 3600 * S), ("898ns", 898), ("10us", 10_000), ("1.5ms", 1_500_000), ("0", 0),
    ("0.000000001s", 1), ("0.0000000009s", 0), ("1.0000000000009h", 3600 * S + 3),
    ("0.333333333333333333333333333333m", 19_999_999_999),
])
def test_durations(text, ns):
    assert V.parse_duration_ns(text) == ns


@pytest.mark.parametrize("text", ["", "s", "1e3", "-1s", "+1s", "1.", ".5", "10 s", "5x",
                                  "inf", "nan", "1S", "1sec", "1µs", " 1"])
def test_not_durations(text):
    with pytest.raises(UsageError, match="is not a duration; expected a number with an "
                                         "optional unit"):
        V.parse_duration_ns(text)


def test_duration_ranges_read_as_durations():
    with pytest.raises(UsageError, match=r"^'1ms' is out of range; expected 100ms to 1h$"):
        V.parse_duration_ns("1ms", 10 ** 8, 3600 * S)
    with pytest.raises(UsageError, match="out of range"):
        V.parse_duration_ns("99999999999h")
    assert V.parse_duration_ns("898", bare_unit_ns=1) == 898        # an option's older unit


@pytest.mark.parametrize("text, n", [("2000000", 2 * 10 ** 6), ("2M", 2 * 10 ** 6),
                                     ("500k", 500_000), ("1G", 10 ** 9), ("007", 7),
                                     ("0", 0)])
def test_counts(text, n):
    assert V.parse_count(text) == n


@pytest.mark.parametrize("text", ["", "-5", "1.5M", "2MB", "x", "1e6", "0x", "0x10"])
def test_not_counts(text):
    with pytest.raises(UsageError, match="is not a count"):
        V.parse_count(text)


def test_sizes_percentages_ints():
    assert V.parse_size("64K") == 65536 and V.parse_size("8M") == 8 << 20
    assert V.parse_percent("5") == V.parse_percent("5%") == 5.0
    assert V.parse_percent("0.5") == 0.5
    assert V.parse_int("-1", -1, 99) == -1 and V.parse_int("0x1f", 0, 99) == 31
    for bad, f in (("1T", V.parse_size), ("5%%", V.parse_percent), ("-5", V.parse_percent),
                   ("1.5", V.parse_int)):
        with pytest.raises(UsageError):
            f(bad)
    with pytest.raises(UsageError, match=r"^'0' is out of range; expected 1\.\.100$"):
        V.parse_count("0", 1, 100)
    with pytest.raises(UsageError, match=r"expected 0\.1-50 \(a percentage\)"):
        V.parse_percent("90", 0.1, 50)


def test_cpu_lists():
    assert V.parse_cpulist("1") == [1]
    assert V.parse_cpulist("3-5,1,4") == [1, 3, 4, 5]
    assert V.format_cpulist([0, 1, 2, 5]) == "0-2,5" and V.format_cpulist([]) == ""
    for bad in ("", "a", "1,", "1-", "-1", "1 ,2", "0x1"):
        with pytest.raises(UsageError, match="is not a CPU list"):
            V.parse_cpulist(bad)
    with pytest.raises(UsageError, match="ends before it starts"):
        V.parse_cpulist("3-1")
    with pytest.raises(UsageError, match="this build handles CPUs 0-1023"):
        V.parse_cpulist("1024")


def test_formatted_values_read_back_exactly():
    for ns in (0, 1, 999, 1000, 1500, 10 ** 6, 2 * S, 90 * S, 3600 * S, 2 ** 64 - 1):
        assert V.parse_duration_ns(V.format_duration(ns)) == ns
    assert [V.format_duration(x) for x in (2 * S, 120 * S, 1_500_000, 0)] == \
        ["2s", "2m", "1500us", "0"]
    for n in (0, 1, 1234, 500_000, 2 * 10 ** 6, 10 ** 9):
        assert V.parse_count(V.format_count(n)) == n
    assert V.format_count(500_000) == "500K"


# --- the same answers as the C side ----------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = os.path.join(ROOT, "tests", "vectors", "values.txt")
C_VALUES = os.path.join(ROOT, "build", "tests", "jtr-values")


def shortest(v):
    """A float as jtr-values writes it: the shortest %g that reads back the same."""
    for prec in range(1, 18):
        text = "%.*g" % (prec, v)
        if float(text) == v:
            return text
    return repr(v)


def python_value(kind, text):
    """The Python side's answer to a vector: the canonical value, or "error"."""
    parse = {"duration": V.parse_duration_ns, "count": V.parse_count,
             "size": V.parse_size, "int": V.parse_int}
    try:
        if kind == "percent":
            return shortest(V.parse_percent(text))
        if kind == "cpulist":
            return "-1" if text == "-1" else V.format_cpulist(V.parse_cpulist(text))
        return str(parse[kind](text))
    except UsageError:
        return "error"


def vectors():
    out = []
    with open(VECTORS, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#") or not line.strip():
                continue
            kind, text, want = line.split("\t")
            out.append((n, kind, text, want))
    return out


def test_value_vectors():
    """Every vector through the Python parsers gives the answer the file holds (the
    C parsers answer the same file in make test-unit, jtr-values --check, and in
    tests/test_values.py)."""
    vs = vectors()
    assert len(vs) >= 80 and {v[1] for v in vs} == {"duration", "count", "size", "percent",
                                                   "cpulist", "int"}
    def same(kind, got, want):
        if kind == "percent" and "error" not in (got, want):
            return float(got) == float(want)      # 100, 1e+02: the same number
        return got == want
    wrong = [(n, kind, text, want, python_value(kind, text)) for n, kind, text, want in vs
             if not same(kind, python_value(kind, text), want)]
    assert not wrong, wrong


def test_c_and_python_say_the_same_when_a_value_is_wrong():
    """The messages of the grammar's own refusals are the same words on both sides."""
    if not os.access(C_VALUES, os.X_OK):
        pytest.fail("%s is not built (make builds it)" % C_VALUES)
    cases = [("duration", "1e3"), ("count", "-5"), ("size", "1.5K"), ("percent", "x"),
             ("cpulist", "3-1"), ("int", "1.5"), ("cpulist", "1024")]
    p = subprocess.run([C_VALUES], input="".join("%s\t%s\n" % c for c in cases),
                       capture_output=True, text=True, timeout=60)
    parse = {"duration": V.parse_duration_ns, "count": V.parse_count, "size": V.parse_size,
             "percent": V.parse_percent, "cpulist": V.parse_cpulist, "int": V.parse_int}
    for (kind, text), line in zip(cases, p.stdout.splitlines()):
        with pytest.raises(UsageError) as e:
            parse[kind](text)
        assert line == "error\t%s" % e.value, (kind, text)
