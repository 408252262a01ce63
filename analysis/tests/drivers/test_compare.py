# SPDX-License-Identifier: GPL-2.0-only
"""drivers.compare: jtr compare's job (commands/test_compare.py drives it through
the command): -o refused before any result is read, the two results compared as
the user named them, the JSON written atomically and returned as printed."""
import json
import os

import pytest

from jtrpy.drivers import compare as D
from jtrpy.errors import UsageError

from ..synthetic import loops, make_result, make_run


def results(tmp_path):
    out = []
    for name, seed in (("a", 1), ("b", 2)):
        d = tmp_path / name
        d.mkdir()
        (d / "result.json").write_text(json.dumps(make_result(make_run(loops(seed, n=20_000)))))
        out.append(str(d))
    return out


def test_the_comparison_and_its_file(tmp_path):
    a, b = results(tmp_path)
    out = tmp_path / "cmp.json"
    c, text = D.compare_results(a, b, out=str(out), resamples=200, seed=3)
    assert c["format"] == "jtr-compare/1" and c["method"]["resamples"] == 200
    assert json.loads(text) == json.loads(out.read_text())
    assert out.read_text() == text and text.endswith("}\n")
    assert [f for f in os.listdir(tmp_path) if f.startswith(".")] == []
    # the same seed, the same answer; no file without -o
    assert D.compare_results(a, b, resamples=200, seed=3)[1] == text


def test_a_bad_output_is_refused_before_any_result_is_read(tmp_path):
    for bad in (tmp_path / "no" / "such.json", tmp_path):
        with pytest.raises(UsageError, match="-o %s: cannot write there" % bad):
            D.compare_results(str(tmp_path / "missing-a"), str(tmp_path / "missing-b"),
                              out=str(bad))
    with pytest.raises(UsageError, match="no such result"):
        D.compare_results(str(tmp_path / "missing-a"), str(tmp_path / "missing-b"))
