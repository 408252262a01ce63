# SPDX-License-Identifier: GPL-2.0-only
"""attribute - jtr attribute RESULTS_DIR: explain a run's outliers again."""
import json
import os

from ..attribution.attribute import DEFAULT_SLACK_NS
from ..cli.parser import JtrParser, add_attribution_options, add_cross_check_options
from ..drivers.attribute import attribute_csv, attribute_into, attribution_of
from ..drivers.progress import Progress
from ..errors import UsageError
from ..render.attribution import cross_check_lines, format_table
from ..results.result import load_result
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
    if opts.outliers is not None:
        return run_csv(opts)
    if len(opts.dirs) != 1:
        raise UsageError("give one results folder (the gap run to explain); see "
                         "'jtr attribute --help'")
    d = opts.dirs[0]
    if not os.path.isdir(d):
        raise UsageError("%s: not a results folder" % d)
    if is_dump(d) and opts.events is None:
        # jtr watch's flight-recorder dump: its interruptions against its events
        opts.outliers, opts.events, opts.dirs = os.path.join(d, "outliers.csv"), d, []
        return run_csv(opts)
    if opts.events is not None and not os.path.exists(opts.events):
        raise UsageError("--events %s: no such file or folder" % opts.events)
    if (opts.sched_data is not None or opts.cross_check_min is not None) and \
            not opts.cross_check:
        raise UsageError("--sched-data and --cross-check-min go with --cross-check; see "
                         "'jtr attribute --help'")
    xc = {"sched_data": opts.sched_data, "min_ns": opts.cross_check_min} \
        if opts.cross_check else None
    result = load_result(d)
    progress = Progress("jtr attribute")
    kw = {"slack_ns": opts.slack, "top": opts.top, "events_path": opts.events,
          "cross_check": xc, "progress": progress}
    try:
        if not opts.no_write and not opts.json:
            lines = attribute_into(result, split=opts.by == "pid", **kw)
            a = check = None
        else:
            a, check = attribution_of(result, **kw)
    finally:
        progress.done()
    if a is not None:
        cc = check(result) if check else None
        if opts.json:
            print(json.dumps({"attribution": a, "cross_check": cc} if cc else a, indent=2))
            return 0
        lines = format_table(a, opts.by == "pid")
        if cc:
            lines += [""] + cross_check_lines(cc, a["outliers"].get("start_ns") or 0)
    for line in lines:
        print(line)
    return 0


def is_dump(d):
    """A folder of jtr watch's dumps: outliers.csv and events.bin, no result.json."""
    return not os.path.lexists(os.path.join(d, "result.json")) and all(
        os.path.isfile(os.path.join(d, f)) for f in ("outliers.csv", "events.bin"))


def run_csv(opts):
    """jtr attribute --outliers FILE --events TRACE: an application's own outliers."""
    if opts.dirs:
        raise UsageError("--outliers %s explains that file; give no results folder beside it"
                         % opts.outliers)
    if opts.events is None:
        raise UsageError("--outliers %s: give the trace to charge them against with --events "
                         "DIR (a jtr trace folder)" % opts.outliers)
    if not os.path.exists(opts.events):
        raise UsageError("--events %s: no such file or folder" % opts.events)
    if opts.cross_check:
        raise UsageError("--cross-check goes with a results folder, not --outliers")
    a = attribute_csv(opts.outliers, opts.events, slack_ns=opts.slack, top=opts.top)
    if opts.json:
        print(json.dumps(a, indent=2))
    else:
        for line in format_table(a, opts.by == "pid"):
            print(line)
    return 0
