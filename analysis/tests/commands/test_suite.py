# SPDX-License-Identifier: GPL-2.0-only
"""jtr suite's options in-process: what they become for drivers/suite.py (the
run itself is a stand-in here; drivers/test_suite.py runs suites), and the
words it refuses."""
import pytest

from jtrpy.cli.main import main as jtr
from jtrpy.commands import suite as command
from jtrpy.vocab import TRANSPORTS


@pytest.fixture
def ran(monkeypatch):
    got = []
    monkeypatch.setattr(command, "suite_job", lambda o, cmd: got.append((o, cmd)) or 0)
    return got


def test_options_become_the_drivers(ran):
    assert jtr(["suite", "--quick", "-n", "500000", "-r", "4", "--cpus", "0", "-d", "2s",
                "--only", "null,send-udp", "--transports", "udp,tcp", "-o", "s"]) == 0
    ((o, cmd),) = ran
    assert o == {"quick": True, "out": "s", "cpus": [0], "samples": 500000, "runs": 4,
                 "gap_ns": 2 * 10**9, "transports": ["udp", "tcp"],
                 "only": ["null", "send-udp"]}
    assert cmd == ["jtr suite", "--quick", "-n", "500000", "-r", "4", "--cpus", "0", "-d",
                   "2s", "--only", "null,send-udp", "--transports", "udp,tcp", "-o", "s"]


def test_defaults(ran):
    assert jtr(["suite"]) == 0
    assert ran[0][0] == {"quick": False, "out": None, "cpus": None, "samples": None,
                         "runs": None, "gap_ns": None, "transports": list(TRANSPORTS),
                         "only": None}


@pytest.mark.parametrize("args,word", [
    (["--only", "null,nope"], "nope"), (["--only", "send-nope"], "send-nope"),
    (["--transports", "pigeon"], "pigeon"), (["-r", "51"], "51"), (["-d", "1ms"], "1ms"),
])
def test_words_it_refuses(ran, capsys, args, word):
    assert jtr(["suite"] + args) == 2
    err = capsys.readouterr().err
    assert err.startswith("jtr suite: ") and word in err and err.count("\n") == 1
    assert ran == []
