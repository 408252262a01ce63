# SPDX-License-Identifier: GPL-2.0-only
"""report - jtr report: one self-contained HTML page (plots embedded) of a
result, of two compared, or of a jtr suite folder, with the PNGs beside it."""
import sys

from ..cli.parser import Count, JtrParser, add_output, add_quantity
from ..cli.progress import Progress
from ..drivers.report import write_report
from ..formats import legacy

DESCRIPTION = """\
Write a report of a result as one HTML page that needs no network (the plots are
inline SVG, their text stays text) and the plots as PNG files beside it.

One result: a summary at the top (p50 ... max and time lost in people's units,
the largest causes with their % of the outliers' time, every warning once), then

  percentiles.png  percentile spectrum, HdrHistogram style: x = 1/(1-p) on a log
                   scale from 50 % to the maximum, 99.9 ... 99.9999 % and max marked
  timeline.png     (attributed runs) every logged outlier over the run's time,
                   coloured by its main cause, a lane per CPU, and the time lost
                   per cause over the run, stacked
  causes.png       (attributed runs) outlier time per cause category, linear
                   shares with % labels, with the largest names in each
  histogram.png    loop times (ns, log) against bucket counts (log), per run
  budget.png       (jtr run ping, pub) the outliers' path, phase by phase
  decomposition.png (jtr run wake) the worst late wake-ups taken apart
  added.png        (jtr run send) what the send path adds per cause, send less null

and tables for people (runs, causes per side and phase for ping/pong and
pub/sub, worst outliers, host), of one quantity (the tool's default, or
--quantity NAME; a ping result's rtt_from_intended, not its three runs pooled);
every number as result.json spells it in a closed section at the end. Hovering
an outlier point or a cause bar shows its numbers and causal chain.

Two results (A, then B): the comparison page: the verdict of 'jtr compare A B'
first (or why the results are not comparable), its table with the max and the
counts, A's and B's percentile spectra on one plot (spectra.png), the time lost
per cause A against B, and A's and B's summaries side by side.

jtr null's 10 ns histogram graphs and gnuplot files (counts on a log scale,
buckets from 0 to histo_buckets x 10 ns):
  plot_A_v_B-N.png     run N of A against run N of B, for two results; and for a
                       result of send runs (send_1, null_1, ...) each send run
                       against the null loop of the same mean: plot_A_v_null-N.png
  A.gp, A.txt          the gnuplot data file and text summary of each result on
                       such a graph (jtr null writes them itself as null.gp and
                       summary.txt; these are the same bytes)
  plot_A-N.png         (--gnuplot) each run alone, and A.gp and A.txt for any result

Given a folder written by 'jtr suite': the warnings once at the top, a table of
the items, every item's spectrum on one plot, then per item small plots on one
range (send runs beside their null runs, the clock_gettime-timed null
loop beside the RDTSC one), and links to every item's 10 ns graphs, .gp and .txt."""

EXAMPLES = """\
  jtr report results/latest
  jtr report -o /tmp/rep results/20261122-041305-vm-gap
  jtr report before-tuning after-tuning       # before/after overlays and the comparison
  jtr report --gnuplot results/latest         # also latest.gp, latest.txt, plot_latest-1.png
  jtr report --quantity rtt_from_send ping1 ping2   # two ping results on that quantity
  jtr suite -o s && jtr report s              # every item of a suite on one page"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [-o DIR] [--gnuplot] [--histo-buckets N] RESULT "
                              "[RESULT_B]\n       %(prog)s [-o DIR] SUITE_DIR",
                  description=DESCRIPTION, examples=EXAMPLES)
    add_output(p, "where to write report.html and the PNGs (default: RESULT/report for one "
                  "result or a suite, ./report-A-vs-B for two); a new folder's parent must "
                  "exist, an existing folder is written into")
    p.add_argument("--gnuplot", action="store_true",
                   help="also the 10 ns graphs and gnuplot files of a result that has no pair")
    p.add_argument("--histo-buckets", metavar="N", type=Count(1, legacy.MAX_BUCKETS),
                   help="10 ns buckets of those files and graphs (default: the result's own, "
                        "jtr null -H, else enough for 99.9 %% of the samples and at least 200)")
    add_quantity(p, mixed=True)
    p.add_operands("paths", "RESULT", "a results folder or its result.json (two: A and B); "
                   "or a jtr suite folder")
    return p


def run(opts):
    progress = Progress("jtr report", sys.stderr)
    line = write_report(opts.paths, opts.output, {
        "gnuplot": opts.gnuplot, "histo_buckets": opts.histo_buckets,
        "quantity": opts.quantity, "mixed": opts.mixed, "progress": progress})
    progress.done()
    print(line)
    return 0
