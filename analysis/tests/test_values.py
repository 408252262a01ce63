"""values: the one grammar of option values (docs/values.md). The cases both
sides must answer alike are in tests/vectors/values.txt (test_value_vectors)."""
import pytest

from jtrpy import values as V
from jtrpy.errors import UsageError

S = V.NS_PER_S


@pytest.mark.parametrize("text, ns", [
    ("10", 10 * S), ("10s", 10 * S), ("0.5", S // 2), ("500ms", S // 2), ("2m", 120 * S),
    ("1h", 3600 * S), ("898ns", 898), ("10us", 10_000), ("1.5ms", 1_500_000), ("0", 0),
    ("0.000000001s", 1), ("0.0000000009s", 0), ("1.0000000000009h", 3600 * S),
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
                                     ("500k", 500_000), ("1G", 10 ** 9), ("0x10", 16),
                                     ("0", 0)])
def test_counts(text, n):
    assert V.parse_count(text) == n


@pytest.mark.parametrize("text", ["", "-5", "1.5M", "2MB", "x", "1e6", "0x"])
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
    with pytest.raises(UsageError, match=r"expected 0\.1%\.\.50%"):
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
        ["2s", "2m", "1500us", "0s"]
    for n in (0, 1, 1234, 500_000, 2 * 10 ** 6, 10 ** 9):
        assert V.parse_count(V.format_count(n)) == n
    assert V.format_count(500_000) == "500K"
