"""export - jtr export: results as HdrHistogram interval logs (--hlog) and as a
Prometheus textfile for node_exporter's textfile collector (--prom).
docs/interop.md says what maps to what and the limits."""
import sys

from ..cli.parser import Count, JtrParser, OutputPath, add_quantity
from ..errors import UsageError
from ..formats import hdrlog, prom
from ..results.quantity import selected
from ..results.result import load_result
from ..system.files import check_writable, write_atomic

DESCRIPTION = """\
Write results in other tools' formats. RESULT is a results folder or its
result.json; give --hlog, --prom or both. FILE '-' is standard output.
Every run is written on its own (nothing is pooled), named with the quantity it
measures (--prom: a quantity label, gap, rtt_from_intended, ...; --hlog: a
comment line naming each tag's); --quantity NAME writes only that quantity's
runs."""

EXAMPLES = """\
  jtr export --hlog cpu1.hlog results/latest
  jtr export --hlog before.hlog --prom /var/lib/node_exporter/textfile/jtr.prom results/latest
  jtr export --prom - results/latest results/20261122-041305-vm-gap
  jtr export --quantity rtt_from_intended --hlog rtt.hlog ping-result"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [--hlog FILE] [--prom FILE [--top N]] RESULT...",
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
    p.add_argument("--top", metavar="N", type=Count(0, 1000), default=prom.DEFAULT_TOP,
                   help="causes per result in --prom (default %d; 0: none)" % prom.DEFAULT_TOP)
    add_quantity(p)
    p.add_operands("results", "RESULT", "a results folder or its result.json")
    return p


def write_out(path, text, opt):
    if path == "-":
        sys.stdout.write(text)
        return
    try:
        write_atomic(path, text)
    except OSError as e:
        raise UsageError("%s %s: cannot write: %s" % (opt, path, e.strerror))


def run(opts):
    if opts.hlog is None and opts.prom is None:
        raise UsageError("say what to write: --hlog FILE, --prom FILE or both; see "
                         "'jtr export --help'")
    if not opts.results:
        raise UsageError("give at least one result (a results folder or its result.json)")
    if opts.hlog == "-" and opts.prom == "-":
        raise UsageError("--hlog and --prom cannot both go to standard output")
    for opt in ("hlog", "prom"):
        if getattr(opts, opt):
            check_writable(getattr(opts, opt), "--" + opt)
    labels = opts.results
    results = [load_result(p) for p in labels]
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
