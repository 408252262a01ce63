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
