# SPDX-License-Identifier: GPL-2.0-only
"""jtr duplex's options and summary: the address of each kind checked before
anything starts, the two directions never one address on one host, what goes
together, the words after -- for both programs, and the summary's lines."""
import pytest

from jtrpy.commands import duplex
from jtrpy.errors import UsageError

UDP = ["-T", "udp", "--pub-addr", "10.0.0.2:17391", "--sub-addr", "0.0.0.0:17392"]


def options(*args):
    p = duplex.make_parser("jtr duplex")
    return duplex.options(duplex.parse(p, list(args)))


def test_defaults_are_the_programs():
    o = options(*UDP)
    assert o["kind"] == "udp" and o["rate"] == 10000
    assert o["pub_addr"] == "10.0.0.2:17391" and o["sub_addr"] == "0.0.0.0:17392"
    # unset: the program's own default, not a copy of it
    for key in ("count", "duration_ns", "len", "warmup", "ticks", "latency_rate", "pack",
                "recv", "pub_cpu", "sub_cpu", "wait_ns", "timeout_ns", "stats_every_ns"):
        assert o[key] is None, key
    assert o["timestamps"] and o["delay_ns"] == 0 and o["both"] == o["pub"] == o["sub"] == []


def test_values_use_the_grammar():
    o = options(*UDP, "-r", "50K", "-d", "2.5s", "-m", "1K", "--ticks", "100",
                "--latency-rate", "1K", "--wait", "500ms", "-c", "1,0", "-b")
    assert (o["rate"], o["duration_ns"], o["len"], o["ticks"]) == (50000, 2500000000, 1000, 100)
    assert o["latency_rate"] == 1000 and o["wait_ns"] == 500000000
    assert (o["pub_cpu"], o["sub_cpu"], o["recv"]) == (0, 1, "busy")
    assert options(*UDP, "-r", "max")["rate"] == "max"


def test_after_dashes_both_and_pub_sub_each():
    o = options(*UDP, "--pub", "--drop-every 7", "--sub", "--latency-file", "--pub", "-l 1ms",
                "--", "--rcvbuf", "16M", "-q")
    assert o["pub"] == ["--drop-every", "7", "-l", "1ms"] and o["sub"] == ["--latency-file"]
    assert o["both"] == ["--rcvbuf", "16M", "-q"] and not o["quiet"]


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
    o = options("-T", kind, "--pub-addr", pub, "--sub-addr", sub)
    assert (o["pub_addr"], o["sub_addr"]) == (pub, sub)


@pytest.mark.parametrize("args,says", [
    (["-T", "udp"], "give --pub-addr and --sub-addr"),
    (["-T", "tcp", "--pub-addr", "0.0.0.0:1"], "give --pub-addr and --sub-addr"),
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
    # what goes together
    (UDP + ["-n", "10", "-d", "1s"], "-d cannot go with -n"),
    (UDP + ["-b", "--recv", "epoll"], "-b and --recv epoll"),
    (["-T", "tcp", "--pub-addr", "0.0.0.0:1", "--sub-addr", "10.0.0.2:2", "--delay", "1s"],
     "--delay with -T tcp"),
    # values
    (UDP + ["-r", "0"], "-r 0: '0' is out of range"),
    (UDP + ["-r", "fast"], "-r fast: 'fast' is not a count"),
    (UDP + ["-m", "16"], "-m 16"),
    (UDP + ["--pack", "2000"], "--pack 2000"),
    (UDP + ["-A", "x"], "-A x"),
    (UDP + ["--wait", "0"], "--wait 0"),
    (UDP + ["--pub", "'open"], "--pub 'open: No closing quotation"),
    (UDP + ["--recv", "spin"], "--recv spin: use blocking, busy or epoll"),
    (["-T", "pigeon"], "-T pigeon: use shm, tcp, udp"),
])
def test_bad_input(args, says):
    with pytest.raises(UsageError) as e:
        options(*args)
    assert says in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_is_local():
    assert duplex.is_local("127.0.0.1") and duplex.is_local("0.0.0.0")
    assert not duplex.is_local("192.0.2.1")         # TEST-NET-1: nobody's


def doc(**over):
    """A duplex.json document as drivers/duplex.py writes it."""
    d = {"params": {"transport": "udp", "pub_addr": "10.0.0.2:17391",
                    "sub_addr": "0.0.0.0:17392", "rate_hz": 10000},
         "pub": {"exit_status": 0, "partial": False, "peer": "ok", "sent": 100000,
                 "warmup_sent": 1000, "rate_hz": 10000.4, "late_pct": 0.25},
         "sub": {"exit_status": 0, "partial": False, "peer": "ok", "received": 99990,
                 "warmup_received": 1000, "lost": 10, "rate_hz": 9999.1,
                 "latency_ns": {"from_send": {"p50_ns": 12300, "p99_ns": 45600,
                                              "max_ns": 1200000},
                                "from_intended": {"p50_ns": 12500, "p99_ns": 51000,
                                                  "max_ns": 1300000}}}}
    for k, v in over.items():
        d[k].update(v)
    return d


def test_summary():
    assert duplex.summary(doc()) == [
        "jtr duplex: udp, sending 10.0.0.2:17391, receiving on 0.0.0.0:17392",
        "  sent      100,000 at 10,000/s (+1,000 warm-up), achieved 10,000/s, 0.2% late",
        "  received  99,990 (+1,000 warm-up) at 9,999/s, lost 10, latency p50 12.3 us p99 "
        "45.6 us max 1.20 ms",
        "            from the intended send time: p50 12.5 us p99 51.0 us max 1.30 ms"]


def test_summary_says_who_listens_and_what_went_wrong():
    d = doc(params={"transport": "tcp", "pub_addr": "0.0.0.0:1", "sub_addr": "10.0.0.2:2",
                    "rate_hz": None},
            pub={"exit_status": 1, "peer": "gone", "partial": True, "late_pct": None},
            sub={"latency_ns": None, "exit_status": 130, "partial": True})
    lines = duplex.summary(d)
    assert lines[0] == ("jtr duplex: tcp, publishing on 0.0.0.0:1 (listening), receiving "
                        "from 10.0.0.2:2")
    assert lines[1] == ("  sent      100,000 at max rate (+1,000 warm-up), achieved 10,000/s, "
                        "exit 1, peer gone, partial")
    assert lines[2].endswith("lost 10, no latency (unstamped messages, or jtr sub --fast), "
                             "exit 130, partial")
    assert len(lines) == 3
    shm = doc(params={"transport": "shm", "pub_addr": "a", "sub_addr": "b"})
    assert duplex.summary(shm)[0] == "jtr duplex: shm, publishing into ring a, reading ring b"


def test_summary_of_programs_that_wrote_nothing():
    d = doc(pub={"sent": None, "exit_status": None}, sub={"received": None, "exit_status": 2})
    assert duplex.summary(d)[1:] == ["  sent      nothing", "  received  nothing, exit 2"]
