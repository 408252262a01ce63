# SPDX-License-Identifier: GPL-2.0-only
"""The front end's subcommands in the one option alphabet (cli/parser.py
ALPHABET, the mirror of lib/jtr_opts.h): a letter of the alphabet is taken only
for its one option, under its one long name; the old letters (OLD_LETTERS) of
the front end's own commands still work, with a line on stderr."""
import importlib

import pytest

from jtrpy.cli.main import COMMANDS
from jtrpy.cli.parser import ALPHABET, OLD_LETTERS

LONG = {short: long for short, long, _, _ in ALPHABET}
MODULES = sorted({where for _, _, where in COMMANDS if where not in (None, "exec")})


@pytest.mark.parametrize("module", MODULES)
def test_each_letter_has_its_one_long_name(module):
    parser = importlib.import_module("jtrpy.commands." + module).make_parser("jtr x")
    for action in parser._actions:
        shorts = [o for o in action.option_strings if len(o) == 2 and o != "-h"]
        longs = [o for o in action.option_strings if o.startswith("--")]
        for s in shorts:
            if s not in LONG or action.help == "==SUPPRESS==":
                continue
            assert longs and longs[0] == LONG[s], (module, s, action.option_strings)
        for name in longs:
            if name in LONG.values():
                letter = [k for k, v in LONG.items() if v == name][0]
                assert letter in shorts or not shorts, (module, name, shorts)


def test_suite_takes_its_old_r(capsys):
    from jtrpy.commands import suite
    p = suite.make_parser("jtr suite")
    opts = p.parse_args(["-r", "4"])
    assert opts.runs == 4
    assert capsys.readouterr().err == ("jtr suite: -r is now --runs (the runs); -r goes in the "
                                       "next release\n")
    assert p.parse_args(["--runs", "4"]).runs == 4
    assert "-r" in OLD_LETTERS["suite"]
