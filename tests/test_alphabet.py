# SPDX-License-Identifier: GPL-2.0-only
"""The one option alphabet (lib/jtr_opts.h, cli/parser.py ALPHABET): every C
program's --help gives each of the shared letters it has with its one long name
and kind of value, and no letter of the alphabet for anything else; the letters
of old (cli/parser.py OLD_LETTERS, docs/compat.md) are still taken for one
release, with one line on stderr saying what they are now, and give the same
result as the new spelling."""
import os
import re
import subprocess
import time

import pytest
from conftest import BIN, JTR, free_port, load, run_jtr

from jtrpy.cli.parser import ALPHABET, OLD_LETTERS

PROGRAMS = ("gap", "wake", "null", "clock", "send", "ping", "pong", "pub", "sub", "ipc",
            "trace")
LONG = {short: long for short, long, _, _ in ALPHABET}
META = {short: meta for short, _, meta, _ in ALPHABET}


def help_options(prog):
    """{letter: (long name, metavar)} of the option lines of `jtr PROG --help`."""
    path = os.path.join(BIN, "jtr-" + prog)
    if not os.path.exists(path):
        pytest.skip("%s is not built" % path)
    text = subprocess.run([path, "--help"], capture_output=True, text=True, check=True).stdout
    out = {}
    for letter, long, meta in re.findall(r"^  (-\w), (--[\w-]+)(?: ([A-Z]+))?", text, re.M):
        assert letter not in out, (prog, letter)
        out[letter] = (long, meta or None)
    return out


@pytest.mark.parametrize("prog", PROGRAMS)
def test_every_help_gives_each_letter_its_one_meaning(prog):
    opts = help_options(prog)
    assert opts, prog
    for letter, (long, meta) in opts.items():
        if letter in LONG:
            assert (long, meta) == (LONG[letter], META[letter]), (prog, letter, long, meta)
        else:
            assert long not in LONG.values(), (prog, letter, long)
    old = OLD_LETTERS.get(prog, {})
    for letter in old:
        assert letter not in opts or letter in LONG, (prog, letter)   # not shown in its old role


def old_line(prog, letter, now):
    return "jtr %s: %s is now %s (" % (prog, letter, now)


def check_old(p, prog, letters):
    """@p ran with the old @letters: each said so, once, on a line of its own."""
    assert p.returncode == 0, p.stderr
    for letter in letters:
        line = old_line(prog, letter, OLD_LETTERS[prog][letter])
        assert p.stderr.count(line) == 1, (letter, p.stderr)
        assert "; %s goes in the next release\n" % letter in p.stderr, p.stderr


def params(folder):
    """The run's params, less what the run measured (a threshold from its warm-up)."""
    p = load(folder)["params"]
    return {k: v for k, v in p.items() if "median" not in k and
            not (k == "threshold_ns" and p.get("threshold_rule") == "warmup")}


@pytest.mark.parametrize("prog,old,new", [
    ("gap", ["-j", "200K", "-t", "clock"], ["-n", "200K", "-t", "clock"]),
    ("null", ["-n", "2K", "-w", "10", "-r", "1", "-d", "old-run"],
     ["-n", "2K", "-w", "10", "--runs", "1", "--desc", "old-run"]),
    ("ipc", ["-n", "2000", "-m", "shm-mutex", "-r", "1", "-s", "64", "-B", "6400"],
     ["-n", "2000", "--methods", "shm-mutex", "--readers", "1", "-m", "64", "-B", "6400"]),
])
def test_old_letters_give_the_same_run(tmp_path, prog, old, new):
    p = run_jtr(prog, *old, "-q", "-o", tmp_path / "old")
    check_old(p, prog, [w for w in old if w in OLD_LETTERS[prog]])
    q = run_jtr(prog, *new, "-q", "-o", tmp_path / "new", check=True)
    assert "is now" not in q.stderr
    assert params(tmp_path / "old") == params(tmp_path / "new")


def test_send_old_letters(tmp_path):
    cpus = sorted(os.sched_getaffinity(0))
    a, b = cpus[0], cpus[-1]
    addr = "127.0.0.1:%d" % free_port()
    common = ["-P", addr, "-n", "2K", "-w", "100", "-q"]
    p = run_jtr("send", *common, "-c", a, "-a", b, "-r", "1", "-d", "udp-old", "-o",
                tmp_path / "old")
    check_old(p, "send", ["-a", "-r", "-d"])
    run_jtr("send", *common, "-c", "%d,%d" % (a, b), "--pairs", "1", "--desc", "udp-old",
            "-o", tmp_path / "new", check=True)
    assert params(tmp_path / "old") == params(tmp_path / "new")
    assert params(tmp_path / "new")["drain_cpu"] == b


@pytest.mark.parametrize("prog", ["null", "send"])
def test_a_description_that_reads_as_a_duration_is_refused(tmp_path, prog):
    """null and send have no duration: -d 10s is neither the old description nor
    anything else, and says so."""
    p = run_jtr(prog, "-d", "10s", "-o", tmp_path / "x")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "takes no duration" in p.stderr and "--desc TEXT" in p.stderr
    assert not (tmp_path / "x").exists()


def spawn(prog, *args, log):
    return subprocess.Popen([JTR, prog] + [str(a) for a in args], stdout=subprocess.DEVNULL,
                            stderr=open(log, "w"), text=True)


def wait_line(log, text, proc, timeout=20):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if text in open(log).read():
            return
        assert proc.poll() is None, open(log).read()
        time.sleep(0.02)
    raise AssertionError("no %r in %s" % (text, open(log).read()))


def ping_pong(tmp_path, name, pong_cpu, ping_cpus):
    addr = ["-T", "udp", "-P", "127.0.0.1:%d" % free_port()]
    log = tmp_path / ("%s-pong.log" % name)
    pong = spawn("pong", *addr, *pong_cpu, "--wait", "30", log=log)
    wait_line(log, "waiting for ping", pong)
    p = run_jtr("ping", *addr, *ping_cpus, "-n", "300", "-r", "5K", "-w", "20", "-q", "-o",
                tmp_path / name)
    assert pong.wait(30) == 0, open(log).read()
    return p, open(log).read()


def test_ping_and_pong_old_letters(tmp_path):
    cpus = sorted(os.sched_getaffinity(0))
    a, b = cpus[0], cpus[-1]
    p, pong = ping_pong(tmp_path, "old", ["-a", b], ["-A", a, "-a", b])
    check_old(p, "ping", ["-A", "-a"])
    assert pong.count(old_line("pong", "-a", "-c")) == 1, pong
    q, pong = ping_pong(tmp_path, "new", ["-c", b], ["-c", "%d,%d" % (b, a)])
    assert q.returncode == 0 and "is now" not in q.stderr + pong, q.stderr + pong
    old, new = params(tmp_path / "old"), params(tmp_path / "new")
    assert (new["send_cpu"], new["recv_cpu"]) == (a, b)
    assert old == new


def pub_sub(tmp_path, name, sub_opts, pub_opts):
    addr = ["-T", "udp", "-P", "127.0.0.1:%d" % free_port()]
    log = tmp_path / ("%s-sub.log" % name)
    sub = spawn("sub", *addr, *sub_opts, "-o", tmp_path / name, "--wait", "30", log=log)
    wait_line(log, "ready on", sub)
    p = run_jtr("pub", *addr, *pub_opts, "-n", "500", "-r", "10K", "-w", "20", "-q", "-o",
                tmp_path / (name + "-pub"))
    assert sub.wait(30) == 0, open(log).read()
    return p, open(log).read()


def test_pub_and_sub_old_letters(tmp_path):
    """sub's -f of old (a flag) is --fast where it cannot be a priority: last, or
    before another option; pub's and sub's -a is -c."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    p, sub = pub_sub(tmp_path, "old", ["-a", cpu, "-f", "-b"], ["-a", cpu])
    check_old(p, "pub", ["-a"])
    for letter in ("-a", "-f"):
        assert sub.count(old_line("sub", letter, OLD_LETTERS["sub"][letter])) == 1, sub
    q, sub = pub_sub(tmp_path, "new", ["-c", cpu, "--fast", "-b"], ["-c", cpu])
    assert q.returncode == 0 and "is now" not in q.stderr + sub, q.stderr + sub
    assert params(tmp_path / "old") == params(tmp_path / "new")
    assert params(tmp_path / "old-pub") == params(tmp_path / "new-pub")
    assert load(tmp_path / "new")["params"]["fast"] is True


@pytest.mark.parametrize("args,message", [
    (["--fifo"], "option '--fifo' needs a value"),
    (["-f", "high"], "-f high: 'high' is not an integer"),
    (["-fb"], "-f b: 'b' is not an integer"),
])
def test_sub_f_is_the_fifo_priority(tmp_path, args, message):
    """sub's -f takes a priority; only a bare -f (last, or before another option)
    is the fast flag of old."""
    p = run_jtr("sub", "-o", tmp_path / "x", *args, timeout=30)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert message in p.stderr, p.stderr
