# SPDX-License-Identifier: GPL-2.0-only
"""Gates for CI: --max-latency, --max-lost and --junit on real short runs of
`jtr run` and `jtr wake` / `jtr gap` alone (judged by the front end once the
probe ended, as jtr run judges). A limit of 1 ns fails, a
limit of an hour passes; exit status 1 on a failure with the whole results
folder written, 130 when interrupted; the JUnit file is validated against the
schema CI servers read (Jenkins' junit-10.xsd, which scripts/deps.sh takes from
pytest's sdist), and result.json's "gates" against docs/result.schema.json.
With the FIFO spinner of tests/inject.py on the measured CPU, the failed
--max-latency names it."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest
import xmlschema
from conftest import JTR, ROOT, free_port, load, need_tracing, run_jtr

from jtrpy.units import fmt_ns

pytestmark = pytest.mark.measures

XSD = os.path.join(sys.prefix, "share", "junit", "junit-10.xsd")
CPU = sorted(os.sched_getaffinity(0))[-1]


@pytest.fixture(scope="module")
def junit_schema():
    if not os.path.exists(XSD):
        pytest.fail("%s is missing: make deps (scripts/deps.sh) extracts it from pytest's "
                    "sdist" % XSD)
    return xmlschema.XMLSchema(XSD)


def junit(path, schema):
    """The JUnit file at @path, validated: (its <testsuite>, {name: testcase})."""
    schema.validate(str(path))
    root = ET.parse(str(path)).getroot()
    assert root.tag == "testsuites" and len(root) == 1
    suite = root[0]
    return suite, {tc.get("name"): tc for tc in suite.findall("testcase")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three untraced `jtr run` of gap: limits it must fail, limits it must pass,
    no limits; {name: (folder, junit file, CompletedProcess)}."""
    d = tmp_path_factory.mktemp("gates")
    out = {}
    for name, limits in (("fail", ["--max-latency", "1ns", "--max-lost", "0"]),
                         ("pass", ["--max-latency", "1h", "--max-lost", "100"]),
                         ("none", [])):
        folder, xml = d / name, d / (name + ".xml")
        p = run_jtr("run", "--no-trace", "-c", CPU, "-d", "100ms", "-o", folder, "--junit",
                    xml, *limits, timeout=60)
        out[name] = (folder, xml, p)
    return out


def test_a_limit_of_one_ns_fails_with_exit_1(runs, junit_schema, validate):
    folder, xml, p = runs["fail"]
    assert p.returncode == 1, p.stderr
    res = validate(load(folder))               # the whole folder is written all the same
    assert (folder / "summary.txt").is_file() and (folder / "outliers.csv").is_file()
    g = res["gates"]
    assert g["passed"] is False and g["quantity"] == "gap"
    assert g["limits"] == {"max_latency_ns": 1, "max_lost_pct": 0.0}
    lat, lost = g["cases"]
    assert (lat["gate"], lat["cpu"], lat["value"], lat["passed"]) == (
        "max-latency", CPU, res["runs"][0]["max_ns"], False)
    assert lost["passed"] is (lost["value"] == 0)
    # no tracer: the failure says its causes were not measured, and how to get them
    assert lat["causes_missing"].startswith("not measured: tracing was switched off "
                                            "(--no-trace); jtr run as root")
    last = p.stderr.rstrip().splitlines()[-1]
    assert last.startswith("jtr run: gate ") and " failed: " in last
    assert "jtr run: gate max-latency cpu %d failed: max " % CPU in p.stderr
    assert "> limit 1ns; causes not measured: tracing was switched off" in p.stderr
    assert "  max-latency cpu %d: FAILED: max " % CPU in p.stdout
    suite, cases = junit(xml, junit_schema)
    assert suite.get("name") == "jtr run gap" and suite.get("failures") == \
        str(2 - lost["passed"])
    tc = cases["max-latency cpu %d" % CPU]
    assert tc.get("classname") == "jtr.run.gap"
    f = tc.find("failure")
    assert f.get("type") == "max-latency"
    assert f.get("message").startswith("max-latency cpu %d: FAILED: max " % CPU)
    assert "value: " in f.text and "(%d ns)" % lat["value"] in f.text
    assert "limit: 1ns (1 ns)" in f.text and "causes: not measured" in f.text
    props = {x.get("name"): x.get("value") for x in suite.find("properties")}
    assert props["max_latency_limit"] == "1ns" and props["max_lost_limit"] == "0%"
    assert props["results"] == str(folder) and props["max_ns"] == str(lat["value"])


def test_a_limit_of_an_hour_passes(runs, junit_schema, validate):
    folder, xml, p = runs["pass"]
    assert p.returncode == 0, p.stderr
    g = validate(load(folder))["gates"]
    assert g["passed"] is True and all(c["passed"] for c in g["cases"])
    assert "failed" not in p.stderr
    assert "  max-latency cpu %d: passed: max " % CPU in p.stdout
    suite, cases = junit(xml, junit_schema)
    assert (suite.get("tests"), suite.get("failures")) == ("2", "0")
    assert set(cases) == {"max-latency cpu %d" % CPU, "max-lost cpu %d" % CPU}
    assert all(tc.find("failure") is None for tc in cases.values())


def test_junit_without_limits_is_one_passing_testcase(runs, junit_schema):
    folder, xml, p = runs["none"]
    assert p.returncode == 0, p.stderr
    assert "gates" not in load(folder) and "gates:" not in p.stdout
    assert "junit: %s" % xml in p.stdout
    suite, cases = junit(xml, junit_schema)
    assert list(cases) == ["run"] and cases["run"].find("failure") is None
    out = cases["run"].find("system-out").text
    assert "jtr gap: CPU %d, " % CPU in out and "of the time lost" in out   # the headline
    props = {x.get("name"): x.get("value") for x in suite.find("properties")}
    assert props["tool"] == "gap" and float(props["lost_pct"]) >= 0


def test_interrupted_stays_130_with_the_report_written(tmp_path, junit_schema):
    xml = tmp_path / "ci.xml"
    p = subprocess.Popen([JTR, "run", "--no-trace", "-c", str(CPU), "-d", "20",
                          "-o", str(tmp_path / "run"), "--max-latency", "1ns", "--junit",
                          str(xml)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while not list(tmp_path.glob(".run.partial-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert err.rstrip().splitlines()[-1].startswith("jtr run: interrupted; partial results")
    res = load(tmp_path / "run")
    assert res["partial"] is True and res["gates"]["passed"] is False
    suite, _ = junit(xml, junit_schema)
    props = {x.get("name"): x.get("value") for x in suite.find("properties")}
    assert props["partial"] == "true"


@pytest.mark.parametrize("probe", ["wake", "gap"])
def test_the_c_probes_gate_themselves(tmp_path, probe, junit_schema, validate):
    """jtr wake and jtr gap alone: the same gates, the same report; they do not
    trace, and say that jtr run names the causes."""
    fail, ok = tmp_path / "fail", tmp_path / "ok"
    # --max-lost only where a sample is CPU time: a wake-up's latency is not
    lost_opt = ["--max-lost", "100"] if probe == "gap" else []
    p = run_jtr(probe, "-c", CPU, "-d", "100ms", "-q", "-o", fail, "--max-latency", "1ns",
                *lost_opt, "--junit", tmp_path / "fail.xml", timeout=60)
    assert p.returncode == 1, p.stderr
    g = validate(load(fail))["gates"]
    assert g["passed"] is False and g["quantity"] == probe
    lat = g["cases"][0]
    assert (lat["gate"], lat["cpu"], lat["passed"]) == ("max-latency", CPU, False)
    assert lat["value"] == load(fail)["runs"][0]["max_ns"]
    assert [c["gate"] for c in g["cases"]] == ["max-latency"] + (["max-lost"] if lost_opt
                                                                 else [])
    assert all(c["passed"] for c in g["cases"][1:])
    hint = "'jtr run %s ... --max-latency 1ns%s' (as root) names them" % (
        probe, " --max-lost 100%" if lost_opt else "")
    assert lat["causes_missing"].endswith(hint)
    assert p.stderr.rstrip().splitlines()[-1] == (
        "jtr %s: gate max-latency cpu %d failed: max %s > limit 1ns; causes not measured: "
        "jtr %s runs no tracer; %s" % (probe, CPU, fmt_ns(lat["value"]), probe, hint))
    suite, cases = junit(tmp_path / "fail.xml", junit_schema)
    assert (suite.get("name"), suite.get("failures")) == ("jtr %s" % probe, "1")
    f = cases["max-latency cpu %d" % CPU].find("failure")
    assert cases["max-latency cpu %d" % CPU].get("classname") == "jtr.%s" % probe
    assert "value: %s (%d ns), the largest sample of %s on CPU %d in " % (
        fmt_ns(lat["value"]), lat["value"], probe, CPU) in f.text
    assert "limit: 1ns (1 ns)" in f.text
    assert hint in f.text
    if lost_opt:
        assert cases["max-lost cpu %d" % CPU].find("failure") is None
    else:
        assert "max-lost cpu %d" % CPU not in cases
        p = run_jtr(probe, "-c", CPU, "-d", "200ms", "-o", tmp_path / "x", "--max-lost", "1",
                    timeout=30)
        assert p.returncode == 2 and p.stderr.strip() == (
            "jtr %s: --max-lost: a wake-up's latency is no CPU time lost (the probe sleeps "
            "between wake-ups); gate it with --max-latency" % probe), p.stderr
        assert not (tmp_path / "x").exists()

    p = run_jtr(probe, "-c", CPU, "-d", "100ms", "-q", "-o", ok, "--max-latency", "1h",
                "--junit", tmp_path / "ok.xml", timeout=60)
    assert p.returncode == 0, p.stderr
    assert validate(load(ok))["gates"]["passed"] is True
    suite, cases = junit(tmp_path / "ok.xml", junit_schema)
    assert suite.get("failures") == "0" and list(cases) == ["max-latency cpu %d" % CPU]

    p = run_jtr(probe, "--max-latency", "x", "--junit", tmp_path / "x.xml", timeout=30)
    assert p.returncode == 2 and "--max-latency x" in p.stderr, p.stderr
    p = run_jtr(probe, "--junit", tmp_path / "none" / "x.xml", timeout=30)
    assert p.returncode == 2 and "no folder %s" % (tmp_path / "none") in p.stderr


def test_jtr_run_wake_takes_the_gates_itself(tmp_path, junit_schema):
    """`jtr run wake --max-latency X` is judged by jtr run, not handed to jtr wake
    as well (which would fail on its own and leave jtr run no result)."""
    p = run_jtr("run", "wake", "--no-trace", "-c", CPU, "-d", "100ms", "-o", tmp_path / "w",
                "--max-latency", "1ns", "--junit", tmp_path / "w.xml", timeout=60)
    assert p.returncode == 1, p.stderr
    res = load(tmp_path / "w")
    assert "--max-latency" not in res["command"] and "--junit" not in res["command"]
    assert res["gates"]["quantity"] == "wake"
    suite, cases = junit(tmp_path / "w.xml", junit_schema)
    assert suite.get("name") == "jtr run wake"
    assert cases["max-latency cpu %d" % CPU].get("classname") == "jtr.run.wake"
    assert "jtr wake: gate" not in p.stderr and "jtr run: gate max-latency" in p.stderr


def renames_onto(log, name):
    """{(pid, path): count} of the renames onto a file called @name in an strace -f
    log (a call another process's line cut in two ends "<unfinished ...>" there)."""
    out = {}
    for line in log.splitlines():
        m = re.match(r"(\d+)\s+rename(?:at2?)?\(.*\"([^\"]*)\"(?:, \w+)?"
                     r"(?:\)\s+= 0| <unfinished \.\.\.>)", line)
        if m and os.path.basename(m.group(2)) == name:
            k = (int(m.group(1)), m.group(2))
            out[k] = out.get(k, 0) + 1
    return out


@pytest.mark.parametrize("probe", ["gap", "ping"])
def test_a_traced_run_saves_its_result_once(tmp_path, probe):
    """jtr run builds its result document in memory (the probe's figures, then the
    validity, attribution and gates; sides for two ends) and writes result.json
    once: the probe writes its figures under another name (JTR_RESULT_AS) that jtr
    reads and removes (result.json was written by the probe and then by jtr, and
    before that three times by jtr: sides and validity, attribution, gates). A
    ping's pong writes its own result (pong/result.json), once."""
    need_tracing()
    if not shutil.which("strace"):
        pytest.skip("strace is not installed (scripts/deps.sh test installs it)")
    other = sorted(os.sched_getaffinity(0))[0]
    if probe == "ping" and other == CPU:
        pytest.skip("needs two CPUs: ping and pong")
    log, out = tmp_path / "strace.txt", tmp_path / "r"
    args = ["run", "-c", str(CPU), "-d", "100ms"] if probe == "gap" else \
        ["run", "ping", "-c", str(CPU), "-T", "udp", "-P", "127.0.0.1:%d" % free_port(),
         "-r", "10K", "-n", "3000", "--pong-cpu", str(other)]
    # --seccomp-bpf: stopped at the renames only (stopped at every system call,
    # a ping of 3,000 messages took 68 s)
    p = subprocess.run(["strace", "-f", "-qq", "--seccomp-bpf",
                        "-e", "trace=rename,renameat,renameat2",
                        "-o", str(log), JTR, *args, "--max-latency", "1h", "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    res = load(out)
    assert {"validity", "attribution", "gates"} <= set(res), sorted(res)
    assert ".probe-result.json" not in os.listdir(out), os.listdir(out)
    text = log.read_text()
    writes = {path: n for (_, path), n in renames_onto(text, "result.json").items()}
    assert writes.pop(str(out / "result.json"), 0) == 1, text
    if probe == "ping":     # pong's own, in its folder before jtr moves it into pong/
        assert list(writes.values()) == [1] and ".pong." in list(writes)[0], text
        assert (out / "pong" / "result.json").is_file()
    else:
        assert writes == {}, text


def test_a_failed_gate_names_the_injected_spinner(tmp_path, junit_schema, validate):
    """A FIFO task spinning 300 us every 20 ms on the measured CPU: the outliers
    beyond 150 us are its preemptions, and the failure says so first."""
    need_tracing()
    cpu = sorted(os.sched_getaffinity(0))
    if len(cpu) < 2:
        pytest.skip("needs two CPUs: one measured, one for the tracer")
    cpu = cpu[-1]
    spin = subprocess.Popen(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable,
         os.path.join(ROOT, "tests", "inject.py"), "fifo", str(cpu), "--prio", "10",
         "--spin-us", "300", "--period-ms", "20", "--duration", "30",
         "--out", str(tmp_path / "inject.csv")], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        time.sleep(0.3)
        # 1 s: 50 spins, each an outlier beyond the limit (20 asked for)
        p = run_jtr("run", "-c", cpu, "-d", "1", "--backend", "ebpf", "-o", tmp_path / "run",
                    "--max-latency", "150us", "--junit", tmp_path / "ci.xml", timeout=120)
    finally:
        # the spinner and the unshare that holds its pid namespace, their own group
        # (the first process of a pid namespace ignores a SIGTERM it has no handler for)
        os.killpg(spin.pid, signal.SIGKILL)
        spin.wait(timeout=30)
    assert p.returncode == 1, p.stderr
    res = validate(load(tmp_path / "run"))
    [lat] = res["gates"]["cases"]
    assert not lat["passed"] and lat["beyond"] >= 20
    # the spinner first, unless a task of another program on this busy machine took
    # more of the CPU then (`man` once), or the host did (its steal counter, beside
    # a busy loop; or unmeasured, "VM exits, SMI or hardware", once in a fresh
    # clone): named too, and printed
    names = [(c["category"], c["name"].split(" ")[0]) for c in lat["causes"]]
    i = names.index(("task preemption", "jtr-inject"))
    foreign = names[:i]
    assert all((k == "task preemption" and not n.startswith("jtr")) or
               (k, n) in (("no kernel event", "host"), ("no kernel event", "VM"))
               for k, n in foreign), names
    if foreign:
        print("a foreign load took more than the spinner: %s" % foreign)
    top = lat["causes"][i]
    assert top["count"] >= 20
    # the causes are those of the outliers beyond the limit, all of their time
    rows = [line.split(",") for line in (tmp_path / "run" / "outliers.csv").read_text()
            .split()[1:]]
    beyond = [int(n) for c, _, n in rows if int(c) == cpu and int(n) > 150_000]
    assert lat["beyond"] == len(beyond)
    assert sum(c["total_ns"] for c in lat["causes"]) == sum(beyond)
    last = p.stderr.rstrip().splitlines()[-1]
    assert last.startswith("jtr run: gate max-latency cpu %d failed: max " % cpu)
    assert "> limit 150us; top causes of the %d outliers beyond the limit: " % lat["beyond"] \
        in last
    assert (foreign or names)[0][1] in last.split("beyond the limit: ")[1].split(" (")[0]
    assert "jtr-inject (" in last
    _, cases = junit(tmp_path / "ci.xml", junit_schema)
    f = cases["max-latency cpu %d" % cpu].find("failure")
    assert "causes of the %d outliers beyond the limit, most time first:" % lat["beyond"] \
        in f.text
    first = f.text.split("most time first:\n")[1].splitlines()[1 + i]   # under the header
    assert first.split()[:3] == ["task", "preemption", "jtr-inject"]
