# SPDX-License-Identifier: GPL-2.0-only
"""files - the one way jtr writes a file, the one JSON writer, and the one way it
reads the files it is given or a document names.

Every file jtr writes is written whole or not at all (write_atomic: a hidden
temporary file, fsync, rename; a file an option names, through write_output: a
device or a FIFO written through, a link's target replaced, after check_outputs
refused outputs that are inputs or share a path), and every JSON document it writes has the
layout of the C writer (lib/jtr_json.c): objects and lists of lists one item a
line, lists of scalars inline, so a result written by Python and one written
by a probe read the same.

Every file jtr reads (result.json, trace.json, suite.json, events.bin,
outliers.csv, imports) is read by read_bytes: a regular file only (a device,
FIFO or socket is refused before a byte is read, so /dev/zero cannot fill the
memory and a FIFO cannot hang), no larger than a limit said in
docs/result-format.md, and, when a document names it (@within), inside the
document's folder after every symbolic link is followed. JSON is parsed by
parse_json with bounds: nesting, integer digits, text that is not UTF-8.
Errors are one line naming the file and what is wrong, never its content.
"""
import errno
import fcntl
import json
import os
import re
import shutil
import stat
import tempfile

from ..errors import UsageError
from .schema import describe

MIB = 1 << 20
MAX_JSON_BYTES = 64 * MIB   # result.json, trace.json, suite.json, oslat/cyclictest files
MAX_JSON_DEPTH = 32         # objects and lists inside one another (a result has 6)
MAX_INT_DIGITS = 20         # 2^64 has 20 digits: jtr writes no longer integer
READ_CHUNK = 1 << 16
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def _write_text(f, text):
    """@text (str or bytes), or its pieces one after the other (any other
    iterable: a generator's, so a large file is never whole in memory)."""
    if isinstance(text, (str, bytes)):
        f.write(text)
        return
    for piece in text:
        f.write(piece)


def write_atomic(path, text, mode="w"):
    """Write @text (str, or bytes with mode "wb"; or an iterable of pieces of
    it) to @path so a reader sees the old file or the whole new one."""
    d = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(d, ".%s.tmp-%d" % (os.path.basename(path), os.getpid()))
    try:
        with open(tmp, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            _write_text(f, text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError) and not e.filename:
            e.filename = path       # a full disk names the file, not standard output
        raise


def move_file(src, dst):
    """Move @src to @dst whole or not at all: a rename on one file system, else a
    copy into a temporary beside @dst renamed into place (a full disk leaves no
    truncated @dst, and removes the temporary); @src is removed once @dst is there."""
    try:
        os.rename(src, dst)
        return
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
    tmp = os.path.join(os.path.dirname(os.path.abspath(dst)),
                       ".%s.tmp-%d" % (os.path.basename(dst), os.getpid()))
    try:
        shutil.copyfile(src, tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, dst)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    os.unlink(src)


TMP_RE = re.compile(r"^\.(?P<name>.+)\.tmp-(?P<pid>[0-9]+)$")


def remove_stale_tmp(folder):
    """Remove the temporary files (.NAME.tmp-PID) write_atomic left in @folder when
    process PID was killed half-way through a write, of every PID that is no
    longer running; the paths removed."""
    out = []
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for n in names:
        m = TMP_RE.match(n)
        if not m or os.path.exists("/proc/%s" % m.group("pid")):
            continue
        try:
            os.unlink(os.path.join(folder, n))
            out.append(os.path.join(folder, n))
        except OSError:
            pass
    return out


OWNER = ".owner"    # in a working folder: locked by the process that made it


def owned_folder(parent, prefix):
    """A new working folder in @parent named @prefix + a random part, and the file
    object whose lock says its maker is alive (flock on @OWNER; released when the
    maker exits, even by SIGKILL: close it, or remove the folder, when done)."""
    folder = tempfile.mkdtemp(prefix=prefix, dir=parent)
    f = open(os.path.join(folder, OWNER), "w")
    fcntl.flock(f, fcntl.LOCK_EX)
    return folder, f


def remove_orphans(parent, prefix):
    """Remove the folders in @parent named @prefix... that owned_folder made for a
    process that has died (a jtr run killed with SIGKILL left its partner's folder
    beside the results): those with an @OWNER no one holds a lock on. Folders
    without one, or whose maker lives (in any pid namespace: it is the lock that
    says so), are left. The paths removed."""
    out = []
    try:
        names = [n for n in os.listdir(parent) if n.startswith(prefix)]
    except OSError:
        return out
    for n in names:
        folder = os.path.join(parent, n)
        try:
            f = open(os.path.join(folder, OWNER), "r")
        except OSError:
            continue
        with f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue            # its maker is alive
            shutil.rmtree(folder, ignore_errors=True)
            out.append(folder)
    return out


def _is_flat(v):
    """A list printed on one line: nothing but scalars in it."""
    return isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v)


_encode_str = json.encoder.encode_basestring     # json.dumps(str, ensure_ascii=False)
_INFINITIES = (float("inf"), float("-inf"))


def _scalar(v):
    """json.dumps(@v, ensure_ascii=False), without its call for the common kinds."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    t = type(v)
    if t is str:
        return _encode_str(v)
    if t is int:
        return int.__repr__(v)
    if t is float and v == v and v not in _INFINITIES:
        return float.__repr__(v)
    return json.dumps(v, ensure_ascii=False)


def _emit(v, indent, out, keys, pads):
    """Append the pieces of @v's text (at nesting @indent) to @out."""
    if isinstance(v, dict):
        if not v:
            out.append("{}")
            return
        if len(pads) < indent + 2:
            pads.append("  " * (indent + 1))
        pad = ",\n" + pads[indent + 1]
        sep = "{\n" + pads[indent + 1]
        for k, x in v.items():
            key = keys.get(k)
            if key is None:
                key = keys[k] = _scalar(k) + ": "
            out.append(sep)
            out.append(key)
            _emit(x, indent + 1, out, keys, pads)
            sep = pad
        out.append("\n" + pads[indent] + "}")
        return
    if isinstance(v, (list, tuple)):
        if v and not _is_flat(list(v)):
            if len(pads) < indent + 2:
                pads.append("  " * (indent + 1))
            pad = ",\n" + pads[indent + 1]
            sep = "[\n" + pads[indent + 1]
            for x in v:
                out.append(sep)
                _emit(x, indent + 1, out, keys, pads)
                sep = pad
            out.append("\n" + pads[indent] + "]")
            return
        out.append(json.dumps(v, ensure_ascii=False))
        return
    out.append(_scalar(v))


def dumps_json(v, indent=0):
    """JSON in the layout the C writer uses: an object's members and a list of
    objects or lists one a line, indented by two spaces; a list of scalars on
    one line."""
    out = []
    _emit(v, indent, out, {}, ["  " * i for i in range(indent + 1)])
    return "".join(out)


def check_writable(path, opt, example=None):
    """UsageError unless the file @path (option @opt; '-' is standard output) can be
    created or replaced: not a folder, its folder there and writable. Checked before
    anything is read. @example: a file name the message offers."""
    if path == "-":
        return
    real = os.path.realpath(path)
    if os.path.exists(real) and not os.path.isdir(real) and not _regular_or_new(real):
        # a device, a FIFO: written through where it is (write_output)
        if not os.access(real, os.W_OK):
            raise UsageError("%s %s: cannot write to it" % (opt, path))
        return
    if os.path.isdir(path):
        raise UsageError("%s %s: is a folder; give a file name%s"
                         % (opt, path, ", e.g. %s %s" % (opt, example) if example else ""))
    d = os.path.dirname(real)
    if not os.path.isdir(d):
        raise UsageError("%s %s: no such folder %s" % (opt, path, d))
    if not os.access(d, os.W_OK | os.X_OK):
        raise UsageError("%s %s: cannot write in %s" % (opt, path, d))


def _regular_or_new(path):
    """Whether @path (its links followed) is a regular file or nothing yet."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False


def check_outputs(outputs, inputs=()):
    """The one rule for the files a command is told to write (options' FILEs,
    [(option, path)], '-' standard output, None left out): each writable where it
    is (check_writable), no two of them the same file, and none of them a file
    the command reads (@inputs: paths; a result folder's files). UsageError
    naming both, before anything is read or written."""
    seen = {}
    ins = {}
    for p in inputs:
        if p and os.path.exists(p):
            ins[os.path.realpath(p)] = p
    for opt, path in outputs:
        if path is None:
            continue
        check_writable(path, opt)
        key = "-" if path == "-" else os.path.realpath(path)
        if key in seen:
            o, p = seen[key]
            raise UsageError("%s %s and %s %s: the same %s; give each its own file"
                             % (o, p, opt, path, "standard output" if key == "-" else "file"))
        seen[key] = (opt, path)
        if key in ins and _regular_or_new(key):
            raise UsageError("%s %s: that is %s, which this command reads; write it "
                             "elsewhere" % (opt, path, ins[key]))


def write_output(path, text, mode="w"):
    """Write a file a command was told to write (an option's FILE): a regular file,
    or a path where there is nothing yet, whole or not at all (write_atomic, into
    a symbolic link's target, so the link stays a link); anything else (a
    character device such as /dev/null or a terminal, a FIFO, /dev/stdout) is
    written through, never replaced by a file. @text: as write_atomic takes it
    (pieces are written as they come)."""
    real = os.path.realpath(path)
    if _regular_or_new(real):
        write_atomic(real, text, mode)
        return
    with open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
        _write_text(f, text)


def write_json(path, doc):
    """@doc written atomically to @path in the C writer's layout."""
    write_atomic(path, dumps_json(doc) + "\n")


def size_text(n):
    """A byte count for people: 64 MiB, 1.5 GiB, 812 bytes."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            v = n / float(1 << shift)
            return ("%d %s" if v == int(v) else "%.1f %s") % (v, unit)
    return "%d bytes" % n


def inside(path, folder):
    """True when @path, every symbolic link followed, is @folder or under it."""
    top = os.path.realpath(folder)
    return os.path.commonpath([os.path.realpath(path), top]) == top


def open_regular(path, what, within=None, missing=None):
    """(binary file, os.stat_result) of the regular file @path, opened without
    blocking; UsageError naming the file and what is wrong (@what: what it should
    be, "result"; @missing: what to give instead of a file that is not there).
    @within: the results folder a document named the file in; it must stay
    inside it, every symbolic link followed."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    if within is not None:
        if not inside(path, within):
            raise UsageError("%s: leads out of the results folder %s (a link or '..'); jtr "
                             "reads only the files inside a result's folder" % (path, within))
        path_to_open, flags = os.path.realpath(path), flags | os.O_NOFOLLOW
    else:
        path_to_open = path
    try:
        fd = os.open(path_to_open, flags)
    except FileNotFoundError:
        raise UsageError("%s: no such %s%s" % (path, what, " (%s)" % missing if missing else ""))
    except IsADirectoryError:
        raise UsageError("%s: is a folder, not %s" % (path, a_or_an(what)))
    except OSError as e:
        raise UsageError("%s: cannot read: %s" % (path, e.strerror))
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode):
        return os.fdopen(fd, "rb", buffering=0), st
    os.close(fd)
    if stat.S_ISDIR(st.st_mode):
        raise UsageError("%s: is a folder, not %s" % (path, a_or_an(what)))
    kind = next((k for test, k in _KINDS if test(st.st_mode)), "not a regular file")
    raise UsageError("%s: %s, not a regular file (the %s must be one); not read"
                     % (path, kind, what))


def a_or_an(what):
    """'a result', 'an event log'."""
    return ("an " if what[:1] in "aeiou" else "a ") + what


def check_file(path, what, within=None, missing=None):
    """UsageError unless @path is a regular file open_regular() would read; for
    a file another program reads (perf and sched.data)."""
    open_regular(path, what, within, missing)[0].close()


def read_bytes(path, what, max_bytes, within=None, missing=None):
    """The bytes of the regular file @path (open_regular), at most @max_bytes:
    a larger one is refused before it is read."""
    f, st = open_regular(path, what, within, missing)
    with f:
        too_big = UsageError("%s: larger than the %s %s may have (docs/result-format.md); "
                             "not read" % (path, size_text(max_bytes), a_or_an(what)))
        if st.st_size > max_bytes:
            raise too_big
        try:
            data = f.read(st.st_size) if st.st_size else b""
            more, n = [], len(data)
            while True:     # a file that grew, or one that says size 0 (/proc)
                b = f.read(READ_CHUNK)
                if not b:
                    break
                n += len(b)
                if n > max_bytes:
                    raise too_big
                more.append(b)
        except OSError as e:
            raise UsageError("%s: cannot read: %s" % (path, e.strerror))
    return data + b"".join(more) if more else data


def decode_text(data, path, what, encoding="utf-8"):
    """@data as text, or UsageError naming the first byte that is not @encoding."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        raise UsageError("%s: not %s text (byte 0x%02x at offset %d); not %s"
                         % (path, "UTF-8" if encoding == "utf-8" else encoding.upper(),
                            data[e.start], e.start, a_or_an(what)))


class _TooLong(ValueError):
    """An integer with more digits than jtr writes."""


def _parse_int(text):
    if len(text) - text.startswith("-") > MAX_INT_DIGITS:
        raise _TooLong(len(text))
    return int(text)


def json_depth_error(doc, text=None):
    """Why @doc is nested too deeply or holds text that cannot be written back
    (a lone UTF-16 surrogate), or None. Walks without recursion, containers only;
    given the @text @doc was parsed from, its strings are searched only if the
    text holds a surrogate's escape (\\ud800-\\udfff: the only way JSON read
    from UTF-8 can carry one)."""
    strings = text is None or _SURROGATE_ESCAPE.search(text) is not None
    stack = [(doc, 1)] if isinstance(doc, (dict, list)) else []
    while stack:
        v, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return "nested deeper than %d levels" % MAX_JSON_DEPTH
        if isinstance(v, dict):
            if strings:
                for k in v:
                    if _SURROGATE.search(k):
                        return "a key holds a lone UTF-16 surrogate (\\ud800-\\udfff)"
            v = v.values()
        if strings and any(isinstance(x, str) and _SURROGATE.search(x) for x in v):
            return "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff)"
        stack.extend([(x, depth + 1) for x in v if isinstance(x, (dict, list))])
    if strings and isinstance(doc, str) and _SURROGATE.search(doc):
        return "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff)"
    return None


def parse_json(data, path, what="file"):
    """The JSON document in @data (bytes) read from @path, bounded: UTF-8, at most
    MAX_JSON_DEPTH levels, integers of at most MAX_INT_DIGITS digits; NaN and
    Infinity are read (a reader's field check refuses them where a number is
    meant). UsageError naming @path and what is wrong."""
    text = decode_text(data, path, "JSON %s" % what)
    try:
        doc = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as e:
        raise UsageError("%s: not a JSON file (line %d: %s)" % (path, e.lineno, e.msg))
    except _TooLong as e:
        raise UsageError("%s: not a JSON file jtr reads: an integer of %s digits (jtr's "
                         "have at most %d)" % (path, e.args[0], MAX_INT_DIGITS))
    except RecursionError:
        raise UsageError("%s: not a JSON file jtr reads: nested deeper than %d levels"
                         % (path, MAX_JSON_DEPTH))
    why = json_depth_error(doc, text)
    if why:
        raise UsageError("%s: not a JSON file jtr reads: %s" % (path, why))
    return doc


def read_json(path, fmt=None, what="file", missing=None, within=None,
              max_bytes=MAX_JSON_BYTES):
    """The JSON document in @path (read_bytes, then parse_json); with @fmt, its
    "format" must be that. UsageError names the file and what is wrong; @missing is
    the message's tail for a file that is not there (what to give instead)."""
    doc = parse_json(read_bytes(path, what, max_bytes, within, missing), path, what)
    if fmt is not None:
        got = doc.get("format") if isinstance(doc, dict) else None
        if got != fmt:
            shown = repr(got) if isinstance(got, str) and len(got) <= 40 else \
                "a string of %d characters" % len(got) if isinstance(got, str) else \
                "missing" if got is None else describe(got)
            raise UsageError("%s: format is %s, expected %r" % (path, shown, fmt))
    return doc
