# SPDX-License-Identifier: GPL-2.0-only
"""jtr export's job: the results loaded and written in other tools' formats
(formats/hdrlog.py, prom.py, perfetto.py; a traced run's events and outliers
for --perfetto) to their files or standard output; the command prints the
notes it is handed."""
import os

from ..attribution import wake
from ..errors import UsageError
from ..formats import hdrlog, perfetto, prom
from ..results.outliers import read_outlier_log
from ..results.quantity import selected
from ..results.result import load_result
from ..system.files import check_outputs, write_output
from ..trace.events import read_events
from .attribute import attribution_of

# the options that name a file to write, in the order they are written
OUTPUTS = ("hlog", "prom", "perfetto")


def write_out(path, text, opt, stdout):
    """Write @text (a str, or pieces of it) to @path ('-': the command's standard
    output @stdout), piece by piece: a trace larger than memory is never whole
    in it."""
    if path == "-":
        if isinstance(text, str):
            stdout.write(text)
            return
        stdout.flush()
        for piece in text:
            stdout.buffer.write(piece.encode("utf-8"))
        stdout.buffer.flush()
        return
    try:
        write_output(path, text)
    except OSError as e:
        raise UsageError("%s %s: cannot write: %s" % (opt, path, e.strerror))


def perfetto_trace(result, label, progress=None):
    """The pieces of @result's trace for --perfetto: its event log, its outliers
    with the cause each was charged to and its runs; @progress (a cli Progress, or
    None) told what is being done."""
    events = result.file("events")
    if events is None or not os.path.lexists(events):
        raise UsageError("%s: no event log (%s): --perfetto shows the kernel events the "
                         "tracer recorded; run it with the tracer: jtr run -o DIR"
                         % (label, os.path.basename(events or "events.bin")))
    outliers = []
    if os.path.lexists(result.file("outliers")):
        att = result.get("attribution") if isinstance(result.get("attribution"), dict) else {}
        # every outlier's charges, from the attribution's walk over the log (with the
        # slack of the stored attribution): its cause and parts, where the result
        # keeps only the category (per_outlier) and the worst's chains; it costs
        # about as much as the export. The log it reads is let go before it is read
        # again below: one copy in memory at a time
        walked, rows, extra = {}, [], {}
        slack = (att.get("method") or {}).get("slack_ns")

        def keep(cpu, start, length, parts, pids, works):
            walked[(cpu, start)] = parts
        attribution_of(result, slack_ns=slack if isinstance(slack, int) else None, top=0,
                       each=keep, decomposed=rows, progress=progress)
        # a jtr wake result is taken apart, not charged: each late wake-up named by
        # the component that took most of it, the components in args
        labels = {k: text for k, text, _ in wake.COMPONENTS}
        for cpu, start, length, comp, dom, blocker in rows:
            walked[(cpu, start)] = [(labels.get(dom, dom), blocker, length)]
            extra[(cpu, start)] = {"components_ns": {k: v for k, v in (comp or {}).items()
                                                     if v}}
        outliers = perfetto.outlier_slices(read_outlier_log(result), walked,
                                           att.get("worst"), extra)
    log = read_events(events, within=result.folder)
    about = {"result": label, "tool": result.get("tool"),
             "host": (result.get("host") or {}).get("hostname"),
             "started_at": result.get("started_at")}
    params = result.get("params") if isinstance(result.get("params"), dict) else {}
    call = params.get("function") if result.get("tool") == "app" else None
    return perfetto.trace_chunks(log, outliers, perfetto.run_slices(result), about, progress,
                                 call if isinstance(call, str) else None)


def export(paths, outputs, stdout, quantity=None, top=prom.DEFAULT_TOP, progress=None):
    """Write the results at @paths (as the user named them) to @outputs ({"hlog",
    "prom", "perfetto": FILE, '-' for the command's standard output @stdout, or
    None}): --perfetto's
    trace of the one result, then, of @quantity's runs (None: all), the hlog and
    the Prometheus textfile with @top causes per result. A generator: it yields
    the notes to print (results --prom leaves out) as they come, before the file
    they are about is written, and writes nothing until it is iterated."""
    named = [("--" + opt, outputs.get(opt)) for opt in OUTPUTS]
    check_outputs(named)    # writable, no two the same: before anything is read
    results = [load_result(p) for p in paths]
    check_outputs(named, [f for r in results for f in r.inputs()])    # none an input
    if outputs.get("perfetto"):
        write_out(outputs["perfetto"], perfetto_trace(results[0], paths[0], progress),
                  "--perfetto", stdout)
        if progress:
            progress.done()
    if quantity:
        results = [selected(r, quantity, p)[0] for r, p in zip(results, paths)]
    if outputs.get("hlog"):
        hdrlog.check_exportable(results, paths)
        write_out(outputs["hlog"], hdrlog.hlog_text(results, paths), "--hlog", stdout)
    if outputs.get("prom"):
        text, notes = prom.prom_text(results, paths, top)
        yield from notes
        write_out(outputs["prom"], text, "--prom", stdout)
