# SPDX-License-Identifier: GPL-2.0-only
"""units: how jtr writes numbers for people."""
from jtrpy.units import counted, fmt_ns, fmt_rate, shown


def test_fmt_ns():
    assert fmt_ns(727) == "727 ns"
    assert fmt_ns(11135) == "11.1 us"
    assert fmt_ns(2969805) == "2.97 ms"
    assert fmt_ns(1.2e9) == "1.20 s"


def test_counted_and_rates():
    assert counted(1, "outlier") == "1 outlier" and counted(3, "outlier") == "3 outliers"
    assert fmt_rate(1234567.4) == "1,234,567" and fmt_rate(None) == "-"


def test_shown_escapes_what_moves_the_terminal():
    """Names and values from outside (a folder, an option's value) shown on a
    terminal: control characters and bytes that were not UTF-8 escaped."""
    assert shown("a\nb\x1b[2J\x07\udcffc") == "a\\nb\\x1b[2J\\x07\\xffc"
    assert shown("plain é") == "plain é"
