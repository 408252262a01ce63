# SPDX-License-Identifier: GPL-2.0-only
"""result - a jtr-result/1 document and the folder it lives in
(docs/result-format.md), and the one place where a results folder is chosen,
checked and written (-o DIR of every Python command, in the C probes' words:
lib/jtr_out.c).

A result is loaded once (load_result) and handed on as a Result: the document
itself (a dict, so every layer reads it as the JSON it is) that also knows its
result.json and the files beside it. The fields the readers use are checked on
load (fields.py); the files it names are read only from inside its folder.
The layers below the commands take Results, never folder names.
"""
import errno
import os
import shutil
import socket
import time

from ..errors import JtrError, UsageError
from ..system.files import check_file, dumps_json, read_json, write_atomic, write_json
from ..system.schema import check
from .fields import RESULT

FORMAT = "jtr-result/1"
NAME = "result.json"
# the file the measuring program writes its result under in a jtr run (its
# JTR_RESULT_AS): jtr builds the result document from it, writes result.json
# once and removes it (drivers/run.py; lib/jtr_out.c). Left alone, it is the
# folder's result: jtr run was killed before it wrote result.json
PROBE_DOC = ".probe-result.json"
PERCENTILE_KEYS = ("50", "90", "99", "99.9", "99.99", "99.999")

# the files a result may name in "files", and their usual names (ping, pub and sub
# take --summary-file and --stats-file: read them through Result.file, never by
# these names)
DEFAULT_FILES = {"outliers": "outliers.csv", "events": "events.bin", "trace": "trace.json",
                 "summary": "summary.txt", "attribution": "attribution.txt",
                 "sched": "sched.data", "stats": "stats.csv", "latency": "latency.csv"}

# every file a results folder may hold besides result.json, as lib/jtr_out.h's
# JTR_RESULT_FILES (analysis/tests/test_parity.py compares them). A result written
# into an existing folder removes those of them it did not write itself: what an
# earlier result left there (events.bin, attribution.txt, ...) is not its own.
RESULT_FILES = ("result.json", "summary.txt", "outliers.csv", "null.gp", "send.gp",
                "send_v_null.plt", "stats.csv", "latency.csv", "events.bin", "trace.json",
                "attribution.txt", "decomposition.csv", "sched.data", "oslat.json",
                "cyclictest.json",
                "source.hlog")


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
        result has no folder. UsageError when "files" names a place outside the
        folder (an absolute path, '..'); read it with within=self.folder, which
        also refuses a link out of the folder."""
        if self.folder is None:
            return None
        files = self.get("files") if isinstance(self.get("files"), dict) else {}
        name = files.get(role) or default or DEFAULT_FILES.get(role)
        if not name:
            return None
        norm = os.path.normpath(name)
        if os.path.isabs(name) or norm == os.pardir or norm.startswith(os.pardir + os.sep):
            raise UsageError("%s: files.%s: expected a file in the results folder, got a "
                             "path outside it" % (self.path, role))
        return os.path.join(self.folder, name)

    def inputs(self):
        """The paths of the files a command may read of this result: its
        result.json and each file it names or would by default (an output given
        one of these would destroy its own input)."""
        if self.path is None:
            return []
        files = self.get("files") if isinstance(self.get("files"), dict) else {}
        out = [self.path]
        for role in sorted(set(DEFAULT_FILES) | {r for r in files if isinstance(r, str)}):
            try:
                path = self.file(role)
            except UsageError:
                continue
            if path:
                out.append(path)
        return out

    def check_file(self, role, what):
        """The path of the file for @role (file()), once it is known to be a
        regular file inside the folder; UsageError saying why not."""
        path = self.file(role)
        check_file(path, what, within=self.folder)
        return path

    def write_text(self, role, name, text):
        """Write a text file of the result into its folder (atomically) and name it
        in "files" under @role; save() records that."""
        path = os.path.join(self.folder, name)
        try:
            write_atomic(path, text)
        except OSError as e:
            raise UsageError("%s: cannot write: %s%s" % (
                path, e.strerror or e, "; it is a folder: remove or rename it"
                if isinstance(e, IsADirectoryError) else ""))
        self.setdefault("files", {})[role] = name

    def save(self):
        """Write the document back to its result.json, atomically."""
        try:
            write_json(self.path, dict(self))
        except OSError as e:
            # the machine's (a full disk), not the user's words: exit 1
            raise JtrError("%s: cannot write: %s" % (self.path, e.strerror or e))


def result_path(path):
    """The result.json a path names: the file itself, or DIR/result.json (or
    DIR/PROBE_DOC when only that is there: a jtr run killed before it wrote
    result.json left the probe's document)."""
    if os.path.isdir(path):
        p = os.path.join(path, NAME)
        doc = os.path.join(path, PROBE_DOC)
        return doc if not os.path.lexists(p) and os.path.lexists(doc) else p
    return path


def check_result(doc, path):
    """UsageError unless @doc has the types the readers rely on (fields.py),
    naming @path and the field."""
    check(doc, RESULT, path)


def load_result(path):
    """The Result at @path (a results folder or its result.json); UsageError names
    the file and what is wrong, or the field and what it should be."""
    p = result_path(path)
    doc = read_json(p, FORMAT, "result", "give a results folder or its result.json")
    check_result(doc, p)
    return Result(doc, p)


# --- results folders: -o DIR ---------------------------------------------------
# One rule for every command, the C probes' (lib/jtr_out.c): -o '' is refused; a
# new folder is created, but not its parent (it must be a folder you can write
# in); an existing folder is written into, each file atomically, and what an
# earlier result left there is removed (RESULT_FILES). Only the default
# results/ is created when it is missing. A folder that holds many results (jtr
# suite, jtr ab, jtr maxrate) must be new.

EMPTY_OUTPUT = "-o '': give a folder name, e.g. -o run1"


def check_output_dir(out, new=False, what="results folder"):
    """UsageError unless @out can be written as a results folder (see above; @what
    says what it is in the errors); with @new it must not exist yet."""
    if out == "":
        raise UsageError(EMPTY_OUTPUT)
    try:
        os.stat(out)
    except OSError:
        pass
    else:
        if new:
            raise UsageError("-o %s: exists; give a new folder" % out)
        if not os.path.isdir(out):
            raise UsageError("-o %s: exists and is not a folder; give a new or existing "
                             "folder" % out)
        if not os.access(out, os.W_OK | os.X_OK):
            raise UsageError("-o %s: cannot write in this folder: %s; choose a folder you "
                             "can write to" % (out, os.strerror(errno.EACCES)))
        return
    parent = os.path.dirname(out.rstrip("/")) or "."
    try:
        os.stat(parent)
        err = 0 if os.path.isdir(parent) else errno.ENOTDIR
    except OSError as e:
        err = e.errno
    if not err and not os.access(parent, os.W_OK | os.X_OK):
        err = errno.EACCES
    if err:
        raise create_error(out, err, what)


def create_error(out, err, what="results folder"):
    """The C probes' message for a results folder (@what) that cannot be created."""
    return UsageError("-o %s: cannot create the %s: %s; choose a folder whose parent exists "
                      "and that you can write to" % (out, what, os.strerror(err)))


def make_output_dir(out, new=False, what="results folder"):
    """Check -o @out (check_output_dir) and create it unless it is there; @out.
    @what: what the folder is, for the errors ("report folder")."""
    check_output_dir(out, new, what)
    if not os.path.isdir(out):
        try:
            os.mkdir(out)
        except OSError as e:
            raise create_error(out, e.errno, what)
    return out


def new_results_dir(tool, out=None, when=None, host=None):
    """The folder a driver (jtr ab, jtr maxrate, jtr suite, jtr import) writes
    into: -o @out (checked: see check_output_dir; a new one for a folder of
    results, @tool "ab", "maxrate" or "suite"), or results/YYYYmmdd-HHMMSS-HOST-TOOL
    (-2, -3, ... when taken); the time is @when (local, a time.struct_time) or now,
    HOST @host or this machine's name. Nothing is created: make_results_dir does."""
    if out is not None:
        check_output_dir(out, new=tool in MANY_RESULTS)
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


MANY_RESULTS = ("ab", "advise", "maxrate", "suite")    # their folders hold folders of results


def make_results_dir(tool, out=None):
    """new_results_dir(@tool, @out), created: the default results/ with it when
    missing, never another parent. UsageError in the C probes' words."""
    d = new_results_dir(tool, out)
    if out is None:
        make_results_root(d)
    return make_output_dir(d, new=out is None or tool in MANY_RESULTS)


def make_results_root(d):
    """Create results/, the parent of a default results folder @d, when missing."""
    try:
        os.makedirs(os.path.dirname(d), exist_ok=True)
    except OSError as e:
        raise UsageError("cannot create the results folder 'results' here: %s; run from "
                         "a folder you can write to, or give -o DIR" % e.strerror)


def remove_stale(folder, written):
    """Remove from @folder the files of RESULT_FILES a new result did not write
    (@written: its file names): what an earlier result left there."""
    for name in RESULT_FILES:
        if name not in written:
            try:
                os.unlink(os.path.join(folder, name))
            except (FileNotFoundError, IsADirectoryError):
                pass        # a folder of that name is no file of a result: left alone
            except OSError as e:
                raise UsageError("%s: cannot remove what an earlier result left there: %s"
                                 % (os.path.join(folder, name), e.strerror))


def write_result_folder(result, outdir, copies=(), default=False):
    """Write @result (a document) as @outdir/result.json with @copies [(name, source
    path)] beside it: a new folder appears whole (built hidden, then renamed), an
    existing one gets the files replaced one by one and loses those an earlier
    result left (remove_stale). @default: @outdir is new_results_dir's choice, not
    -o (its results/ is created when missing). UsageError when it cannot."""
    text = dumps_json(result) + "\n"
    if default:
        make_results_root(outdir)
    check_output_dir(outdir)
    try:
        if os.path.isdir(outdir):
            for name, src in copies:
                tmp = os.path.join(outdir, "." + name + ".tmp")
                shutil.copyfile(src, tmp)
                os.replace(tmp, os.path.join(outdir, name))
            write_atomic(os.path.join(outdir, NAME), text)
            remove_stale(outdir, [NAME] + [name for name, _ in copies])
            return
        parent = os.path.dirname(outdir.rstrip("/")) or "."
        work = os.path.join(parent, ".%s.partial-%d" % (os.path.basename(outdir.rstrip("/")),
                                                        os.getpid()))
        try:
            os.mkdir(work)
        except OSError as e:
            raise create_error(outdir, e.errno)
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

