# SPDX-License-Identifier: GPL-2.0-only
"""system.schema: the field check every document jtr reads goes through, and
its one-line errors (the file, the field, what was expected, what was there)."""
import pytest

from jtrpy.errors import UsageError
from jtrpy.system.schema import (
    COUNT,
    NS,
    Bool,
    Int,
    List,
    Num,
    Obj,
    Opt,
    Str,
    Time,
    Tuple,
    check,
    describe,
    utc_time,
)

DOC = Obj({
    "runs": List(Obj({
        "name": Opt(Str(8)), "n": COUNT, "ok": Bool(),
        "h": Obj({"buckets": List(Tuple(NS, NS, COUNT), "a list of buckets")},
                 required=("buckets",)),
    }), "a list of runs"),
    "at": Time(), "x": Num(0, 1), "m": Obj(values=Int(0, 9)),
})


def error(doc):
    with pytest.raises(UsageError) as e:
        check(doc, DOC, "r/result.json")
    assert "\n" not in str(e.value)
    return str(e.value)


def test_good_documents_pass():
    check({"runs": [{"name": None, "n": 3, "ok": True, "h": {"buckets": [[1, 2, 3]]}}],
           "at": "2026-11-23T17:34:11.120Z", "x": 0.5, "m": {"a": 9}, "other": object()},
          DOC, "r")
    check({}, DOC, "r")        # absent fields are the readers' business


@pytest.mark.parametrize("doc, message", [
    ({"runs": None}, "r/result.json: runs: expected a list of runs, got null"),
    ({"runs": {}}, "runs: expected a list of runs, got an object"),
    ({"runs": "abc"}, "runs: expected a list of runs, got a string"),
    ({"runs": [{"h": {"buckets": "x"}}]},
     "runs[0].h.buckets: expected a list of buckets, got a string"),
    ({"runs": [{"h": {"buckets": [[1, 2]]}}]},
     "runs[0].h.buckets[0]: expected a list of 3, got a list of 2"),
    ({"runs": [{"h": {"buckets": [[1, "2", 3]]}}]},
     "runs[0].h.buckets[0]: expected a list of 3, got [1, a string, 3]"),
    ({"runs": [{"h": {}}]}, "runs[0].h.buckets: expected a list of buckets, got nothing"),
    ({"runs": [{}, {"n": -1}]}, "runs[1].n: expected a count (a whole number from 0 to "
                                "2^53), got -1"),
    ({"runs": [{"n": 10 ** 25}]}, "runs[0].n: expected a count"),
    ({"runs": [{"n": True}]}, "runs[0].n: expected a count (a whole number from 0 to 2^53), "
                              "got true"),
    ({"runs": [{"n": 1.0}]}, "got 1.0"),
    ({"runs": [{"name": "x" * 100000}]},
     "runs[0].name: expected a string of at most 8 characters or null, got a string of "
     "100000 characters"),
    ({"at": "yesterday"}, "at: expected a UTC time like 2026-11-23T17:34:11.120Z, got a string"),
    ({"x": float("nan")}, "x: expected a number from 0 to 1, got NaN"),
    ({"x": float("inf")}, "got Infinity"),
    ({"x": 2}, "x: expected a number from 0 to 1, got 2"),
    ({"m": {"k": "v"}}, "m.k: expected a whole number from 0 to 9, got a string"),
    ({"runs": [{"ok": 1}]}, "runs[0].ok: expected true or false, got 1"),
])
def test_errors_name_the_field(doc, message):
    assert message in error(doc)


def test_descriptions_never_quote_text():
    assert describe("secret text") == "a string"
    assert describe(10 ** 30) == "an integer of 31 digits"
    assert describe([]) == "an empty list" and describe(None) == "null"
    assert utc_time("2026-11-23T17:34:11Z").year == 2026 and utc_time(5) is None
