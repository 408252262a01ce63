# SPDX-License-Identifier: GPL-2.0-only
"""system.files: the one way jtr reads a file: regular files only, bounded in
size, confined to a result's folder when a document names them, and JSON read
with bounds on nesting, integers and encoding; what a writer killed half-way
leaves is removed once it is dead."""
import json
import os
import stat
import subprocess
import threading

import pytest

from jtrpy.errors import UsageError
from jtrpy.system import files
from jtrpy.system.files import (
    MAX_JSON_DEPTH,
    check_file,
    parse_json,
    read_bytes,
    read_json,
    remove_stale_tmp,
    write_atomic,
    write_json,
)


def one_line(e):
    text = str(e.value)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_a_regular_file_is_read_whole(tmp_path):
    p = tmp_path / "a.bin"
    p.write_bytes(b"x" * 100000)
    assert read_bytes(str(p), "thing", 100000) == b"x" * 100000
    with pytest.raises(UsageError) as e:
        read_bytes(str(p), "thing", 99999)
    assert "larger than the 97.7 KiB a thing may have" in one_line(e)


def test_devices_fifos_and_folders_are_refused_before_reading(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = []

    def read():        # would block forever on a FIFO opened for reading
        with pytest.raises(UsageError) as e:
            read_bytes(str(fifo), "result", 1 << 20)
        done.append(one_line(e))
    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(10)
    assert done and "a FIFO, not a regular file (the result must be one)" in done[0]
    with pytest.raises(UsageError) as e:
        read_bytes("/dev/zero", "event log", 1 << 20)       # would fill the memory
    assert "/dev/zero: a character device, not a regular file" in one_line(e)
    with pytest.raises(UsageError, match="is a folder, not an event log"):
        read_bytes(str(tmp_path), "event log", 1 << 20)
    with pytest.raises(UsageError, match="no such result .give a folder."):
        read_bytes(str(tmp_path / "nope"), "result", 10, missing="give a folder")
    with pytest.raises(UsageError, match="a character device"):
        check_file("/dev/null", "perf sched record file")


def test_a_file_named_by_a_result_stays_in_its_folder(tmp_path):
    folder = tmp_path / "res"
    folder.mkdir()
    (folder / "ok.csv").write_text("fine\n")
    (folder / "sub").mkdir()
    (folder / "sub" / "in.csv").write_text("also fine\n")
    secret = tmp_path / "secret"
    secret.write_text("root:$6$hash:19000::::::\n")
    os.symlink(str(secret), str(folder / "out.csv"))
    os.symlink("sub/in.csv", str(folder / "inner.csv"))
    os.symlink("/dev/zero", str(folder / "zero.csv"))
    within = str(folder)
    assert read_bytes(str(folder / "ok.csv"), "log", 100, within) == b"fine\n"
    assert read_bytes(str(folder / "inner.csv"), "log", 100, within) == b"also fine\n"
    for name in ("out.csv", "zero.csv", "../secret", "sub/../../secret"):
        with pytest.raises(UsageError) as e:
            read_bytes(os.path.join(within, name), "log", 100, within)
        text = one_line(e)
        assert "leads out of the results folder" in text and "root:" not in text
    # the same files given by the user (no folder to stay in) are read
    assert read_bytes(str(folder / "out.csv"), "log", 100).startswith(b"root:")


def test_json_bounds(tmp_path):
    p = str(tmp_path / "x.json")
    cases = [
        (b'{"a": \xff}', "not UTF-8 text (byte 0xff at offset 6)"),
        (b"[" * 100000 + b"]" * 100000, "nested deeper than %d levels" % MAX_JSON_DEPTH),
        (b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1), "nested deeper"),
        (b'{"n": ' + b"7" * 5000 + b"}", "an integer of 5000 digits"),
        (b'{"n": -' + b"7" * 21 + b"}", "an integer of 22 digits"),
        (b'{"s": "\\ud800"}', "lone UTF-16 surrogate"),
        (b'{"\\udfff": 1}', "lone UTF-16 surrogate"),
        (b'{"a": [1, {"b": ["ok", "\\uDC80"]}]}', "lone UTF-16 surrogate"),
        (b'"\\ud800"', "lone UTF-16 surrogate"),
        (b"{not json", "not a JSON file (line 1:"),
    ]
    for data, msg in cases:
        with open(p, "wb") as f:
            f.write(data)
        with pytest.raises(UsageError) as e:
            read_json(p)
        text = one_line(e)
        assert text.startswith(p + ": ") and msg in text, (data[:20], text)
    # what jtr writes reads back: 20-digit integers, NaN (a field check refuses it
    # where a number is meant), a real surrogate pair, nesting up to the bound
    doc = {"n": 2 ** 64 - 1, "m": -(2 ** 63), "f": float("nan"), "s": "\U0001f600",
           "deep": json.loads("[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1))}
    write_json(p, doc)
    back = read_json(p)
    assert back["n"] == 2 ** 64 - 1 and back["m"] == -(2 ** 63) and back["f"] != back["f"]
    assert back["s"] == "\U0001f600"
    assert parse_json(b"[]", "x") == []
    assert parse_json(b'["\\ud83d\\ude00", 7]', "x") == ["\U0001f600", 7]


def test_read_json_checks_the_format_without_quoting_much(tmp_path):
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"format": "z" * 5000}))
    with pytest.raises(UsageError) as e:
        read_json(str(p), "jtr-result/1")
    assert "format is a string of 5000 characters" in one_line(e)
    assert "z" * 41 not in one_line(e)
    p.write_text(json.dumps([1]))
    with pytest.raises(UsageError, match="format is missing, expected 'jtr-result/1'"):
        read_json(str(p), "jtr-result/1")
    p.write_text(json.dumps({"format": 5}))
    with pytest.raises(UsageError, match="format is 5, expected 'jtr-result/1'"):
        read_json(str(p), "jtr-result/1")


def test_a_file_that_grows_past_the_limit_while_read(tmp_path, monkeypatch):
    """/proc files say size 0: the limit holds while reading too."""
    monkeypatch.setattr(files, "READ_CHUNK", 7)
    with pytest.raises(UsageError, match="larger than the 100 bytes"):
        read_bytes("/proc/self/status", "status", 100)
    assert read_bytes("/proc/self/status", "status", 1 << 20).startswith(b"Name:")


def test_stale_temporary_files_of_dead_pids_are_removed(tmp_path):
    p = subprocess.Popen(["true"])
    p.wait()
    dead, live = p.pid, os.getpid()
    for name in (".a.json.tmp-%d" % dead, ".b.tmp-%d" % live, "c.tmp-%d" % dead,
                 ".d.tmp-x", "e"):
        (tmp_path / name).write_text("x")
    assert remove_stale_tmp(str(tmp_path)) == [str(tmp_path / (".a.json.tmp-%d" % dead))]
    assert sorted(os.listdir(tmp_path)) == sorted(
        [".b.tmp-%d" % live, "c.tmp-%d" % dead, ".d.tmp-x", "e"])
    assert remove_stale_tmp(str(tmp_path / "missing")) == []


def test_write_atomic_names_its_temporary_file_as_remove_stale_tmp_expects(tmp_path,
                                                                          monkeypatch):
    seen = []
    real = os.replace

    def spy(src, dst):
        seen.append(os.path.basename(src))
        real(src, dst)
    monkeypatch.setattr(os, "replace", spy)
    write_atomic(str(tmp_path / "x.json"), "{}")
    assert seen == [".x.json.tmp-%d" % os.getpid()]


def test_json_in_the_c_writers_layout():
    doc = {"a": [1, 2.5, None, True, "é\n"], "b": {}, "c": [], "d": [{"x": 1}, {}, [3]],
           "e": {"f": {"g": float("nan"), "h": float("-inf"), "i": False}}, "t": (1, 2)}
    assert files.dumps_json(doc) == (
        '{\n'
        '  "a": [1, 2.5, null, true, "é\\n"],\n'
        '  "b": {},\n'
        '  "c": [],\n'
        '  "d": [\n'
        '    {\n'
        '      "x": 1\n'
        '    },\n'
        '    {},\n'
        '    [3]\n'
        '  ],\n'
        '  "e": {\n'
        '    "f": {\n'
        '      "g": NaN,\n'
        '      "h": -Infinity,\n'
        '      "i": false\n'
        '    }\n'
        '  },\n'
        '  "t": [1, 2]\n'
        '}')
    assert files.dumps_json([{"k": 1}], indent=1) == '[\n    {\n      "k": 1\n    }\n  ]'
    # the same object read back, big numbers and all
    big = {"n": 2**63 + 1, "f": 1e-300, "s": "\u2028\x00"}
    assert json.loads(files.dumps_json(big)) == big


def test_an_output_is_written_through_what_is_not_a_regular_file(tmp_path):
    """write_output: a regular file (or nothing yet) replaced whole; a symbolic
    link's target replaced, the link kept; a character device (a copy of
    /dev/null where mknod is allowed) and a FIFO written through, never replaced
    by a file."""
    new = tmp_path / "new.prom"
    files.write_output(str(new), "a 1\n")
    assert new.read_text() == "a 1\n"
    target = tmp_path / "target.prom"
    target.write_text("old\n")
    link = tmp_path / "link.prom"
    os.symlink(str(target), str(link))
    files.write_output(str(link), "b 2\n")
    assert os.path.islink(link) and target.read_text() == "b 2\n"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()), daemon=True)
    reader.start()
    files.write_output(str(fifo), "c 3\n")
    reader.join(5)
    assert got == ["c 3\n"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        return          # not root: the FIFO stands for the devices
    files.write_output(str(null), "d 4\n")
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    assert [n for n in os.listdir(tmp_path) if ".tmp-" in n] == []


def test_outputs_are_neither_shared_nor_inputs(tmp_path):
    """check_outputs: two options naming one file (or both standard output), or an
    output that is a file the command reads, are refused naming both; a device
    that is an input stays writable (it is written through, not replaced)."""
    a, b = tmp_path / "a.hlog", tmp_path / "b.prom"
    files.check_outputs([("--hlog", str(a)), ("--prom", str(b)), ("--perfetto", None)])
    with pytest.raises(UsageError, match=r"--hlog .*a\.hlog and --prom .*a\.hlog: the same "
                                         r"file; give each its own file"):
        files.check_outputs([("--hlog", str(a)), ("--prom", str(tmp_path / "." / "a.hlog"))])
    with pytest.raises(UsageError, match="the same standard output"):
        files.check_outputs([("--hlog", "-"), ("--prom", "-")])
    doc = tmp_path / "result.json"
    doc.write_text("{}")
    os.symlink(str(doc), str(tmp_path / "alias.json"))
    for out in (doc, tmp_path / "alias.json"):
        with pytest.raises(UsageError, match=r"--perfetto .*: that is .*result\.json, which "
                                             r"this command reads; write it elsewhere"):
            files.check_outputs([("--perfetto", str(out))], [str(doc)])
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    files.check_outputs([("--prom", str(fifo))], [str(fifo)])


def test_orphans_are_the_folders_whose_maker_died(tmp_path):
    """remove_orphans: a folder owned_folder made is removed once no one holds its
    lock (its maker died, even by SIGKILL); a living maker's (here: another process
    holding the lock, as a jtr run in another pid namespace would), one with no
    owner file and anything else named alike are left."""
    mine, owner = files.owned_folder(str(tmp_path), ".jtr-pong-")
    (tmp_path / ".jtr-sub-old").mkdir()                # no owner file: not ours
    (tmp_path / ".jtr-notes").write_text("x")
    dead, f = files.owned_folder(str(tmp_path), ".jtr-pong-")
    f.close()                                          # its maker gone
    held = tmp_path / ".jtr-ping-held"
    held.mkdir()
    (held / files.OWNER).touch()
    child = subprocess.Popen(["python3", "-c", "import fcntl, sys, time\n"
                              "f = open(sys.argv[1]); fcntl.flock(f, fcntl.LOCK_EX)\n"
                              "print('locked', flush=True); time.sleep(60)",
                              str(held / files.OWNER)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "locked\n"
        assert files.remove_orphans(str(tmp_path), ".jtr-") == [dead]
        assert sorted(os.listdir(tmp_path)) == sorted(
            [os.path.basename(mine), ".jtr-sub-old", ".jtr-notes", ".jtr-ping-held"])
        owner.close()
        child.kill()
        child.wait()
        assert sorted(files.remove_orphans(str(tmp_path), ".jtr-")) == sorted(
            [mine, str(held)])
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
