# SPDX-License-Identifier: GPL-2.0-only
"""One value grammar in the built programs: the shared vectors through
build/tests/jtr-values, long options written --opt=value, and the options whose
bare number still means ns or ms, with their warning."""
import os
import subprocess

import pytest
from conftest import ROOT, load, run_jtr

VALUES = os.path.join(ROOT, "build", "tests", "jtr-values")
VECTORS = os.path.join(ROOT, "tests", "vectors", "values.txt")


def vectors():
    with open(VECTORS) as f:
        lines = [line.rstrip("\n") for line in f]
    return [line.split("\t") for line in lines if line.strip() and not line.startswith("#")]


def test_vectors_through_the_line_protocol():
    """jtr-values reads KIND<TAB>INPUT lines and answers ok<TAB>VALUE or
    error<TAB>MESSAGE, one line each, as the Python side will call it."""
    cases = vectors()
    assert len(cases) >= 80 and all(len(c) == 3 for c in cases)
    kinds = {k for k, _, _ in cases}
    assert kinds == {"duration", "count", "size", "percent", "cpulist", "int"}
    p = subprocess.run([VALUES], input="".join("%s\t%s\n" % (k, i) for k, i, _ in cases),
                       capture_output=True, text=True, check=True)
    out = p.stdout.split("\n")[:-1]
    assert len(out) == len(cases)
    for (kind, inp, want), line in zip(cases, out):
        status, _, got = line.partition("\t")
        if want == "error":
            assert status == "error" and ("'%s'" % inp) in got, (kind, inp, line)
        elif kind == "percent":
            assert status == "ok" and float(got) == float(want), (kind, inp, line)
        else:
            assert (status, got) == ("ok", want), (kind, inp, line)


def test_check_mode_finds_a_wrong_vector(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("# a comment\n\nduration\t10\t10000000000\nduration\t10\t10\n")
    p = subprocess.run([VALUES, "--check", str(bad)], capture_output=True, text=True)
    assert p.returncode == 1
    assert "bad.txt:4: duration '10': expected 10, got ok 10000000000" in p.stderr
    assert "2 vectors, 1 wrong" in p.stdout


def test_long_options_take_equals(tmp_path):
    """--opt=value on a probe and on a transport program."""
    out = tmp_path / "gap"
    p = run_jtr("gap", "--duration=0.3", "--threshold=5us", "--hist-error=2%", "--quiet",
                "--output=%s" % out, check=True, timeout=60)
    assert "bare number" not in p.stderr
    params = load(out)["params"]
    assert params["duration_ns"] == 300000000 and params["threshold_ns"] == 5000
    assert params["hist_error"] == 0.02
    out = tmp_path / "ipc"
    run_jtr("ipc", "--objects=20K", "--methods=shm-mutex,tcp", "--readers=1", "--batch=10K",
            "--timeout=5s", "--pace=0", "--quiet", "--output=%s" % out, check=True, timeout=60)
    res = load(out)
    assert res["params"]["timeout_ns"] == 5 * 10**9 and res["params"]["objects"] == 20000
    assert [r["method"] for r in res["rows"]] == ["shm-mutex", "tcp"]


WARN = ("a bare number here still means %s (as before); write %s%s \u2014 a bare duration is "
        "in seconds everywhere else in jtr, and will be here in a later version")


@pytest.mark.parametrize("args,opt,value,unit", [
    (["null", "-n", "1K", "-r", "1", "-p", "898"], "-p", "898", "ns"),
    (["null", "-n", "1K", "-r", "1", "--threshold", "2000"], "--threshold", "2000", "ns"),
    (["gap", "-d", "100ms", "--threshold=1500"], "--threshold", "1500", "ns"),
    (["ipc", "-n", "2K", "-m", "shm-mutex", "-r", "1", "-B", "1K", "--pace", "1"], "--pace", "1",
     "ms"),
])
def test_legacy_bare_number_warns(tmp_path, args, opt, value, unit):
    out = tmp_path / "x"
    p = run_jtr(*args, "-q", "-o", out, check=True, timeout=60)
    line = "jtr %s: warning: %s %s: %s" % (args[0], opt, value, WARN % (unit, value, unit))
    assert p.stderr.splitlines().count(line) == 1, p.stderr
    assert line.split("warning: ", 1)[1] in load(out)["warnings"]


@pytest.mark.parametrize("pause", ["0", "898ns", "0.898us"])
def test_no_warning_with_a_unit_or_zero(tmp_path, pause):
    out = tmp_path / "x"
    p = run_jtr("null", "-n", "1K", "-r", "1", "-p", pause, "-q", "-o", out, check=True)
    assert "bare number" not in p.stderr
    assert load(out)["params"]["pause_ns"] == (0 if pause == "0" else 898)


def test_bare_seconds_elsewhere(tmp_path):
    """-d, --wait, --timeout, --stats-every: a bare number is in seconds, no warning."""
    out = tmp_path / "x"
    p = run_jtr("gap", "-d", "0.2", "-q", "-o", out, check=True)
    assert "bare number" not in p.stderr
    assert load(out)["params"]["duration_ns"] == 200000000
    p = run_jtr("ping", "--wait", "0.2", "-o", tmp_path / "p", "-P", "127.0.0.1:1", "-T", "tcp")
    assert p.returncode == 2 and "within 0.2 s" in p.stderr
