# SPDX-License-Identifier: GPL-2.0-only
"""export - jtr export: results as HdrHistogram interval logs (--hlog), as a
Prometheus textfile for node_exporter's textfile collector (--prom), and a run's
kernel events and outliers as a trace for Perfetto and chrome://tracing
(--perfetto). docs/interop.md says what maps to what and the limits."""
import sys

from ..cli.parser import Count, JtrParser, OutputPath, add_quantity
from ..cli.progress import Progress
from ..drivers.export import OUTPUTS, export
from ..errors import UsageError
from ..formats import prom

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


def run(opts):
    outputs = {o: getattr(opts, o) for o in OUTPUTS}
    if all(v is None for v in outputs.values()):
        raise UsageError("say what to write: --hlog FILE, --prom FILE, --perfetto FILE or "
                         "several; see 'jtr export --help'")
    if not opts.results:
        raise UsageError("give at least one result (a results folder or its result.json)")
    if opts.perfetto is not None and len(opts.results) != 1:
        raise UsageError("--perfetto writes the trace of one result; give one (%d given)"
                         % len(opts.results))
    for note in export(opts.results, outputs, sys.stdout, quantity=opts.quantity,
                       top=opts.top, progress=Progress("jtr export", sys.stderr)):
        print("jtr export: %s" % note, file=sys.stderr)
    return 0
