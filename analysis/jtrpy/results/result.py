"""result - a jtr-result/1 document and the folder it lives in
(docs/result-format.md).

A result is loaded once (load_result) and handed on as a Result: the document
itself (a dict, so every layer reads it as the JSON it is) that also knows its
result.json and the files beside it. The layers below the commands take Results,
never folder names.
"""
import os
import shutil
import socket
import time

from ..errors import UsageError
from ..system.files import dumps_json, read_json, write_atomic, write_json

FORMAT = "jtr-result/1"
NAME = "result.json"
PERCENTILE_KEYS = ("50", "90", "99", "99.9", "99.99", "99.999")

# the files a result may name in "files", and their usual names
DEFAULT_FILES = {"outliers": "outliers.csv", "events": "events.bin", "trace": "trace.json",
                 "summary": "summary.txt", "attribution": "attribution.txt",
                 "sched": "sched.data"}


class Result(dict):
    """A result document and where it was read from (path: its result.json, or
    None for one made in memory, such as an import before it is written)."""

    def __init__(self, doc, path=None):
        super().__init__(doc)
        self.path = path

    @property
    def folder(self):
        """The results folder, or None."""
        return os.path.dirname(self.path) or "." if self.path else None

    @property
    def label(self):
        """How people name it: the folder as given, else the file."""
        return self.folder or "(a result in memory)"

    def file(self, role, default=None):
        """The path of the file the result names for @role in "files" (outliers,
        events, ...), else its usual name, in the result's folder; None when the
        result has no folder."""
        if self.folder is None:
            return None
        files = self.get("files") if isinstance(self.get("files"), dict) else {}
        name = files.get(role) or default or DEFAULT_FILES.get(role)
        return os.path.join(self.folder, name) if name else None

    def measured_runs(self):
        """See measured_runs()."""
        return measured_runs(self)

    def write_text(self, role, name, text):
        """Write a text file of the result into its folder (atomically) and name it
        in "files" under @role; save() records that."""
        write_atomic(os.path.join(self.folder, name), text)
        self.setdefault("files", {})[role] = name

    def save(self):
        """Write the document back to its result.json, atomically."""
        write_json(self.path, dict(self))


def result_path(path):
    """The result.json a path names: the file itself, or DIR/result.json."""
    if os.path.isdir(path):
        return os.path.join(path, NAME)
    return path


def load_result(path):
    """The Result at @path (a results folder or its result.json); UsageError names
    what is wrong."""
    p = result_path(path)
    return Result(read_json(p, FORMAT, "result", "give a results folder or its result.json"),
                  p)


def new_results_dir(tool, out=None, when=None, host=None):
    """The folder a driver (jtr ab, jtr maxrate, jtr import) writes into: -o @out,
    which must not exist, or results/YYYYmmdd-HHMMSS-HOST-TOOL (-2, -3, ... when
    taken); the time is @when (local, a time.struct_time) or now, HOST @host or
    this machine's name."""
    if out:
        if os.path.exists(out):
            raise UsageError("-o %s: exists; give a new folder" % out)
        return out
    host = socket.gethostname().split(".")[0] if host is None else host
    host = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in host) or "host"
    stamp = time.strftime("%Y%m%d-%H%M%S", when or time.localtime())
    base = os.path.join("results", "%s-%s-%s" % (stamp, host, tool))
    d, n = base, 1
    while os.path.exists(d):
        n += 1
        d = "%s-%d" % (base, n)
    return d


def write_result_folder(result, outdir, copies=()):
    """Write @result (a document) as @outdir/result.json with @copies [(name, source
    path)] beside it: a new folder appears whole (built hidden, then renamed), an
    existing one gets the files replaced one by one. UsageError when it cannot."""
    text = dumps_json(result) + "\n"
    try:
        if os.path.isdir(outdir):
            if not os.access(outdir, os.W_OK | os.X_OK):
                raise UsageError("-o %s: cannot write in this folder" % outdir)
            for name, src in copies:
                tmp = os.path.join(outdir, "." + name + ".tmp")
                shutil.copyfile(src, tmp)
                os.replace(tmp, os.path.join(outdir, name))
            write_atomic(os.path.join(outdir, NAME), text)
            return
        if os.path.exists(outdir):
            raise UsageError("-o %s: exists and is not a folder" % outdir)
        parent = os.path.dirname(os.path.abspath(outdir))
        if not os.path.isdir(parent):
            if os.path.normpath(os.path.dirname(outdir)) == "results":
                os.mkdir(parent)
            else:
                raise UsageError("-o %s: no such folder %s" % (outdir, parent))
        work = os.path.join(parent, ".%s.partial-%d" % (os.path.basename(outdir), os.getpid()))
        os.mkdir(work)
        try:
            for name, src in copies:
                shutil.copyfile(src, os.path.join(work, name))
            write_atomic(os.path.join(work, NAME), text)
            os.rename(work, outdir)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    except OSError as e:
        raise UsageError("%s: cannot write: %s" % (outdir, e.strerror))


def measured_runs(result):
    """The runs that measure what @result is about: every run, except that the
    null-loop runs of a jtr send result (its reference, each matched to a send
    run's mean) stay out of headline numbers and comparisons."""
    runs = [r for r in result.get("runs") or [] if isinstance(r, dict)]
    if result.get("tool") == "send":
        runs = [r for r in runs if r.get("kind") != "null"]
    return runs
