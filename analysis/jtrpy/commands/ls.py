# SPDX-License-Identifier: GPL-2.0-only
"""ls - jtr ls: past results with their headline numbers, newest first."""
import json

from ..cli.parser import JtrParser, add_quantity, warn
from ..drivers.ls import FORMAT, find, list_results
from ..render.ls import format_table

DESCRIPTION = """\
List past results, newest first, one a line: when it started (UTC), the tool,
the CPUs, the quantity the numbers are about (the tool's default, or --quantity
NAME: a ping result's rtt_from_intended, not its three runs pooled), how long it
ran, its p99, p99.99 and max, the time lost to interruptions (where a sample is
CPU time: gap, null, send) or the excess latency per second of run (where it is
a latency: wake, ping, sub), the largest cause (when attributed), the tuning
profile that was active, whether the run was stopped early, and whether it is a
valid measurement (a run that did not keep its schedule, or whose threshold came
from a slow warm-up, is marked invalid). Each FOLDER is a results folder or a
folder of them (default: results). Folders that hold no jtr result are skipped
and counted on the last line; a result that cannot be read (damaged, or not what
jtr wrote) is skipped with a warning line on stderr saying why; results/latest
is not listed twice. With --quantity, results without that quantity are left out
and counted on the last line (none with it: exit status 2, naming the quantities
the results have)."""

EXAMPLES = """\
  jtr ls
  jtr ls --json | python3 -m json.tool
  jtr ls results /srv/jitter/results before-tuning
  jtr ls --quantity rtt_from_send       # the ping results, on their round trip from the send"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [--json] [--quantity NAME] [FOLDER...]",
                  description=DESCRIPTION, examples=EXAMPLES)
    p.add_argument("--json", action="store_true",
                   help="print the list as JSON (" + FORMAT + "): per result its path and "
                        "the numbers (ns, %%), the folders skipped and the damaged results with "
                        "why (damaged: [{path, error}]); without_quantity: the results "
                        "left out by --quantity")
    add_quantity(p)
    p.add_operands("folders", "FOLDER", "a results folder, or a folder of them")
    return p


def run(opts):
    found = find(opts.folders)
    for _, why in found.damaged:
        warn("jtr ls", why)
    doc = list_results(found, opts.quantity)
    if opts.json:
        print(json.dumps(doc, indent=2))
        return 0
    for line in format_table(doc, opts.quantity):
        print(line)
    return 0
