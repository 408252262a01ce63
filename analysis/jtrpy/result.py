"""result - read jtr-result/1 files (docs/result-format.md)."""
import json
import os
import socket
import time

from .errors import UsageError

FORMAT = "jtr-result/1"
PERCENTILE_KEYS = ("50", "90", "99", "99.9", "99.99", "99.999")


def result_path(path):
    """The result.json a path names: the file itself, or DIR/result.json."""
    if os.path.isdir(path):
        return os.path.join(path, "result.json")
    return path


def load_result(path):
    """Parse and check the format of a result; UsageError names what is wrong."""
    p = result_path(path)
    try:
        with open(p, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise UsageError("%s: no such result (give a results folder or its result.json)" % p)
    except json.JSONDecodeError as e:
        raise UsageError("%s: not a JSON file (line %d: %s)" % (p, e.lineno, e.msg))
    except OSError as e:
        raise UsageError("%s: cannot read: %s" % (p, e.strerror))
    fmt = data.get("format") if isinstance(data, dict) else None
    if fmt != FORMAT:
        raise UsageError("%s: format is %r, expected %r" % (p, fmt, FORMAT))
    return data


def write_atomic(path, text):
    """Write @text to @path so a reader sees the old file or the whole new one."""
    d = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(d, ".%s.tmp-%d" % (os.path.basename(path), os.getpid()))
    try:
        with open(tmp, "w", encoding="utf-8") as f:
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


def _is_flat(v):
    """A list printed on one line: nothing but scalars in it."""
    return isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v)


def dumps_result(v, indent=0):
    """JSON in the layout the C writer uses: objects and lists of lists one item
    a line, lists of scalars inline."""
    pad = "  " * (indent + 1)
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = ["%s%s: %s" % (pad, json.dumps(k, ensure_ascii=False),
                               dumps_result(x, indent + 1)) for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    if isinstance(v, list) and v and not _is_flat(v):
        items = [pad + dumps_result(x, indent + 1) for x in v]
        return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"
    return json.dumps(v, ensure_ascii=False)


def save_result(path, data):
    """Write a result back (atomically) to the result.json a path names."""
    write_atomic(result_path(path), dumps_result(data) + "\n")


def new_results_dir(tool, out=None):
    """The folder a driver (jtr ab, jtr maxrate) writes into: -o @out, which must
    not exist, or results/YYYYmmdd-HHMMSS-HOST-TOOL (-2, -3, ... when taken)."""
    if out:
        if os.path.exists(out):
            raise UsageError("-o %s: exists; give a new folder" % out)
        return out
    base = os.path.join("results", "%s-%s-%s" % (time.strftime("%Y%m%d-%H%M%S"),
                                                 socket.gethostname().split(".")[0], tool))
    d, n = base, 1
    while os.path.exists(d):
        n += 1
        d = "%s-%d" % (base, n)
    return d


def measured_runs(result):
    """The runs that measure what @result is about: every run, except that the
    null-loop runs of a jtr send result (its reference, each matched to a send
    run's mean) stay out of headline numbers and comparisons."""
    runs = [r for r in result.get("runs") or [] if isinstance(r, dict)]
    if result.get("tool") == "send":
        runs = [r for r in runs if r.get("kind") != "null"]
    return runs
