# SPDX-License-Identifier: GPL-2.0-only
"""render.fleet: the table for people and the page (self-contained, flagged rows
marked, host names escaped)."""
import re

import pytest

from jtrpy.render import fleet as render
from jtrpy.results import fleet

from ..results.test_fleet import QUIET, gap, noisy, write


def _doc(tmp_path, **more):
    write(tmp_path / "f" / "calm" / "gap", gap(lost_pct=1.0, causes=QUIET))
    write(tmp_path / "f" / "a<b>&c" / "gap", gap(lost_pct=8.0, causes=noisy()))
    for host, doc in more.items():
        write(tmp_path / "f" / host / "gap", doc)
    return fleet.fleet([str(tmp_path / "f")])


def test_the_table(tmp_path):
    lines = render.format_text(_doc(tmp_path))
    assert lines[0].split() == ["host", "probe", "CPUs", "p99", "p99.99", "max", "lost", "or",
                                "excess", "top", "causes", "(share", "of", "time", "lost)",
                                "flag"]
    odd, calm = lines[1], lines[2]      # the table's order: natural by host name
    assert calm.startswith("calm ") and calm.endswith("  -")
    assert "  1.00 %  VM exits, SMI or hardware 60 %; local timer 40 %" in calm
    assert odd.startswith("a<b>&c  gap    1 ")
    assert "8.00 %  jtr-inject 80 %; VM exits, SMI or hardware 12 %; local timer 8 %" in odd
    assert odd.endswith("FLAGGED lost 8.0x: task preemption: jtr-inject")
    assert lines[4] == "flagged: a<b>&c"
    assert lines[5] == ("  a<b>&c gap: time lost 8.00 % against 1.00 % on the other host "
                        "(8.0x; flagged from 2.00 %)")
    assert lines[6] == ("    by task preemption: jtr-inject, 6.40 % of the time lost to it "
                        "against 0.00 % on the other host")
    assert lines[7].startswith("rule: each host against the median of the other hosts")


def test_names_from_outside_cannot_move_the_terminal(tmp_path):
    """A host folder named with a newline and an escape sequence, and a task that
    named itself with one: shown escaped in every line (they were printed raw)."""
    write(tmp_path / "f" / "calm" / "gap", gap(lost_pct=1.0, causes=QUIET))
    bad = [("task preemption", "x\x1b[2Jy (pid 7, prio 120)", 0.9)] + QUIET[:1]
    write(tmp_path / "f" / "we\nb\x1b]0;t\x07" / "gap", gap(lost_pct=8.0, causes=bad))
    (tmp_path / "f" / "empty\rhost").mkdir()
    lines = render.format_text(fleet.fleet([str(tmp_path / "f")]))
    text = "\n".join(lines)
    assert not any(c in x for x in lines for c in "\n\r\x1b\x07")
    assert "we\\nb\\x1b]0;t\\x07" in text and "x\\x1b[2Jy" in text
    assert "empty\\rhost" not in text and "empty\\x0dhost" in text


def test_nothing_flagged_says_so(tmp_path):
    write(tmp_path / "f" / "a" / "gap", gap(lost_pct=1.0, causes=QUIET))
    write(tmp_path / "f" / "b" / "gap", gap(lost_pct=1.2, causes=QUIET))
    lines = render.format_text(fleet.fleet([str(tmp_path / "f")]))
    assert "no host differs from the others (2 hosts)" in lines


def test_the_page(tmp_path):
    page = render.page(_doc(tmp_path, bare=gap(lost_pct=1.1, attributed=False)))
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert page.count("data:image/png;base64,") == 1            # one probe, one chart
    assert "a<b>&c" not in page and "a&lt;b&gt;&amp;c" in page
    flagged = re.findall(r'<tr class="flagged"[^>]*>(.*?)</tr>', page)
    assert len(flagged) == 1 and flagged[0].startswith("<td>a&lt;b&gt;&amp;c</td>")
    assert re.search(r"FLAGGED lost 7\.6x: task preemption: jtr-inject</td>$", flagged[0])
    # the causes side by side, the named one marked, a host without attribution '-'
    row = re.search(r"<tr><td>task preemption: jtr-inject</td>(.*?)</tr>", page).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells == ["6.400 %", "-", "0"]        # a<b>&c, bare, calm (the table's order)
    assert 'font-weight:bold">6.400 %' in row


def test_the_charts_bars(tmp_path):
    doc = _doc(tmp_path, bare=gap(lost_pct=1.1, attributed=False),
               still=gap(lost_pct=0.0, causes=()))
    bars = {label: (parts, flagged) for label, parts, flagged in render.bars(doc["rows"])}
    parts, flagged = bars["a<b>&c"]
    assert flagged and [p[0] for p in parts] == ["task preemption", "no kernel event",
                                                 "timer tick"]
    assert sum(p[1] for p in parts) == pytest.approx(8.0)
    (part,), flagged = bars["bare"]
    assert part == ("not attributed", pytest.approx(1.1)) and not flagged
    assert bars["still"] == ([], False)           # attributed, nothing lost: no bar
