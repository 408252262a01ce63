# SPDX-License-Identifier: GPL-2.0-only
"""The model of probes (results/probes.py) against the rest of the tree: what a
new probe must change is listed here, each place checked against the table.

A probe is: its C program (jitter/NAME.c or transports/NAME.c, naming its tool
in jtr_probe_init), a row in results/probes.py, a line in cli/main.py's
COMMANDS, its docs (docs/probes.md or docs/transports.md), and its tests. The
readers (quantity, plan, attribute, gates, advise, figures, render) take what
they need from the row."""
import os
import re

import pytest

from jtrpy.cli.main import COMMANDS
from jtrpy.drivers import plan
from jtrpy.results import probes as P
from jtrpy.results import quantity as Q

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
C_DIRS = ("jitter", "transports")


def c_tools():
    """{tool: C source} of every program that writes a result (jtr_probe_init)."""
    out = {}
    for d in C_DIRS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, d)):
            for f in files:
                if not f.endswith(".c"):
                    continue
                text = open(os.path.join(dirpath, f)).read()
                for tool in re.findall(r'jtr_probe_init\(&\w+, "(\w+)"', text):
                    out[tool] = os.path.join(dirpath, f)
    return out


def test_every_program_that_writes_a_result_has_a_row():
    tools = c_tools()
    assert tools, "no jtr_probe_init found"
    missing = sorted(set(tools) - set(P.BY_TOOL))
    assert not missing, "add a row to results/probes.py for %s" % missing


def test_every_row_of_a_program_is_a_command_and_documented():
    commands = {name for name, _, how in COMMANDS if how == "exec"}
    docs = open(os.path.join(ROOT, "docs", "probes.md")).read() + \
        open(os.path.join(ROOT, "docs", "transports.md")).read()
    for p in P.PROBES:
        if not p.program:
            continue            # an imported result's tool
        assert p.tool in commands, "%s: add it to cli/main.py's COMMANDS" % p.tool
        assert p.program == "jtr-" + p.tool
        assert ("jtr %s" % p.tool) in docs, "%s: document it" % p.tool


@pytest.mark.parametrize("p", [p for p in P.PROBES if p.jtr_run], ids=lambda p: p.tool)
def test_jtr_runs_probes_take_their_cpu_option(p):
    """The CPU option jtr run pins a probe with, the alphabet's -c (lib/jtr_opts.h:
    one for every program, no longer a column of the table), is one the program
    takes: in its optstring and its long options."""
    src = open(c_tools()[p.tool]).read()
    assert "JTR_CPUS_S" in src and "JTR_LONG(CPUS)" in src, p.tool


def test_the_readers_take_the_table():
    assert plan.PROBES == P.RUN_PROBES
    assert set(plan.MULTI_CPU) == {p.tool for p in P.PROBES if p.multi_cpu}
    assert plan.PARTNERS == {p.tool: p.partner for p in P.PROBES if p.partner}
    for p in P.PROBES:
        if p.partner:
            assert p.partner in P.BY_TOOL and P.BY_TOOL[p.partner].sides == p.sides
        for q, measures in p.quantities:
            assert Q.MEASURES[q] == measures
        assert Q.FIXED.get(p.tool, ()) == p.quantity_names
        for _, side in p.phases:
            assert side in p.sides, (p.tool, side)
        if p.typical:
            assert p.typical in p.quantity_names
        assert p.gates[0] == P.GATE_LATENCY
        assert (P.GATE_LOST in p.gates) == p.cpu_time


def test_a_latency_is_never_called_time_lost():
    """The probes whose samples overlap (round trips, messages, wake-ups) are
    latency probes: no share of time is made of them."""
    for tool in ("wake", "ping", "sub", "pub", "cyclictest"):
        assert not P.is_cpu_time(tool), tool
    for tool in ("gap", "null", "send", "oslat"):
        assert P.is_cpu_time(tool), tool
    assert not P.is_cpu_time("no such tool")
