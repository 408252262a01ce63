# SPDX-License-Identifier: GPL-2.0-only
"""formats.imports: oslat and cyclictest --json files and HdrHistogram logs are
read through the one loader (bounded, regular files only) and their fields
checked; what comes out is a result jtr's readers load."""
import copy
import json
import os

import pytest

from jtrpy.errors import UsageError
from jtrpy.formats import hdrlog
from jtrpy.formats.imports import import_file

CYC = {"file_version": 1, "cmdline:": "cyclictest -N -t 2 -a 0-1 -h 100000 --json=x",
       "rt_test_version:": "2.40", "start_time": "Sun, 22 Nov 2026 07:42:21 +0000",
       "end_time": "Sun, 22 Nov 2026 07:42:24 +0000", "return_code": 0,
       "sysinfo": {"sysname": "Linux", "nodename": "elsewhere", "release": "5.10",
                   "version": "#1", "machine": "x86_64", "realtime": 1},
       "num_threads": 1, "resolution_in_ns": 1,
       "thread": {"0": {"histogram": {"1500": 3, "2100": 1}, "cycles": 4, "min": 1500,
                        "max": 2100, "avg": 1650.0, "cpu": 0, "node": 0}}}
OSLAT = {"file_version": 1, "cmdline:": "oslat -D 1", "start_time":
         "Sun, 22 Nov 2026 07:42:21 +0000", "end_time": "Sun, 22 Nov 2026 07:42:22 +0000",
         "thread": {"0": {"cpu": 1, "freq": 2000, "min": 1, "avg": 1.0, "max": 1,
                          "duration": 1.0, "histogram": {"1": 10}}}}


def put(doc, path, value):
    doc = copy.deepcopy(doc)
    d = doc
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value
    return doc


@pytest.mark.parametrize("doc, message", [
    (put(OSLAT, ("end_time",), 5), "end_time: expected a string of at most 256 characters "
                                   "or null, got 5"),
    (put(CYC, ("sysinfo", "nodename"), ["vm"]), "sysinfo.nodename: expected a string"),
    (put(CYC, ("thread", "0", "min"), float("nan")), "thread.0.min: expected a number from "
                                                      "0 to 1000000000000, got NaN"),
    (put(OSLAT, ("thread", "0", "duration"), float("inf")), "thread.0.duration: expected"),
    (put(CYC, ("thread", "0", "histogram"), {"1500": 10 ** 19}),
     "a histogram entry is not \"us\": count"),
    (put(CYC, ("thread", "0", "histogram"), {"1500": 2 ** 52, "2100": 2 ** 52 + 1}),
     "the histogram's counts add up to more than 2^53"),
    (put(CYC, ("thread", "0", "cycles"), "9" * 30), "thread 0 has no cycles count"),
    (put(OSLAT, ("thread", "0", "histogram"), "x"), "thread.0.histogram: expected an object"),
])
def test_a_damaged_import_names_the_field(tmp_path, doc, message):
    p = tmp_path / "in.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(UsageError) as e:
        import_file(str(p))
    assert str(e.value).startswith("%s: %s" % (p, message)), str(e.value)


def test_odd_values_the_tools_may_write_are_kept_sane(tmp_path):
    p = tmp_path / "in.json"
    p.write_text(json.dumps(put(put(CYC, ("thread", "0", "cpu"), 10 ** 9), ("start_time",),
                                "Sun, 22 Nov 99999 07:42:21 +0000")))
    with pytest.raises(UsageError, match="no start_time the importer can read"):
        import_file(str(p))
    p.write_text(json.dumps(put(CYC, ("thread", "0", "cpu"), 10 ** 9)))
    result, _ = import_file(str(p))
    assert result["runs"][0]["cpu"] is None and result["runs"][0]["name"] == "thread 0"


def test_what_is_not_a_file_is_refused_before_reading(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    for path, hlog, message in ((str(tmp_path / "fifo"), False, "a FIFO, not a regular file"),
                                (str(tmp_path / "fifo"), True, "a FIFO, not a regular file"),
                                ("/dev/zero", True, "a character device"),
                                (str(tmp_path), False, "is a folder, not a file")):
        with pytest.raises(UsageError, match=message):
            import_file(path, hlog=hlog)


def test_an_hlog_whose_numbers_are_not_numbers(tmp_path):
    good = hdrlog.encode([(30, 5)], 2)
    p = tmp_path / "x.hlog"
    for body, message in (("Tag=a,nan,1.0,0.1,%s" % good, "line 1: the times are not finite"),
                          ("Tag=%s,0,1.0,0.1,%s" % ("t" * 100000, good),
                           "line 1: a tag of 100000")):
        p.write_text(body + "\n")
        with pytest.raises(UsageError) as e:
            import_file(str(p), hlog=True)
        assert str(e.value).startswith("%s: not an HdrHistogram interval log this can read: %s"
                                       % (p, message))
    p.write_bytes(b"#[StartTime: 1 (s)]\n\xff\xfe\n")
    with pytest.raises(UsageError, match="not a text file"):
        import_file(str(p), hlog=True)
