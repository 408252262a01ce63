# SPDX-License-Identifier: GPL-2.0-only
"""attribute - jtr attribute RESULTS_DIR: explain a run's outliers again."""
import json
import sys

from ..attribution.attribute import DEFAULT_SLACK_NS
from ..cli.parser import JtrParser, add_attribution_options, add_cross_check_options
from ..cli.progress import Progress
from ..drivers.attribute import attribute_job
from ..units import fmt_ns

DESCRIPTION = """\
Charge each outlier of a run (gap, null, send; ping and pub runs of jtr run on
both ends) to the kernel events the tracer saw on its CPUs in its time window,
print the causes as a table, and store them in RESULTS_DIR/result.json
("attribution") and RESULTS_DIR/attribution.txt. A dump of jtr watch's flight
recorder (outliers.csv and events.bin, no result.json) has its interruptions
charged to their events, and is printed only. With --outliers, the outliers
are an application's own: a CSV any program can write (header
cpu,start_ns,length_ns and an optional label column; CLOCK_MONOTONIC ns; see
docs/attribution.md), charged against a jtr trace log given with --events."""

EXAMPLES = """\
  jtr attribute results/latest
  jtr attribute --slack 2us --top 5 results/20261122-041305-vm-gap
  jtr attribute --cross-check results/latest
  sudo jtr trace -c 1 -d 30 -o tr & jtr gap -c 1 -d 20 -o g; wait; jtr attribute --events tr g
  sudo jtr trace -c 2 -d 60 -o tr & ./my-app; wait; jtr attribute --outliers app.csv --events tr"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [OPTIONS] RESULTS_DIR", description=DESCRIPTION,
                  examples=EXAMPLES)
    p.add_argument("--events", metavar="PATH",
                   help="the tracer's events.bin or its folder (default RESULTS_DIR)")
    p.add_argument("--outliers", metavar="FILE",
                   help="an application's outlier log (CSV: cpu,start_ns,length_ns[,label]) "
                        "to charge instead of a results folder's; needs --events")
    add_attribution_options(p, fmt_ns(DEFAULT_SLACK_NS))
    p.add_argument("--json", action="store_true",
                   help="print the attribution as JSON instead of the table (with "
                        "--cross-check: {\"attribution\": ..., \"cross_check\": ...})")
    p.add_argument("--no-write", action="store_true",
                   help="print only; change nothing in RESULTS_DIR")
    add_cross_check_options(p, attribute=True)
    p.add_operands("dirs", "RESULTS_DIR", "the results folder of the gap run to explain")
    return p


def run(opts):
    out = attribute_job(opts.dirs, {
        "outliers": opts.outliers, "events": opts.events, "slack_ns": opts.slack,
        "top": opts.top, "by_pid": opts.by == "pid", "json": opts.json,
        "write": not opts.no_write, "cross_check": opts.cross_check,
        "sched_data": opts.sched_data, "cross_check_min": opts.cross_check_min},
        Progress("jtr attribute", sys.stderr))
    if opts.json:
        print(json.dumps(out, indent=2))
    else:
        for line in out:
            print(line)
    return 0
