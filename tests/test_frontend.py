"""The front end: `jtr run` drives the gap probe and its headline carries
the same numbers as the result it read."""
import os
import re

from conftest import load, run_jtr


def test_run_prints_table_and_headline(tmp_path, validate):
    out = tmp_path / "run"
    p = run_jtr("run", "-d", "1", "-c", "1", "-o", out, check=True)
    res = validate(load(out))
    r = res["runs"][0]
    assert "jtr gap: tsc timebase" in p.stdout  # the probe's own table came through
    assert "results: %s/" % out in p.stdout
    m = re.search(r"CPU 1: (\d+) interruptions above ([\d.]+ \w+) in ([\d.]+) s \(([\d.]+)/s\), "
                  r"([\d.]+) % of the time lost", p.stdout)
    assert m, p.stdout
    assert int(m.group(1)) == r["outliers"]["count"]
    assert float(m.group(3)) == round(r["duration_ns"] / 1e9, 2)
    assert abs(float(m.group(4)) - r["outliers"]["per_s"]) < 0.06
    assert abs(float(m.group(5)) - r["lost_time_pct"]) < 0.0006
    if os.geteuid() == 0:
        # traced and attributed: the table's counts are the result's
        att = res["attribution"]
        m = re.search(r"causes of (\d+) outliers on CPU 1", p.stdout)
        assert m and int(m.group(1)) == att["outliers"]["count"] == r["outliers"]["logged"]
        assert "tracer: eBPF (jtr trace), %d events, %d dropped" % (
            att["tracer"]["events"], att["tracer"]["dropped"]) in p.stdout
    else:
        assert "causes: not attributed: the kernel-event tracer needs root" in p.stdout
    assert res["command"][0] == "jtr run"


def test_run_default_cpu_is_the_last_online(tmp_path):
    p = run_jtr("run", "-d", "300ms", cwd=tmp_path, check=True)
    res = load(tmp_path / "results" / "latest")
    online = res["host"]["online_cpus"]
    last = int(re.split(r"[,-]", online)[-1])
    iso = res["host"]["isolated_cpus"]
    want = int(re.split(r"[,-]", iso)[0]) if iso else last
    assert res["runs"][0]["cpu"] == want
    assert "CPU %d:" % want in p.stdout
