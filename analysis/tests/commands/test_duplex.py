# SPDX-License-Identifier: GPL-2.0-only
"""jtr duplex's options: the defaults left to the programs, the value grammar,
both addresses asked for, what goes together, and the words after -- for both
programs (the addresses themselves are the job's: drivers/test_duplex.py)."""
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


def test_the_addresses_are_left_to_the_job():
    # checked by drivers/duplex.py's job (this host's addresses, one way and the other)
    o = options("-T", "udp", "--pub-addr", "host:1", "--sub-addr", "x")
    assert (o["pub_addr"], o["sub_addr"]) == ("host:1", "x")


@pytest.mark.parametrize("args,says", [
    (["-T", "udp"], "give --pub-addr and --sub-addr"),
    (["-T", "tcp", "--pub-addr", "0.0.0.0:1"], "give --pub-addr and --sub-addr"),
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
