# SPDX-License-Identifier: GPL-2.0-only
"""units - how jtr writes numbers for people (one format everywhere), and text
that came from outside (names, values) as it may be shown on a terminal."""
import re


def fmt_ns(ns):
    """A duration for people: 727 ns, 11.1 us, 2.97 ms, 1.20 s."""
    ns = float(ns)
    if ns < 1e3:
        return "%.0f ns" % ns
    if ns < 1e6:
        return "%.1f us" % (ns / 1e3)
    if ns < 1e9:
        return "%.2f ms" % (ns / 1e6)
    return "%.2f s" % (ns / 1e9)


def counted(n, noun):
    """'1 outlier', '2 outliers'."""
    return "%d %s%s" % (n, noun, "" if n == 1 else "s")


def fmt_rate(v):
    """A rate in messages a second: 1,000,000 ('-' when there is none)."""
    return "-" if v is None else "{:,}".format(int(round(v)))


def shown(text):
    """@text for a message or a table: a newline as \\n, other control characters
    escaped (\\x07, \\x1b), a byte that was not UTF-8 as \\xff, nothing that
    moves the terminal."""
    text = re.sub(r"[\x00-\x1f\x7f]", lambda m: "\\n" if m.group(0) == "\n" else
                  "\\x%02x" % ord(m.group(0)), text)
    return re.sub(r"[\udc80-\udcff]", lambda m: "\\x%02x" % (ord(m.group(0)) - 0xdc00), text)
