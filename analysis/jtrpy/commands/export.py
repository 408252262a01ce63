# SPDX-License-Identifier: GPL-2.0-only
"""export - jtr export: results as HdrHistogram interval logs (--hlog), as a
Prometheus textfile for node_exporter's textfile collector (--prom), and a run's
kernel events and outliers as a trace for Perfetto and chrome://tracing
(--perfetto). docs/interop.md says what maps to what and the limits."""
import os
import sys

from ..attribution import wake
from ..cli.parser import Count, JtrParser, OutputPath, add_quantity
from ..drivers.attribute import attribution_of
from ..errors import UsageError
from ..formats import hdrlog, perfetto, prom
from ..results.outliers import read_outlier_log
from ..results.quantity import selected
from ..results.result import load_result
from ..system.files import check_writable, write_atomic
from ..trace.events import read_events

DESCRIPTION = """\
Write results in other tools' formats. RESULT is a results folder or its
result.json; give --hlog, --prom, --perfetto or several. FILE '-' is standard
output.
Every run is written on its own (nothing is pooled), named with the quantity it
measures (--prom: a quantity label, gap, rtt_from_intended, ...; --hlog: a
comment line naming each tag's); --quantity NAME writes only that quantity's
runs. --perfetto takes one result recorded with the tracer (jtr run) and writes
all its kernel events and outliers (--quantity does not apply), a process per
CPU; open the file in ui.perfetto.dev or chrome://tracing."""

EXAMPLES = """\
  jtr export --hlog cpu1.hlog results/latest
  jtr export --hlog before.hlog --prom /var/lib/node_exporter/textfile/jtr.prom results/latest
  jtr export --prom - results/latest results/20261122-041305-vm-gap
  jtr export --quantity rtt_from_intended --hlog rtt.hlog ping-result
  jtr export --perfetto run.json results/latest     (then open run.json in ui.perfetto.dev)"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [--hlog FILE] [--prom FILE [--top N]] [--perfetto FILE] "
                        "RESULT...",
                  description=DESCRIPTION, examples=EXAMPLES)
    p.add_argument("--hlog", metavar="FILE", type=OutputPath("file", "cpu1.hlog"),
                   help="an HdrHistogram interval log: one line per run (tagged with the "
                        "run's name, cpu1, ...), its time span and its histogram in "
                        "HdrHistogram's compressed encoding, values in ns. Read by "
                        "HistogramLogAnalyzer and HdrHistogram's log readers (Java, Python "
                        "hdrhistogram, ...). Every jtr bucket's count is placed at the "
                        "bucket's highest value (clamped to the run's min and max), so the "
                        "percentiles read back are jtr's")
    p.add_argument("--prom", metavar="FILE", type=OutputPath("file", "jtr.prom"),
                   help="the headline numbers in Prometheus text format for node_exporter's "
                        "textfile collector (per run: percentiles as jtr_loop_seconds with a "
                        "quantile label, max, %% time lost, outliers/s; per result: the "
                        "largest causes' share and time per second), labels host, cpu, tool, "
                        "profile, quantity (and category, cause). Written to a temporary file and "
                        "renamed, as the collector needs. Of results with the same labels the "
                        "newest is kept")
    p.add_argument("--perfetto", metavar="FILE", type=OutputPath("file", "run.json"),
                   help="one result's kernel events and outliers as a trace (Trace Event "
                        "JSON) for ui.perfetto.dev and chrome://tracing: a process per CPU "
                        "with tracks for its outliers (inside the probe's run, named by "
                        "their cause, the causes in args), interrupts (hardirqs, timer "
                        "ticks, IPIs, NMIs, hrtimers), softirqs and tasks (who ran, "
                        "workqueue items; page faults and wake-ups as instants); about 100 "
                        "bytes per event of the log and 200 per outlier. The result needs "
                        "its event log: record it with the tracer (jtr run)")
    p.add_argument("--top", metavar="N", type=Count(0, 1000), default=prom.DEFAULT_TOP,
                   help="causes per result in --prom (default %d; 0: none)" % prom.DEFAULT_TOP)
    add_quantity(p)
    p.add_operands("results", "RESULT", "a results folder or its result.json")
    return p


def write_out(path, text, opt):
    """Write @text (a str, or pieces of it) to @path ('-': standard output, piece by
    piece)."""
    if path == "-":
        if isinstance(text, str):
            sys.stdout.write(text)
            return
        sys.stdout.flush()
        for piece in text:
            sys.stdout.buffer.write(piece.encode("utf-8"))
        sys.stdout.buffer.flush()
        return
    try:
        write_atomic(path, text if isinstance(text, str) else "".join(text))
    except OSError as e:
        raise UsageError("%s %s: cannot write: %s" % (opt, path, e.strerror))


def perfetto_trace(result, label):
    """The pieces of @result's trace for --perfetto: its event log, its outliers
    with the cause each was charged to and its runs."""
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
                       each=keep, decomposed=rows)
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
    return perfetto.trace_chunks(log, outliers, perfetto.run_slices(result), about)


def run(opts):
    outputs = ("hlog", "prom", "perfetto")
    if all(getattr(opts, o) is None for o in outputs):
        raise UsageError("say what to write: --hlog FILE, --prom FILE, --perfetto FILE or "
                         "several; see 'jtr export --help'")
    if not opts.results:
        raise UsageError("give at least one result (a results folder or its result.json)")
    stdout = ["--" + o for o in outputs if getattr(opts, o) == "-"]
    if len(stdout) > 1:
        raise UsageError("%s cannot both go to standard output" % " and ".join(stdout))
    if opts.perfetto is not None and len(opts.results) != 1:
        raise UsageError("--perfetto writes the trace of one result; give one (%d given)"
                         % len(opts.results))
    for opt in outputs:
        if getattr(opts, opt):
            check_writable(getattr(opts, opt), "--" + opt)
    labels = opts.results
    results = [load_result(p) for p in labels]
    if opts.perfetto:
        write_out(opts.perfetto, perfetto_trace(results[0], labels[0]), "--perfetto")
    if opts.quantity:
        results = [selected(r, opts.quantity, p)[0] for r, p in zip(results, labels)]
    if opts.hlog:
        hdrlog.check_exportable(results, labels)
        write_out(opts.hlog, hdrlog.hlog_text(results, labels), "--hlog")
    if opts.prom:
        text, notes = prom.prom_text(results, labels, opts.top)
        for n in notes:
            print("jtr export: %s" % n, file=sys.stderr)
        write_out(opts.prom, text, "--prom")
    return 0
