"""result - read jtr-result/1 files (docs/result-format.md)."""
import json
import os

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
