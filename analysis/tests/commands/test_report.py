# SPDX-License-Identifier: GPL-2.0-only
"""jtr report's command: its options parsed and handed to the one driver
(drivers/test_report.py tests the job), the driver's line printed."""
import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.commands import report as command


@pytest.mark.parametrize("args", [[], ["a", "b", "c"]])
def test_one_or_two_results(capsys, args):
    assert jtr(["report"] + args) == 2
    assert capsys.readouterr().err == ("jtr report: give one result, or two to compare; see "
                                       "'jtr report --help'\n")


def test_the_options_go_to_the_driver_and_its_line_is_printed(capsys, monkeypatch):
    calls = []
    monkeypatch.setattr(command, "write_report", lambda paths, output, opts: calls.append(
        (paths, output, dict(opts, progress=type(opts["progress"]).__name__))) or
        "jtr report: x/report.html (p.png)")
    assert jtr(["report", "-o", "x", "--gnuplot", "--histo-buckets", "50", "--quantity",
                "rtt_from_send", "a", "b"]) == 0
    # and the progress line the driver tells which plot it draws
    assert calls == [(["a", "b"], "x", {"gnuplot": True, "histo_buckets": 50,
                                        "quantity": "rtt_from_send", "mixed": False,
                                        "progress": "Progress"})]
    assert capsys.readouterr().out == "jtr report: x/report.html (p.png)\n"
