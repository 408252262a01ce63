"""Units of the Python side: result loading and the headline."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from jtrpy.cli import fmt_ns, headline, main  # noqa: E402
from jtrpy.errors import UsageError  # noqa: E402
from jtrpy.result import load_result  # noqa: E402


def test_fmt_ns():
    assert fmt_ns(727) == "727 ns"
    assert fmt_ns(11135) == "11.1 us"
    assert fmt_ns(2969805) == "2.97 ms"
    assert fmt_ns(1.2e9) == "1.20 s"


def test_load_result_errors(tmp_path):
    with pytest.raises(UsageError, match="no such result"):
        load_result(str(tmp_path / "missing"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UsageError, match="not a JSON file"):
        load_result(str(bad))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "oslat"}))
    with pytest.raises(UsageError, match="expected 'jtr-result/1'"):
        load_result(str(other))
    d = tmp_path / "dir"
    d.mkdir()
    (d / "result.json").write_text(json.dumps({"format": "jtr-result/1", "runs": []}))
    assert load_result(str(d))["runs"] == []


def test_headline_partial_and_numbers():
    res = {"format": "jtr-result/1", "partial": True, "runs": [{
        "cpu": 3, "duration_ns": 2_000_000_000, "lost_time_pct": 1.5, "max_ns": 68900,
        "percentiles_ns": {"99.99": 291},
        "outliers": {"count": 10, "threshold_ns": 1000, "per_s": 5.0}}]}
    lines = headline(res)
    assert lines[0] == ("CPU 3: 10 interruptions above 1.0 us in 2.00 s (5.0/s), 1.500 % of "
                        "the time lost; per loop p99.99 291 ns, max 68.9 us")
    assert any(line.startswith("partial:") for line in lines)


def test_main_usage_errors(capsys):
    assert main(["nope"]) == 2
    assert "unknown command 'nope'" in capsys.readouterr().err
    assert main(["version"]) == 0


def test_run_finds_gap_options():
    from jtrpy.runjob import cpus_option, option_value
    assert cpus_option(["-d", "5", "-c", "1-3"]) == "1-3"
    assert cpus_option(["-c2"]) == "2"
    assert cpus_option(["--cpus=0,1", "-q"]) == "0,1"
    assert cpus_option(["--cpu", "3"]) == "3"
    assert cpus_option(["-d", "5"]) is None
    assert cpus_option(["--", "-c", "1"]) is None
    assert option_value(["-q", "-o", "out"], "o", ("output",)) == "out"
    assert option_value(["--output=x"], "o", ("output",)) == "x"


def test_cpulists():
    from jtrpy.cpus import default_cpu, parse_cpulist
    assert parse_cpulist("1,3-4\n") == [1, 3, 4]
    assert parse_cpulist("") == []
    assert default_cpu() in os.sched_getaffinity(0)
