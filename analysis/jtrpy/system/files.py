"""files - the one way jtr writes a file and the one JSON writer and reader.

Every file jtr writes is written whole or not at all (write_atomic: a hidden
temporary file, fsync, rename), and every JSON document it writes has the
layout of the C writer (lib/jtr_json.c): objects and lists of lists one item a
line, lists of scalars inline, so a result written by Python and one written
by a probe read the same.
"""
import json
import os
import re

from ..errors import UsageError


def write_atomic(path, text, mode="w"):
    """Write @text (str, or bytes with mode "wb") to @path so a reader sees the old
    file or the whole new one."""
    d = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(d, ".%s.tmp-%d" % (os.path.basename(path), os.getpid()))
    try:
        with open(tmp, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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


def _is_flat(v):
    """A list printed on one line: nothing but scalars in it."""
    return isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v)


def dumps_json(v, indent=0):
    """JSON in the layout the C writer uses."""
    pad = "  " * (indent + 1)
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = ["%s%s: %s" % (pad, json.dumps(k, ensure_ascii=False),
                               dumps_json(x, indent + 1)) for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    if isinstance(v, (list, tuple)) and v and not _is_flat(list(v)):
        items = [pad + dumps_json(x, indent + 1) for x in v]
        return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"
    return json.dumps(v, ensure_ascii=False)


def write_json(path, doc):
    """@doc written atomically to @path in the C writer's layout."""
    write_atomic(path, dumps_json(doc) + "\n")


def read_json(path, fmt=None, what="file", missing=None):
    """The JSON document in @path; with @fmt, its "format" must be that.
    UsageError names the file and what is wrong; @missing is the message's tail
    for a file that is not there (what to give instead)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise UsageError("%s: no such %s%s" % (path, what, " (%s)" % missing if missing else ""))
    except IsADirectoryError:
        raise UsageError("%s: is a folder, not a %s" % (path, what))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        line = " (line %d: %s)" % (e.lineno, e.msg) if isinstance(e, json.JSONDecodeError) \
            else ""
        raise UsageError("%s: not a JSON file%s" % (path, line))
    except OSError as e:
        raise UsageError("%s: cannot read: %s" % (path, e.strerror))
    if fmt is not None:
        got = doc.get("format") if isinstance(doc, dict) else None
        if got != fmt:
            raise UsageError("%s: format is %r, expected %r" % (path, got, fmt))
    return doc
