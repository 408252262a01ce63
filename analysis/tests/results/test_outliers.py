# SPDX-License-Identifier: GPL-2.0-only
"""results.outliers: the outlier log is read only from inside its result's
folder, as ASCII lines of three bounded whole numbers; errors name the line,
never its content."""
import json
import os
import random

import pytest

from jtrpy.errors import UsageError
from jtrpy.results.outliers import read_outliers, read_outliers_file
from jtrpy.results.result import load_result

HEAD = "cpu,start_ns,length_ns\n"


def result_with(tmp_path, log_name, data=None):
    (tmp_path / "result.json").write_text(json.dumps(
        {"format": "jtr-result/1", "runs": [], "files": {"outliers": log_name}}))
    if data is not None:
        (tmp_path / log_name).write_bytes(data)
    return load_result(str(tmp_path))


def test_good_logs(tmp_path):
    r = result_with(tmp_path, "outliers.csv", (HEAD + "1,100,2000\n\n2,5,%d\r\n" % (2 ** 64 - 1)
                                               ).encode())
    assert read_outliers(r) == [(1, 100, 2000), (2, 5, 2 ** 64 - 1)]
    r = result_with(tmp_path, "outliers.csv", HEAD.encode())
    assert read_outliers(r) == []


@pytest.mark.parametrize("body, line", [
    ("1,100\n", 2), ("1,x,3\n", 2), ("1,2,3\n-1,2,3\n", 3), ("1,2,3,4\n", 2),
    ("70000,1,2\n", 2), ("1,%d,2\n" % 2 ** 64, 2), ("1,2,%s\n" % ("9" * 300), 2),
    (" 1,2,3\n", 2), ("1,2_0,3\n", 2), ("+1,2,3\n", 2),
])
def test_bad_lines_are_named_not_shown(tmp_path, body, line):
    p = tmp_path / "outliers.csv"
    p.write_bytes((HEAD + body).encode())
    with pytest.raises(UsageError) as e:
        read_outliers_file(str(p))
    text = str(e.value)
    assert text.startswith("%s:%d: expected cpu,start_ns,length_ns" % (p, line)), text
    assert body.strip() not in text


def test_text_that_is_not_ascii(tmp_path):
    p = tmp_path / "outliers.csv"
    p.write_bytes((HEAD + "\u0661,2,3\n").encode())     # a digit int() would take
    with pytest.raises(UsageError, match=r"outliers.csv: not ASCII text \(byte 0xd9 at "
                                         r"offset 23\); not an outlier log"):
        read_outliers_file(str(p))


def test_random_bytes_are_refused_in_one_line(tmp_path):
    rng = random.Random(14)
    p = tmp_path / "outliers.csv"
    for n in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
        if n % 2:
            data = HEAD.encode() + data
        p.write_bytes(data)
        try:
            read_outliers_file(str(p))
        except UsageError as e:
            assert "\n" not in str(e) and str(e).startswith(str(p))


def test_the_log_a_result_names_must_be_a_file_in_its_folder(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$secret:19000:0:99999:7:::\n")
    d = tmp_path / "r"
    d.mkdir()
    os.mkfifo(d / "fifo.csv")
    os.symlink(str(secret), str(d / "link.csv"))
    cases = [("/dev/zero", "files.outliers: expected a file in the results folder"),
             (str(secret), "files.outliers: expected a file in the results folder"),
             ("../shadow", "files.outliers: expected a file in the results folder"),
             ("fifo.csv", "a FIFO, not a regular file (the outlier log must be one)"),
             ("link.csv", "leads out of the results folder")]
    for name, message in cases:
        r = result_with(d, name)
        with pytest.raises(UsageError) as e:
            read_outliers(r)
        assert message in str(e.value) and "root:" not in str(e.value)
    with pytest.raises(UsageError, match="not the header"):   # given by hand: read, not shown
        read_outliers_file(str(secret))


def test_the_stream_column(tmp_path):
    """jtr sub --streams' log: a stream column, whole numbers, read as the seq
    column is; a word there is refused naming its line."""
    p = tmp_path / "outliers.csv"
    p.write_bytes(b"cpu,start_ns,length_ns,kind,seq,stream\n0,10,500,latency,7,0\n"
                  b"1,12,900,latency,7,1\n")
    log = read_outliers_file(str(p), table=True)
    assert log.rows == [(0, 10, 500), (1, 12, 900)]
    assert log.column("stream") == [0, 1] and log.column("seq") == [7, 7]
    p.write_bytes(b"cpu,start_ns,length_ns,stream\n0,10,500,one\n")
    with pytest.raises(UsageError, match=r"outliers.csv:2: "):
        read_outliers_file(str(p), table=True)
