# SPDX-License-Identifier: GPL-2.0-only
"""Bad input: one line naming the value and the fix, exit status 2, no core
dump, no traceback, and no results folder left behind."""
import os
import re
import signal
import subprocess
import time

import pytest
from conftest import BIN, JTR, comm, free_port, load, run_jtr, wait_for

BAD = [
    # (args, what the message must contain)
    (["null", "-c", "999"], ["-c", "CPU 999 is not online", "online CPUs:"]),
    (["null", "-c", "abc"], ["'abc' is not a CPU list", "1,3-5", "-1 for no pinning"]),
    (["gap", "-c", "3-1"], ["'3-1'", "ends before it starts"]),
    (["null", "-f", "100"], ["-f 100", "1-99"]),
    (["null", "-f", "0"], ["-f 0", "1-99"]),
    (["null", "-f", "high"], ["-f high", "'high' is not an integer"]),
    # the publisher flag bits of the tools jtr replaces, translated, not read as a priority
    (["pub", "-f", "0x3"], ["-f 0x3", "SCHED_FIFO priority (1-99)", "0x1 (timestamps) is its "
                            "default", "0x2 (non-blocking sends) is not carried over"]),
    (["pub", "-f", "0x4"], ["-f 0x4", "0x4 (generic source) means nothing here"]),
    # their -w LOOPS,RATE: the two options it is here
    (["ping", "-w", "5,5"], ["-w 5,5", "two options here: -w 5 --warmup-rate 5"]),
    (["null", "-n", "0"], ["-n 0", "'0' is out of range", "1.."]),
    (["null", "-n", "-5"], ["-n -5", "'-5' is not a count", "2M"]),
    (["null", "-p", "1e99"], ["-p 1e99", "'1e99' is not a duration", "10us",
                              "(a bare number here is in ns)"]),
    (["run", "--slack", "x"], ["--slack x", "'x' is not a duration",
                               "(a bare number here is in us)"]),
    (["null", "-r", "0"], ["-r 0", "out of range"]),
    (["null", "--bogus"], ["unknown option '--bogus'", "jtr null --help"]),
    (["null", "-x"], ["unknown option '-x'", "jtr null --help"]),
    (["null", "-n"], ["option '-n' needs a value"]),
    (["null", "--samples"], ["option '--samples' needs a value"]),
    (["gap", "--quiet=3"], ["option '--quiet' takes no value"]),
    (["null", "extra"], ["unexpected argument 'extra'"]),
    (["null", "-c", "0-1"], ["jtr null runs on one CPU"]),
    (["null", "-t", "hpet"], ["-t hpet", "tsc (or 1)", "clock (or 2)"]),
    (["gap", "-d", "abc"], ["-d abc", "'abc' is not a duration", "bare number is in seconds"]),
    (["gap", "-d", "0"], ["-d 0", "out of range"]),
    (["gap", "-d", "1s", "-j", "1M"], ["-d and -j both given"]),
    (["gap", "--threshold", "fast"], ["--threshold fast", "not a duration"]),
    (["gap", "--hist-error", "90"], ["--hist-error 90", "0.01-50"]),
    (["clock", "-n", "lots"], ["-n lots", "not a count"]),
    (["clock", "-c", "999"], ["CPU 999 is not online"]),
    (["run", "-c", "999"], ["jtr run: ", "CPU 999 is not online"]),
    (["frobnicate"], ["unknown command 'frobnicate'", "jtr --help"]),
    (["run", "--no-trace", "--backend", "perf"], ["--backend has no effect with --no-trace"]),
    (["run", "--no-trace", "--slack=2us", "--top", "3"], ["--slack and --top have no effect"]),
    # maxrate's options for pub and sub: refused at the first step, not halved for minutes
    (["maxrate", "--pub", "--bogus"], ["jtr pub refused its options",
                                       "jtr pub: unknown option '--bogus'"]),
    (["maxrate", "--sub", "--bogus"], ["jtr sub refused its options",
                                       "jtr sub: unknown option '--bogus'"]),
    (["maxrate", "--pub-cpu", "999"], ["jtr pub refused its options", "CPU 999 is not online"]),
]


@pytest.mark.parametrize("args,want", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input(tmp_path, args, want):
    if args[0] == "maxrate":
        # maxrate starts sub first: on a port of its own, not the default another
        # test may hold ("udp 127.0.0.1:17391 is in use" once, beside test_transports)
        args = args + ["-P", "127.0.0.1:%d" % free_port()]
    p = run_jtr(*args, cwd=tmp_path, timeout=30)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = p.stderr.strip().split("\n")
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("jtr")
    for w in want:
        assert w in lines[0], (w, lines[0])
    assert "Traceback" not in p.stderr
    assert p.stdout == ""
    assert os.listdir(tmp_path) == []  # not even an empty results/ folder


@pytest.mark.parametrize("target", ["/proc/jtr-results", "/etc/hostname/sub", "{tmp}/no/parent"])
def test_unwritable_output_folder(tmp_path, target):
    target = target.format(tmp=tmp_path)
    p = run_jtr("gap", "-d", "100ms", "-o", target, cwd=tmp_path, timeout=30)
    assert p.returncode == 2
    line = p.stderr.strip()
    assert "\n" not in line and target in line and "choose a folder" in line
    assert not os.path.exists(target)
    assert os.listdir(tmp_path) == []


def test_output_is_a_file(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    p = run_jtr("null", "-n", "1K", "--runs", "1", "-o", f)
    assert p.returncode == 2 and "exists and is not a folder" in p.stderr
    assert f.read_text() == "x"


def test_help_everywhere():
    p = run_jtr("--help", check=True)
    for cmd in ("run", "null", "gap", "clock"):
        assert "\n  %s " % cmd in p.stdout
    assert "examples:" in p.stdout
    for cmd in ("null", "gap", "clock"):
        h = run_jtr(cmd, "--help", check=True).stdout
        assert h.startswith("usage: jtr %s" % cmd) and "\noptions:\n" in h and "\nexamples:\n" in h
        assert run_jtr(cmd, "-h", check=True).stdout == h
    assert "usage: jtr run" in run_jtr("run", "--help", check=True).stdout
    assert run_jtr("--version", check=True).stdout.startswith("jtr 0.")
    bare = run_jtr()
    # no command is a mistake: the list goes to stderr, as every usage error
    assert bare.returncode == 2 and "commands:" in bare.stderr and bare.stdout == ""


C_PROGRAMS = ("null", "gap", "clock", "send", "ping", "pong", "pub", "sub", "ipc", "trace")


@pytest.mark.parametrize("prog", C_PROGRAMS)
def test_c_help_layout(prog):
    """Every C program's --help has the front end's layout (usage:, options:,
    notes, examples:) and speaks of today's tools only."""
    h = subprocess.run([os.path.join(BIN, "jtr-" + prog), "--help"], capture_output=True,
                       text=True, check=True).stdout
    assert h.startswith("usage: jtr %s [OPTIONS]\n" % prog)
    assert 0 < h.index("\noptions:\n") < h.index("\nexamples:\n")
    assert "\n  jtr %s" % prog in h[h.index("\nexamples:\n"):]
    # --legacy-output's styles (um_lat, um_perf: whose lines) are the one place the
    # earlier tools' names are words of jtr's; their programs' names are not
    words = re.sub(r"\bum_(lat|perf)\b", "", h)
    for old in ("Usage:", "Options:", "Examples:", "um_perf", "um_lat", "jtr_null", "jtr_sock",
                "tst_", "tstall", "original", "seed"):
        assert old not in words, old


def test_missing_programs_are_reported(tmp_path):
    p = run_jtr("gap", env={"JTR_LIBEXEC": str(tmp_path)})
    assert p.returncode == 1
    assert "jtr-gap is not built" in p.stderr and "make" in p.stderr
    assert "Traceback" not in p.stderr




@pytest.mark.parametrize("tool,args", [("gap", ["-d", "60"]),
                                       ("null", ["-n", "1G", "--runs", "3"])])
def test_ctrl_c_writes_partial_result(tmp_path, validate, tool, args):
    out = tmp_path / "part"
    p = subprocess.Popen([JTR, tool] + args + ["-o", str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    so, se = p.communicate(timeout=30)
    assert p.returncode == 130, se
    assert time.monotonic() - t < 5
    assert "stopping: writing what was measured" in se
    assert se.splitlines()[-1] == "jtr %s: interrupted; partial results in %s/" % (tool, out)
    res = validate(load(out))
    assert res["partial"] is True
    assert res["runs"] and res["runs"][0]["partial"] is True
    assert 0 < res["runs"][0]["samples"]
    assert res["runs"][0]["duration_ns"] < 30e9
    if tool == "gap":
        assert "PARTIAL" in so


def _group(pgid):
    """Pids of the processes in process group @pgid."""
    out = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and os.getpgid(int(pid)) == pgid:
                out.append(int(pid))
        except OSError:
            pass
    return out


def _descendants(pid):
    """Pids of the processes under @pid (children, their children, ...)."""
    parent = {}
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
            parent[int(d)] = int(s[s.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out




def test_ctrl_c_through_jtr_run(tmp_path, validate):
    """Ctrl-C at a terminal reaches the whole process group: the programs jtr
    run started are in a group of their own, so the front end alone gets it and
    passes one stop to the probe; it waits for the probe's partial result and
    still prints the headline."""
    out = tmp_path / "runpart"
    p = subprocess.Popen([JTR, "run", "-d", "60", "-o", str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    # the probe's output is buffered until it ends: wait for its process instead
    assert wait_for(lambda: any(comm(pid) == "jtr-gap" for pid in _descendants(p.pid)), 30)
    assert not any(comm(pid) == "jtr-gap" for pid in _group(p.pid))
    time.sleep(1)
    os.killpg(p.pid, signal.SIGINT)
    so, se = p.communicate(timeout=30)
    # the probe writes its partial result, jtr run attributes it and says last that
    # it was interrupted (the Ctrl-C rule: status 130)
    assert p.returncode == 130, se
    assert se.rstrip().splitlines()[-1] == "jtr run: interrupted; partial results in %s/" % out
    assert so.splitlines()[0].startswith("jtr gap: CPU ") and \
        ", partial (stopped early: the figures cover what was measured): " in so.splitlines()[0]
    res = validate(load(out))
    assert res["partial"] is True
    if os.geteuid() == 0:
        # the tracer got the same Ctrl-C, kept its log, and the partial run was attributed
        assert res["attribution"]["tracer"]["complete"] is True
        assert "causes of" in so


def test_kill_leaves_no_half_written_folder(tmp_path):
    out = tmp_path / "killed"
    p = subprocess.Popen([JTR, "gap", "-d", "60", "-o", str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    assert wait_for(lambda: any(n.startswith(".killed.partial-") for n in os.listdir(tmp_path)))
    time.sleep(0.3)
    p.kill()
    p.wait()
    assert not out.exists()  # only the hidden .killed.partial-PID remains


@pytest.mark.parametrize("first,second", [(signal.SIGINT, signal.SIGINT),
                                           (signal.SIGTERM, signal.SIGHUP),
                                           (signal.SIGHUP, signal.SIGTERM)])
def test_a_second_stop_signal_does_not_cut_the_writing_short(tmp_path, first, second):
    """Any second stop signal (at swept delays after the first) is acknowledged:
    the result is still written whole and renamed into place, exit 130."""
    acknowledged = 0
    for k, delay in enumerate((0.0, 0.001, 0.01, 0.05)):
        out = tmp_path / ("stop%d" % k)
        # -H 1000000: a large text histogram, so the writing takes a while
        p = subprocess.Popen([JTR, "null", "-n", "100M", "--runs", "1", "-H", "1000000", "-o",
                              str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
        assert wait_for(lambda h=".stop%d.partial-" % k: any(
            n.startswith(h) for n in os.listdir(tmp_path)), 30)
        time.sleep(0.3)
        p.send_signal(first)
        time.sleep(delay)
        alive = p.poll() is None
        if alive:
            p.send_signal(second)
        err = p.communicate(timeout=60)[1]
        assert p.returncode == 130, err
        assert load(out)["partial"] is True
        assert not [n for n in os.listdir(tmp_path) if ".partial-" in n]
        assert "stopping: writing what was measured" in err
        assert err.rstrip().splitlines()[-1] == "jtr null: interrupted; partial results in %s/" \
            % out
        acknowledged += "still stopping: writing what was measured (kill -9 aborts)" in err
    assert acknowledged, "no second signal came while the first was being handled"
