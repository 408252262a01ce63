# SPDX-License-Identifier: GPL-2.0-only
"""render.text: columns padded to their widest cell, left or right as asked, no
trailing blanks; CPU sets in words."""
from jtrpy.render.text import align, cpus_text


def test_align_pads_each_column_to_its_widest_cell():
    rows = [("name", "p99", "note"), ("a", "1234 ns", ""), ("longer", "5 ns", "x")]
    assert align(rows, (False, True, False)) == [
        "name        p99  note",
        "a       1234 ns",          # the empty last cell leaves no trailing blanks
        "longer     5 ns  x"]
    assert align([], (True,)) == []
    assert align([("x",)], (True,)) == ["x"]


def test_cpus_text():
    assert cpus_text([3]) == "CPU 3"
    assert cpus_text([1, 2, 3]) == "CPUs 1, 2, 3"
    assert cpus_text([]) == "no CPU"
