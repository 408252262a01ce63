# SPDX-License-Identifier: GPL-2.0-only
"""results.fields: a damaged or hostile result.json is refused on load with one
line naming the file and the field; every reader after load_result can rely
on the types (the corrupt-file table of the hardening sweep, one case a row)."""
import copy
import json

import pytest

from jtrpy.errors import UsageError
from jtrpy.results.figures import result_figures
from jtrpy.results.result import load_result

from ..synthetic import make_result, make_run


def good():
    r = make_result(make_run([40, 41, 42, 9000, 40] * 50, cpu=1))
    r.update(started_at="2026-11-23T17:34:11.120Z", ended_at="2026-11-23T17:34:12.120Z",
             command=["jtr gap"], files={"outliers": "outliers.csv"},
             attribution={"causes": [{"category": "timer tick", "name": "local timer",
                                      "total_ns": 5, "share": 1.0}],
                          "worst": [{"cpu": 1, "start_ns": 10, "length_ns": 9000}]})
    return r


def put(doc, path, value):
    d = doc
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value
    return doc


# (case, where, value, what the one line says after "result.json: ")
ROWS = [
    ("runs null", ("runs",), None, "runs: expected a list of run objects, got null"),
    ("runs an object", ("runs",), {}, "runs: expected a list of run objects, got an object"),
    ("runs a string", ("runs",), "cpu1", "runs: expected a list of run objects, got a string"),
    ("a run not an object", ("runs", 0), 5, "runs[0]: expected a run object, got 5"),
    ("buckets a string", ("runs", 0, "histogram", "buckets"), "[[1, 2, 3]]",
     "runs[0].histogram.buckets: expected a list of [lo_ns, hi_ns, count] buckets, got a "
     "string"),
    ("a short bucket", ("runs", 0, "histogram", "buckets", 0), [40, 40],
     "runs[0].histogram.buckets[0]: expected a [lo_ns, hi_ns, count] bucket (times in ns, a "
     "count), got a list of 2"),
    ("a bucket of strings", ("runs", 0, "histogram", "buckets", 0), ["40", "40", "3"],
     "runs[0].histogram.buckets[0]: expected a [lo_ns, hi_ns, count] bucket (times in ns, a "
     "count), got [a string, a string, a string]"),
    ("a 10^25 bucket count", ("runs", 0, "histogram", "buckets", 0, 2), 10 ** 25,
     "not a JSON file jtr reads: an integer of 26 digits (jtr's have at most 20)"),
    ("a 10^19 bucket count", ("runs", 0, "histogram", "buckets", 0, 2), 10 ** 19,
     "runs[0].histogram.buckets[0]: expected a [lo_ns, hi_ns, count] bucket"),
    ("counts past 2^53", ("runs", 0, "histogram", "buckets", 0, 2), 2 ** 53,
     "runs[0].histogram.buckets: expected buckets whose counts add up to at most 2^53"),
    ("buckets out of order", ("runs", 0, "histogram", "buckets", 0), [9000, 9000, 1],
     "runs[0].histogram.buckets[1]: expected a bucket above the one before it"),
    ("sub_bucket_bits huge", ("runs", 0, "histogram", "sub_bucket_bits"), 10 ** 9,
     "runs[0].histogram.sub_bucket_bits: expected a whole number from 1 to 14, got "
     "1000000000"),
    ("string percentiles", ("runs", 0, "percentiles_ns", "99"), "30",
     "runs[0].percentiles_ns.99: expected a time in ns (a whole number from 0 to 2^63-1), "
     "got a string"),
    ("tool null", ("tool",), None, "tool: expected a string of at most 64 characters, got "
                                   "null"),
    ("bad started_at", ("started_at",), "Sunday",
     "started_at: expected a UTC time like 2026-11-23T17:34:11.120Z or null, got a string"),
    ("NaN as a count", ("runs", 0, "samples"), float("nan"),
     "runs[0].samples: expected a count (a whole number from 0 to 2^53) or null, got NaN"),
    ("Infinity as a time", ("runs", 0, "duration_ns"), float("inf"),
     "runs[0].duration_ns: expected a time in ns"),
    ("a negative time", ("runs", 0, "max_ns"), -1, "runs[0].max_ns: expected a time in ns"),
    ("min_ns null", ("runs", 0, "min_ns"), None, "runs[0].min_ns: expected a time in ns"),
    ("a 100k-character run name", ("runs", 0, "name"), "n" * 100000,
     "runs[0].name: expected a string of at most 256 characters or null, got a string of "
     "100000 characters"),
    ("a CPU that is no CPU", ("runs", 0, "cpu"), "1", "runs[0].cpu: expected a CPU number"),
    ("a file name not a string", ("files", "outliers"), ["/dev/zero"],
     "files.outliers: expected a string of at most 4096 characters, got a list of 1"),
    ("a cause name null", ("attribution", "causes", 0, "name"), None,
     "attribution.causes[0].name: expected a string of at most 4096 characters, got null"),
    ("a worst outlier with no start", ("attribution", "worst", 0), {"cpu": 1},
     "attribution.worst[0].start_ns: expected a time in ns"),
    ("histo_buckets huge", ("params",), {"histo_buckets": 10 ** 18},
     "params.histo_buckets: expected a whole number from 0 to 1000000 or null"),
    ("host a list", ("host",), ["vm"], "host: expected an object or null, got a list of 1"),
    ("warnings not text", ("warnings",), [1], "warnings[0]: expected a string"),
]


@pytest.mark.parametrize("case, where, value, message", ROWS, ids=[r[0] for r in ROWS])
def test_a_damaged_result_is_refused_with_the_field(tmp_path, case, where, value, message):
    doc = put(copy.deepcopy(good()), where, value)
    (tmp_path / "result.json").write_text(json.dumps(doc))
    with pytest.raises(UsageError) as e:
        load_result(str(tmp_path))
    text = str(e.value)
    assert "\n" not in text
    assert text.startswith("%s: %s" % (tmp_path / "result.json", message)), text


def test_what_loads_is_what_the_readers_need(tmp_path):
    (tmp_path / "result.json").write_text(json.dumps(good()))
    f = result_figures(load_result(str(tmp_path)))
    assert f["cpus"] == [1] and f["top_cause"]["name"] == "local timer"
    # fields the readers do without may be absent, or null where null means "none"
    doc = {"format": "jtr-result/1", "runs": [{"name": None, "cpu": None, "min_ns": 1,
                                                "max_ns": 2, "pmu": None, "outliers": None}]}
    (tmp_path / "result.json").write_text(json.dumps(doc))
    assert load_result(str(tmp_path))["runs"][0]["pmu"] is None
