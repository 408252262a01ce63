# SPDX-License-Identifier: GPL-2.0-only
"""fleet - jtr fleet: one table and one HTML page over many hosts' results, the
hosts that differ from the others flagged with the cause that makes them differ."""
import json

from ..cli.parser import (
    Count,
    Duration,
    JtrParser,
    Percent,
    Words,
    add_accept_invalid,
    add_output,
    warn,
)
from ..drivers.fleet import fleet_job
from ..render import fleet as render
from ..results import fleet

DESCRIPTION = """\
Put many hosts' results side by side: one row per host and probe (its newest
result of that probe) with p99, p99.99, max, the time lost and the largest causes
with their share of it, and a flag on the hosts that differ from the others,
naming the cause that makes them differ. -o writes the same as one HTML page
that needs no network, with a chart per probe of each host's time lost by cause
category.

Each FOLDER is a results folder, or a folder of hosts as the Ansible role
(ansible/, docs/fleet.md) fetches them: DIR/HOST/..., one sub-folder per host,
named after it, with jtr results anywhere below it. A result given on its own,
or in a plain results folder, belongs to the host its result.json names.

The rule: each host is held against the OTHER hosts that ran the same probe. Per
figure (--metrics: time lost and p99.99 by default) the baseline is the median
of the others' figures; a host is flagged when its figure is above that median
by more than --mad-k times the others' spread (1.4826 x their median absolute
deviation), is at least --min-rise above it (100 %: twice it), and exceeds it by
--min-latency (a latency) or --min-lost points (the time lost). With two hosts
each is held against the other and the spread is 0, so the practical minimums
decide. A percentile is judged only where 10 samples lie beyond it (p99.99 from
100,000 samples on). The cause named is the one whose time lost (its share of
the outlier time times the time lost) exceeds the others' median time lost to
it by the most; causes are matched across hosts without pids and priorities.

Exit status: 0, also when hosts are flagged (1 with --fail-on-flagged); 2 when
no result is found or one cannot be read."""

EXAMPLES = """\
  jtr fleet fleet-results                          # DIR/HOST/... as ansible/fleet.yml fetches
  jtr fleet -o fleet.html fleet-results            # and the page
  jtr fleet --json fleet-results | python3 -m json.tool
  jtr fleet --fail-on-flagged fleet-results        # exit 1 when a host is flagged (CI)
  jtr fleet --metrics lost,p99,max --min-rise 50% a/results b/results
  jtr fleet host1-run host2-run host3-run          # results folders, hosts from result.json"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [-o FILE.html] [--json] [--fail-on-flagged] "
                              "[RULE OPTIONS] FOLDER...",
                  description=DESCRIPTION, examples=EXAMPLES)
    add_output(p, "write the page to FILE (HTML, self-contained), atomically", metavar="FILE")
    p.add_argument("--json", action="store_true",
                   help="print the table as JSON (" + fleet.FORMAT + "): per row the host, "
                        "probe, figures (ns, %%), causes with lost_pct, flags and the cause "
                        "named; the rule; flagged_hosts")
    p.add_argument("--fail-on-flagged", action="store_true",
                   help="exit 1 when a host is flagged (after printing and writing all)")
    p.add_argument("--metrics", metavar="LIST", type=Words(fleet.METRICS),
                   default=list(fleet.DEFAULT_METRICS),
                   help="the figures judged, comma-separated: %s (default %s)" % (
                       ",".join(fleet.METRICS), ",".join(fleet.DEFAULT_METRICS)))
    p.add_argument("--mad-k", metavar="N", type=Count(0, 1000), default=int(fleet.DEFAULT_K),
                   help="the robust margin: flagged only above the others' median + N x "
                        "their spread (default %d)" % fleet.DEFAULT_K)
    p.add_argument("--min-rise", metavar="PCT", type=Percent(0, 100000),
                   default=100 * (fleet.DEFAULT_RATIO - 1),
                   help="how far above the others' median a figure must be, in %%%% of it "
                        "(default %g %%%%: %gx)" % (100 * (fleet.DEFAULT_RATIO - 1),
                                                    fleet.DEFAULT_RATIO))
    p.add_argument("--min-latency", metavar="DUR", type=Duration(0, 3600 * 10 ** 9),
                   default=fleet.DEFAULT_MIN_LATENCY_NS,
                   help="the smallest difference in a latency that counts (default %s)"
                        % "1us")
    p.add_argument("--min-lost", metavar="PCT", type=Percent(0, 100),
                   default=fleet.DEFAULT_MIN_LOST_PCT,
                   help="the smallest difference in time lost that counts, in points "
                        "(default %g)" % fleet.DEFAULT_MIN_LOST_PCT)
    add_accept_invalid(p, "judge and use as the others' baseline")
    p.add_operands("folders", "FOLDER", "a results folder, or a folder of hosts' results "
                   "(DIR/HOST/...)")
    return p


def run(opts):
    rule = fleet.Rule(metrics=opts.metrics, k=float(opts.mad_k),
                      ratio=1 + opts.min_rise / 100.0, min_latency_ns=opts.min_latency,
                      min_lost_pct=opts.min_lost)

    def show(doc):          # before the page is written
        for line in render.warnings(doc):
            warn("jtr fleet", line)
        if opts.json:
            print(json.dumps(doc, indent=2))
        else:
            for line in render.format_text(doc):
                print(line)
    doc = fleet_job(opts.folders, rule, opts.accept_invalid, opts.output, show)
    if opts.output and not opts.json:
        print("jtr fleet: %s" % opts.output)
    return 1 if opts.fail_on_flagged and doc["flagged_hosts"] else 0
