# SPDX-License-Identifier: GPL-2.0-only
"""trace - jtr trace --print: the tracer's event log for people. (jtr trace
without --print is the C tracer itself, run by exec.)"""
from ..cli.parser import JtrParser
from ..drivers.trace import trace_job
from ..errors import UsageError
from ..render.trace import event_lines

DESCRIPTION = """\
Print the tracer's binary event log for people, one event a line, time in
seconds from the start of the trace (default: results/latest). Without --print,
jtr trace is the tracer itself: see 'jtr trace --help'."""

EXAMPLES = """\
  jtr trace --print | less
  jtr trace --print results/20261122-041305-vm-gap/events.bin"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s --print [RESULTS_DIR | events.bin]",
                  description=DESCRIPTION, examples=EXAMPLES)
    p.add_argument("--print", action="store_true", required=True,
                   help="print the event log (the tracer's own options: jtr trace --help)")
    p.add_operands("paths", "LOG", "a results folder or its events.bin")
    return p


def run(opts):
    if len(opts.paths) > 1:
        raise UsageError("--print takes one results folder or events.bin; see "
                         "'jtr trace --print --help'")
    for line in event_lines(trace_job(opts.paths[0] if opts.paths else None)):
        print(line)
    return 0
