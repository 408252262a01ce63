# SPDX-License-Identifier: GPL-2.0-only
"""jtr maxrate's options: the lists of --sizes and --rates in the value
grammar, what cannot go together, and the settings they make."""
import pytest

from jtrpy.commands import maxrate
from jtrpy.errors import UsageError


def options(*args):
    return maxrate.options(maxrate.make_parser("jtr maxrate").parse_args(list(args)))


def test_defaults():
    o = options()
    assert o["sizes"] == [64] and o["len"] == 64 and o["rates"] is None
    assert (o["from"], o["to"]) == (10000, 10 ** 8)
    assert options("-m", "100")["sizes"] == [100]


def test_lists_use_the_count_grammar():
    assert options("--sizes", "32,64,1500")["sizes"] == [32, 64, 1500]
    assert options("--sizes", "25,64")["sizes"] == [25, 64]      # the seeds' 25-byte row
    assert options("--sizes", "1K")["sizes"] == [1000]          # K is x1000, as for -m
    assert options("--rates", "10K,2M,500")["rates"] == [10000, 2000000, 500]


@pytest.mark.parametrize("args,says", [
    (["--sizes", "64,x"], "--sizes 64,x: 'x' is not a count"),
    (["--sizes", "16"], "--sizes 16: '16' is out of range; expected 24.."),
    (["--sizes", "64,,128"], "comma-separated list"),
    (["--sizes", ","], "comma-separated list"),
    (["--rates", "0,5K"], "--rates 0,5K: '0' is out of range"),
    (["--rates", "1e6"], "not a count"),
    (["--rates", ",".join(["1K"] * 33)], "at most 32 values"),
    (["-m", "64", "--sizes", "64,128"], "-m 64 and --sizes"),
    (["--rates", "1K", "--from", "2K"], "--from with --rates"),
    (["--rates", "1K", "--to", "2K"], "--to with --rates"),
    (["--from", "2M", "--to", "1M"], "above --to"),
])
def test_bad_input(args, says):
    with pytest.raises(UsageError) as e:
        options(*args)
    assert says in str(e.value) and "\n" not in str(e.value)
