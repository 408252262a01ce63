# SPDX-License-Identifier: GPL-2.0-only
"""jtr duplex's run without the real programs: stand-ins for jtr-pub and jtr-sub
(JTR_LIBEXEC) that refuse, find nobody receiving, hang or end as told. A udp
pub is started again until the peer listens, and given up on after --wait; a
refusal stops the other program and keeps nothing; tcp's pub starts without
waiting for the sub; the exit status is the first non-zero one; the programs'
command lines and the figures taken from their results. The job: the address
of each kind checked before anything starts, the two directions never one
address on one host, programs that are not built, the results folder and
summary.txt, and what a refusal leaves (nothing)."""
import os
import sys
import time

import pytest

from jtrpy.commands import duplex as command
from jtrpy.drivers import duplex
from jtrpy.errors import JtrError, UsageError
from jtrpy.render.duplex import summary
from jtrpy.system import signals

FAKE = """#!%s
import os, signal, sys, time
name = os.path.basename(sys.argv[0])[len("jtr-"):]
d = os.environ["FAKE_DIR"]
plan = os.environ.get("FAKE_" + name.upper(), "ok")
signal.signal(signal.SIGTERM, lambda *a: sys.exit(130))
with open(os.path.join(d, name + ".starts"), "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
with open(os.path.join(d, name + ".starts")) as f:
    starts = len(f.readlines())
if plan.startswith("nobody:"):
    if starts <= int(plan.split(":")[1]):
        print("jtr pub: nobody is receiving on udp 10.0.0.2:9; start 'jtr sub' there first",
              file=sys.stderr)
        sys.exit(2)
    plan = "ok"
if plan == "refuse":
    print("jtr %%s: --pack 5: refused" %% name, file=sys.stderr)
    sys.exit(2)
if plan == "after-pub":
    end = time.monotonic() + 3
    while not os.path.exists(os.path.join(d, "pub.starts")):
        if time.monotonic() > end:
            sys.exit(1)
        time.sleep(0.01)
if name == "sub":
    print("jtr sub: ready on udp 0.0.0.0:9", file=sys.stderr, flush=True)
if plan == "hang":
    time.sleep(30)
if plan.startswith("exit:"):
    time.sleep(float(plan.split(":")[1]))
    open(os.path.join(d, name + ".ended"), "w").close()
    sys.exit(int(plan.split(":")[2]))
if plan.startswith("after:"):       # a while after the other one has ended
    while not os.path.exists(os.path.join(d, plan.split(":")[1] + ".ended")):
        time.sleep(0.01)
    time.sleep(0.2)
    sys.exit(int(plan.split(":")[2]))
time.sleep(0.1)
open(os.path.join(d, name + ".ended"), "w").close()
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """The stand-ins in tmp_path/bin; set FAKE_PUB and FAKE_SUB to a plan."""
    b = tmp_path / "bin"
    b.mkdir()
    for name in ("pub", "sub"):
        p = b / ("jtr-" + name)
        p.write_text(FAKE % sys.executable)
        p.chmod(0o755)
    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setenv("JTR_LIBEXEC", str(b))
    monkeypatch.setenv("FAKE_DIR", str(state))
    signals.reset()
    yield state
    signals.reset()


def settings(*args):
    p = command.make_parser("jtr duplex")
    return command.options(command.parse(p, list(args)))


UDP = ["-T", "udp", "--pub-addr", "10.0.0.2:9", "--sub-addr", "0.0.0.0:9"]


def run(tmp_path, *args):
    out = tmp_path / "out"
    out.mkdir()
    said = []
    t0 = time.monotonic()
    doc = duplex.run_duplex(settings(*args), str(out), list(args), said.append)
    return doc, said, time.monotonic() - t0


def starts(state, name):
    p = state / (name + ".starts")
    return p.read_text().splitlines() if p.exists() else []


def test_udp_pub_is_started_again_until_the_peer_listens(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_PUB", "nobody:2")
    # the peer's pub is sending to it; the sub ends after the third pub has
    # (each a Python start-up: beside the measuring tests, make test's lane at
    # SCHED_IDLE, 0.6 s and once even 3 s were not enough for three)
    monkeypatch.setenv("FAKE_SUB", "after:pub:0")
    doc, said, _ = run(tmp_path, *UDP)
    assert doc["exit_status"] == 0 and doc["pub"]["starts"] == 3 == len(starts(fake, "pub"))
    assert len(starts(fake, "sub")) == 1
    assert said[0] == "sub ready on udp 0.0.0.0:9"
    assert [s for s in said if "nobody receiving" in s] == [
        "nobody receiving on udp 10.0.0.2:9 yet; starting the pub again every 0.1 s until "
        "--wait (10 s) is over"]
    assert os.path.exists(tmp_path / "out" / duplex.NAME)


def test_udp_pub_is_given_up_on_after_wait(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_PUB", "nobody:1000")
    monkeypatch.setenv("FAKE_SUB", "hang")
    # 1.5 s: a start of the fake pub took more than 0.3 s beside the measuring tests
    # (SCHED_IDLE on a busy CPU), so a shorter wait saw one start only
    with pytest.raises(UsageError) as e:
        run(tmp_path, *UDP, "--wait", "1500ms")
    assert str(e.value) == (
        "no peer within --wait (1.5 s): start jtr duplex -T udp on the other side with its "
        "--pub-addr and --sub-addr the other way round, or give a longer --wait (jtr pub: "
        "nobody is receiving on udp 10.0.0.2:9; start 'jtr sub' there first)")
    n = len(starts(fake, "pub"))
    assert 2 <= n <= 16, n          # again 0.1 s after each ended: 1.5 s / 0.1 s at most


@pytest.mark.parametrize("refuser", ["pub", "sub"])
def test_a_refusal_stops_the_other(tmp_path, fake, monkeypatch, refuser):
    other = "sub" if refuser == "pub" else "pub"
    monkeypatch.setenv("FAKE_" + refuser.upper(), "refuse")
    monkeypatch.setenv("FAKE_" + other.upper(), "hang")
    t0 = time.monotonic()
    with pytest.raises(UsageError) as e:
        run(tmp_path, *UDP)
    assert str(e.value) == "jtr %s: --pack 5: refused" % refuser
    assert time.monotonic() - t0 < 10          # the hanging one was stopped, not waited for
    if refuser == "sub":                        # a datagram pub waits for its sub's ready
        assert starts(fake, "pub") == []


def test_stream_kinds_start_the_pub_at_once(tmp_path, fake, monkeypatch):
    # this sub connects to the peer's pub, which waits the same way: waiting for
    # this sub's ready before this pub would wait for ever
    monkeypatch.setenv("FAKE_SUB", "after-pub")
    doc, said, _ = run(tmp_path, "-T", "tcp", "--pub-addr", "0.0.0.0:9", "--sub-addr",
                       "10.0.0.2:9")
    assert doc["exit_status"] == 0 and doc["sub"]["exit_status"] == 0
    assert said == ["sub ready on udp 0.0.0.0:9"]


@pytest.mark.parametrize("sub_plan,pub_plan,status", [
    ("exit:0.3:1", "after:sub:3", 1),
    ("after:pub:1", "exit:0:3", 3),
    ("after:pub:0", "exit:0:1", 1),
    ("ok", "ok", 0),
])
def test_the_first_non_zero_status(tmp_path, fake, monkeypatch, sub_plan, pub_plan, status):
    monkeypatch.setenv("FAKE_SUB", sub_plan)
    monkeypatch.setenv("FAKE_PUB", pub_plan)
    doc, _, _ = run(tmp_path, *UDP)
    assert doc["exit_status"] == status
    for side, plan in (("sub", sub_plan), ("pub", pub_plan)):
        assert doc[side]["exit_status"] == (int(plan.split(":")[-1]) if ":" in plan else 0)
    # no result from the stand-ins: the figures are null, the summary says so
    assert doc["pub"]["sent"] is None and doc["sub"]["received"] is None
    assert summary(doc)[1].startswith("  sent      nothing")


def test_command_lines():
    o = settings(*UDP, "-r", "50K", "-n", "1M", "-m", "100", "-w", "10", "--ticks", "50",
                 "--latency-rate", "1K", "--pack", "4", "--no-timestamps", "-c", "1,0",
                 "--recv", "epoll", "--wait", "2s", "--timeout", "1s", "--stats-every", "0",
                 "--pub", "--drop-every 7", "--sub", "--latency-file", "--", "--rcvbuf", "1M")
    both = ["-T", "udp", "--wait", "2s", "--timeout", "1s", "--stats-every", "0"]
    assert duplex.pub_args(o, "/r") == [
        "-T", "udp", "-P", "10.0.0.2:9"] + both[2:] + [
        "-o", "/r/pub", "-r", "50000", "-n", "1000000", "-m", "100", "-w", "10",
        "--ticks", "50", "--latency-rate", "1000", "--pack", "4", "-c", "0",
        "--no-timestamps", "--rcvbuf", "1M", "--drop-every", "7"]
    assert duplex.sub_args(o, "/r") == [
        "-T", "udp", "-P", "0.0.0.0:9"] + both[2:] + [
        "-o", "/r/sub", "--recv", "epoll", "-c", "1", "--rcvbuf", "1M", "--latency-file"]
    o = settings(*UDP, "-r", "max", "-d", "1s")
    assert duplex.pub_args(o, "/r")[-4:] == ["-r", "max", "-d", "1s"]
    assert "-q" not in duplex.sub_args(o, "/r")       # it would hide "ready on"


class Ended:
    rc, attempts = 0, 1


def test_figures_from_the_programs_results():
    pub = {"partial": False, "params": {"ticks": None},
           "transport": {"peer": "ok", "sent": 1000, "sent_total": 1100, "issued": 1100,
                         "rate_hz": 999.5, "duration_ns": 10 ** 9, "late_sends": 11}}
    f = duplex.pub_figures(pub, Ended())
    assert (f["sent"], f["warmup_sent"], f["issued"], f["late_pct"]) == (1000, 100, 1100, 1.0)
    pub["params"]["ticks"] = 10                     # late_sends counts ticks then
    assert duplex.pub_figures(pub, Ended())["late_pct"] is None
    sub = {"partial": True, "transport": {"peer": "gone", "measured": 990, "received": 1090,
                                          "warmup_received": 100, "lost": 10},
           "runs": [{"name": "latency_from_send", "samples": 990, "max_ns": 9000,
                     "min_ns": 400, "mean_ns": 1234.5,
                     "percentiles_ns": {"50": 1000, "99": 5000, "99.9": 8000}}]}
    f = duplex.sub_figures(sub, Ended())
    assert (f["received"], f["warmup_received"], f["lost"], f["peer"]) == (990, 100, 10, "gone")
    assert f["latency_ns"] == {"from_send": {"p50_ns": 1000, "p99_ns": 5000, "p99.9_ns": 8000,
                                             "max_ns": 9000, "samples": 990, "min_ns": 400,
                                             "mean_ns": 1234.5}}
    assert duplex.sub_figures(None, Ended())["received"] is None


# --- the addresses ---------------------------------------------------------------

@pytest.mark.parametrize("kind,pub,sub", [
    ("udp", "[::1]:5000", "[::]:5001"),
    ("tcp", "0.0.0.0:5000", "10.0.0.2:5000"),          # the peer's port may be the same
    ("udp", "192.0.2.1:5000", "0.0.0.0:5000"),         # not this host: no loop
    ("mcast", "239.255.0.1:5000", "239.255.0.2:5000"),
    ("mcast", "239.255.0.1:5000", "239.255.0.1:5001"),
    ("unix", "/tmp/a.sock", "/tmp/b.sock"),
    ("shm", "a", "b"),
])
def test_good_addresses(kind, pub, sub):
    assert duplex.check_addresses(settings("-T", kind, "--pub-addr", pub, "--sub-addr",
                                           sub)) is None


@pytest.mark.parametrize("args,says", [
    (["-T", "udp", "--pub-addr", "10.0.0.2", "--sub-addr", "0.0.0.0:1"],
     "--pub-addr 10.0.0.2: give A.B.C.D:PORT or [IPV6]:PORT"),
    (["-T", "udp", "--pub-addr", "10.0.0.2:0", "--sub-addr", "0.0.0.0:1"], "a port is 1 to"),
    (["-T", "udp", "--pub-addr", "10.0.0.2:1", "--sub-addr", "host:1"],
     "--sub-addr host:1: 'host' is not an IPv4 address (names are not looked up)"),
    (["-T", "tcp", "--pub-addr", "::1:5", "--sub-addr", "10.0.0.2:1"], "in brackets"),
    (["-T", "mcast", "--pub-addr", "10.0.0.2:5", "--sub-addr", "239.255.0.1:5"],
     "--pub-addr 10.0.0.2:5: not an IPv4 multicast group"),
    (["-T", "unix", "--pub-addr", "/" + "x" * 120, "--sub-addr", "/tmp/b"], "1-107 characters"),
    (["-T", "shm", "--pub-addr", "a/b", "--sub-addr", "c"], "--pub-addr a/b: not a segment name"),
    # one address both ways on this host
    (["-T", "udp", "--pub-addr", "127.0.0.1:9", "--sub-addr", "0.0.0.0:9"],
     "--pub-addr 127.0.0.1:9 and --sub-addr 0.0.0.0:9: this side's pub would send to its own "
     "sub"),
    (["-T", "udp", "--pub-addr", "127.0.0.1:9", "--sub-addr", "127.0.0.1:9"], "its own sub"),
    (["-T", "tcp", "--pub-addr", "0.0.0.0:9", "--sub-addr", "127.0.0.1:9"],
     "this side's sub would connect to its own pub"),
    (["-T", "tcp", "--pub-addr", "127.0.0.1:9", "--sub-addr", "127.0.0.1:9"], "its own pub"),
    (["-T", "shm", "--pub-addr", "r", "--sub-addr", "r"], "both directions in one ring"),
    (["-T", "mcast", "--pub-addr", "239.255.0.1:9", "--sub-addr", "239.255.0.1:9"],
     "one group and port"),
    (["-T", "unix-dgram", "--pub-addr", "/tmp/x.sock", "--sub-addr", "/tmp/../tmp/x.sock"],
     "one socket path"),
])
def test_bad_addresses(args, says):
    with pytest.raises(UsageError) as e:
        duplex.check_addresses(settings(*args))
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_is_local():
    assert duplex.is_local("127.0.0.1") and duplex.is_local("0.0.0.0")
    assert not duplex.is_local("192.0.2.1")         # TEST-NET-1: nobody's


# --- the job ---------------------------------------------------------------------

def job(*args):
    return duplex.duplex_job(settings(*args), list(args), lambda text: None)


def test_the_addresses_are_checked_before_anything_starts(tmp_path, fake, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="this side's pub would send to its own sub"):
        job("-T", "udp", "--pub-addr", "127.0.0.1:9", "--sub-addr", "0.0.0.0:9")
    assert not os.path.exists("results") and starts(fake, "sub") == []


def test_programs_not_built(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JTR_LIBEXEC", str(tmp_path))
    with pytest.raises(JtrError, match="jtr-pub is not built"):
        job(*UDP)
    assert not os.path.exists("results")


def test_the_results_folder_and_its_summary(tmp_path, fake, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = job(*UDP)
    assert out.outdir.startswith(os.path.join("results", "")) and \
        out.outdir.endswith("-duplex")
    assert out.doc["exit_status"] == 0 and out.doc["command"] == ["jtr duplex"] + UDP
    assert out.lines == summary(out.doc)
    assert out.lines[0] == "jtr duplex: udp, sending 10.0.0.2:9, receiving on 0.0.0.0:9"
    with open(os.path.join(out.outdir, "summary.txt")) as f:
        assert f.read() == "\n".join(out.lines) + "\n"
    assert os.path.exists(os.path.join(out.outdir, duplex.NAME))


def test_a_refusal_keeps_nothing(tmp_path, fake, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAKE_PUB", "refuse")
    # the sub runs until it is stopped: one that ended on its own before the
    # pub refused (a slow start on a busy machine) would make a run worth keeping
    monkeypatch.setenv("FAKE_SUB", "hang")
    with pytest.raises(UsageError, match="jtr pub: --pack 5: refused"):
        job(*UDP)
    assert not os.path.exists("results")        # made for the run: gone with it
    os.mkdir("mine")
    with open(os.path.join("mine", "notes.txt"), "w") as f:
        f.write("kept")
    with pytest.raises(UsageError):
        job(*UDP, "-o", "mine")
    assert os.listdir("mine") == ["notes.txt"]  # what the run wrote is gone, not the rest
    with pytest.raises(UsageError):
        job(*UDP, "-o", "new")
    assert not os.path.exists("new")
