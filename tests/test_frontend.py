# SPDX-License-Identifier: GPL-2.0-only
"""The front end: `jtr run` drives the gap probe and its headline carries
the same numbers as the result it read."""
import os
import re

from conftest import load, run_jtr

from jtrpy.units import fmt_ns


def test_run_prints_table_and_headline(tmp_path, validate):
    out = tmp_path / "run"
    p = run_jtr("run", "-d", "1", "-c", "1", "-o", out, check=True)
    res = validate(load(out))
    r = res["runs"][0]
    # the headline first: what, where, how long, valid; the run's row
    lines = p.stdout.splitlines()
    # (valid: a gap run has no finding of its own; a tracer's drops would add theirs)
    assert lines[0].startswith("jtr gap: CPU 1, %.2f s: a valid measurement" % (
        r["duration_ns"] / 1e9)), p.stdout
    m = re.match(r"  cpu1 +1 +(\d+) +([\d.]+ \w+) +([\d.]+ \w+) +([\d.]+ \w+) +([\d.]+ \w+) +"
                 r"(\d+) interruptions above ([\d.]+ \w+) \(([\d.]+)/s\), ([\d.]+) % of the time "
                 r"lost$", lines[2])
    assert m, p.stdout
    assert int(m.group(1)) == r["samples"]
    assert m.group(2) == fmt_ns(r["percentiles_ns"]["50"]) and m.group(5) == fmt_ns(r["max_ns"])
    assert int(m.group(6)) == r["outliers"]["count"]
    assert abs(float(m.group(8)) - r["outliers"]["per_s"]) < 0.06
    assert abs(float(m.group(9)) - r["lost_time_pct"]) < 0.0006
    # then the detail: the probe's own table came through, after the headline
    assert p.stdout.index("jtr gap: tsc timebase") > p.stdout.index(lines[2])
    assert "results: %s/" % out in p.stdout
    if os.geteuid() == 0:
        # traced and attributed: the table's counts are the result's
        att = res["attribution"]
        assert lines[3].startswith("  top causes of the outlier time: %s: " % (
            att["causes"][0]["category"])), p.stdout
        m = re.search(r"causes of (\d+) outliers on CPU 1", p.stdout)
        assert m and int(m.group(1)) == att["outliers"]["count"] == r["outliers"]["logged"]
        assert "tracer: eBPF (jtr trace), %d events, %d dropped" % (
            att["tracer"]["events"], att["tracer"]["dropped"]) in p.stdout
    else:
        assert lines[3] == "  causes: not attributed: the kernel-event tracer needs root"
    assert res["command"][0] == "jtr run"


def test_run_default_cpu_is_the_last_online(tmp_path):
    p = run_jtr("run", "-d", "300ms", cwd=tmp_path, check=True)
    res = load(tmp_path / "results" / "latest")
    online = res["host"]["online_cpus"]
    last = int(re.split(r"[,-]", online)[-1])
    iso = res["host"]["isolated_cpus"]
    want = int(re.split(r"[,-]", iso)[0]) if iso else last
    assert res["runs"][0]["cpu"] == want
    assert p.stdout.startswith("jtr gap: CPU %d," % want)


def test_every_command_has_the_same_help_layout():
    """C programs and Python commands alike: usage, options, examples; and
    `jtr help CMD` is `jtr CMD --help`."""
    from jtrpy.cli.main import COMMANDS
    for name, _, _ in COMMANDS:
        if name in ("help", "version"):
            continue
        p = run_jtr(name, "--help")
        assert p.returncode == 0 and p.stderr == "", (name, p.stderr)
        out = p.stdout
        assert out.startswith("usage: jtr %s" % name), (name, out[:80])
        assert "\noptions:\n" in out and "\nexamples:\n" in out, name
        assert "\nUsage:" not in out and "\nOptions:" not in out, name
        assert run_jtr("help", name).stdout == out, name
        # the one place the earlier tools' names are words of jtr's: the styles of
        # --legacy-output (um_lat, um_perf: whose lines are printed); their programs'
        # names (um_lat_ping, ...) are not
        words = re.sub(r"\bum_(lat|perf)\b", "", out)
        for old in ("um_perf", "um_lat", "tstall", "plotall", "the original", "seed's",
                    "seed-style", "jtr_sock", "tst_"):
            assert old not in words, (name, old)


def test_run_learns_the_folder_from_the_probe(tmp_path):
    """jtr run does not read the probe's output to find its results (with -q there
    is none) nor guess results/latest: here a stale folder sits where that link
    would be, and the run still reads its own result."""
    stale = tmp_path / "results" / "latest"
    stale.mkdir(parents=True)
    (stale / "result.json").write_text('{"format": "jtr-result/1", "tool": "stale", '
                                       '"runs": []}')
    p = run_jtr("run", "--no-trace", "--duration=300ms", "-q", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    folders = [d for d in (tmp_path / "results").iterdir() if d.name != "latest"]
    assert len(folders) == 1
    res = load(folders[0])
    cpu = res["runs"][0]["cpu"]
    assert p.stdout.startswith("jtr gap: CPU %d," % cpu)
    assert "%d interruptions above" % res["runs"][0]["outliers"]["count"] in p.stdout
