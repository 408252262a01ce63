# SPDX-License-Identifier: GPL-2.0-only
"""jtr run's plan: the CPUs it fills in, the other end's options (the transport
group and the FIFO priority), and the refusals."""
import pytest

from jtrpy.drivers.plan import fifo_args, make_plan, transport_args
from jtrpy.errors import UsageError


def test_the_other_end_gets_the_transport_and_the_fifo_priority():
    p = make_plan("ping", ["-T", "udp", "-1", "-b", "-f", "3", "-r", "10K"], [1], 0)
    assert p.partner == "pong" and p.sides == {"ping": [1], "pong": [0]}
    assert p.partner_args == ["--transport", "udp", "--busy", "-c", "0", "--fifo", "3"]
    p = make_plan("pub", ["-T", "shm", "--fifo=7"], [1], 0)
    assert p.partner == "sub" and p.sides == {"pub": [1], "sub": [0]}
    assert p.partner_args[-2:] == ["--fifo", "7"]
    # the subscriber checks every payload (a run whose messages changed is invalid)
    assert "--verify" in p.partner_args
    # without -f both ends are normal tasks, as the probe is
    p = make_plan("ping", ["-T", "udp", "-1"], [1], 0)
    assert "--fifo" not in p.partner_args


def test_options_found_as_users_write_them():
    assert fifo_args(["-f5"]) == ["--fifo", "5"]
    assert fifo_args(["--fifo", "9", "--", "-f", "1"]) == ["--fifo", "9"]
    assert fifo_args(["-T", "udp"]) == []
    assert transport_args(["-P", "127.0.0.1:9", "--nagle", "-n", "5"]) == \
        ["--addr", "127.0.0.1:9", "--nagle"]


def test_refusals():
    with pytest.raises(UsageError, match="no such probe"):
        make_plan("nope", [])
    with pytest.raises(UsageError, match="has no other end"):
        make_plan("gap", [], [1], 0)
    with pytest.raises(UsageError, match="measures one CPU"):
        make_plan("ping", [], [0, 1])
    # the other end would take one stream: pub said "every subscriber went away"
    for probe, other in (("ping", "pong"), ("pub", "sub")):
        for args in (["--streams", "2"], ["--streams=2"]):
            with pytest.raises(UsageError, match="^--streams: jtr run measures one stream of "
                               "%s; for several, run jtr %s --streams N and jtr %s "
                               "--streams N yourself" % (probe, other, probe)):
                make_plan(probe, args)


def test_every_side_takes_c(monkeypatch):
    """Each program is given its CPUs with the alphabet's -c: pong and sub their
    one, send -c CPU,DRAIN, ping -c RECV,SEND (its sending thread beside the
    receiving one unless told)."""
    monkeypatch.setattr("jtrpy.drivers.plan.online_cpus", lambda: [0, 1, 2, 3])
    p = make_plan("send", ["-T", "udp"], [1])
    assert p.args == ["-T", "udp", "-c", "1,0"] and p.sides == {"send": [1], "drain": [0]}
    p = make_plan("ping", ["-T", "udp"], [2], 3)
    assert p.args == ["-T", "udp", "-c", "2,2"] and p.partner_args[-2:] == ["-c", "3"]
    assert p.sides == {"ping": [2], "pong": [3]}
    p = make_plan("ping", ["-c", "2,1"], None, 3)
    assert p.args == ["-c", "2,1"] and p.sides == {"ping": [1, 2], "pong": [3]}
    p = make_plan("pub", ["--cpu", "2"], None, 0)
    assert p.args == ["--cpu", "2"] and p.partner_args[-2:] == ["-c", "0"]
    assert p.sides == {"pub": [2], "sub": [0]}
    p = make_plan("null", [], [3])
    assert p.args == ["-c", "3"] and p.sides == {"null": [3]}


def test_the_old_letters_are_read_as_the_programs_read_them(monkeypatch):
    """ping's -a and -A, send's -a, pub's -a: still the CPUs they were (the program
    says they are old); jtr run places the sides by them."""
    monkeypatch.setattr("jtrpy.drivers.plan.online_cpus", lambda: [0, 1, 2, 3])
    p = make_plan("ping", ["-a", "2", "-A", "1"], None, 3)
    assert p.args == ["-a", "2", "-A", "1"] and p.sides == {"ping": [1, 2], "pong": [3]}
    p = make_plan("send", ["-a", "0"], [1])
    assert p.args == ["-a", "0", "-c", "1,0"] and p.sides == {"send": [1], "drain": [0]}
    p = make_plan("pub", ["-a", "2"], None, 0)
    assert p.args == ["-a", "2"] and p.sides == {"pub": [2], "sub": [0]}
    with pytest.raises(UsageError, match="-c 1 and -a 2 both say where pub runs"):
        make_plan("pub", ["-a", "2"], [1], 0)
