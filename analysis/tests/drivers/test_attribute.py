# SPDX-License-Identifier: GPL-2.0-only
"""drivers.attribute: the keywords a result gives the attribution."""
from jtrpy.drivers.attribute import ends_of


def test_a_one_sided_probe_names_its_program_on_each_cpu():
    """gap's thread is jtr-gap: a busy loop pinned beside it, switched out as often
    as the probe, is never taken for the probe."""
    r = {"tool": "gap", "runs": [{"cpu": 1}, {"cpu": 3}]}
    assert ends_of(r) == {"programs": {1: "jtr-gap", 3: "jtr-gap"}}
    assert ends_of({"tool": "oslat", "runs": [{"cpu": 1}]}) == {}


def test_two_ends_name_both_programs():
    r = {"tool": "ping", "sides": {"ping": [1], "pong": [0]}, "runs": []}
    assert ends_of(r) == {"sides": {"ping": [1], "pong": [0]},
                          "programs": {1: "jtr-ping", 0: "jtr-pong"}}
