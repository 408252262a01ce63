# SPDX-License-Identifier: GPL-2.0-only
"""probe - jtr gap and jtr wake given a gate (--max-latency, --max-lost, --junit):
the probe runs as it does alone (without a gate jtr hands over to it with
exec), then its result is judged where jtr run's is (drivers/gates.py), the
"gates" section added to its result.json and the JUnit report written by the
front end, as the user who ran jtr (a setuid or capable probe never writes
the report). The gate options may stand anywhere on the line; every other
option goes to the probe as it is."""
import sys

from ..cli.parser import JtrParser, add_gates, check_junit_path
from ..drivers.run import probe_job
from ..errors import UsageError
from ..render import gates as gate_text
from ..results import probes as P
from ..values import format_duration


def make_parser(prog):
    p = JtrParser(prog, add_help=False)
    add_gates(p)
    return p


def parse(parser, args):
    probe = parser.prog.split()[-1]
    opts, rest = parser.parse_known_args(args)
    if opts.max_lost is not None and P.GATE_LOST not in P.BY_TOOL[probe].gates:
        raise UsageError("--max-lost: a wake-up's latency is no CPU time lost (the probe "
                         "sleeps between wake-ups); gate it with --max-latency")
    check_junit_path(opts.junit)
    opts.probe, opts.probe_args = probe, rest
    opts.command = " ".join(["jtr", probe] + list(args))
    opts.quiet = any(w in ("-q", "--quiet") for w in
                     (rest[:rest.index("--")] if "--" in rest else rest))
    return opts


def hint(opts):
    """How to get the causes a probe alone does not measure."""
    lat = "" if opts.max_latency is None else " --max-latency %s" % format_duration(
        opts.max_latency)
    lost = "" if opts.max_lost is None else " --max-lost %g%%" % opts.max_lost
    return "'jtr run %s ...%s%s' (as root) names them" % (opts.probe, lat, lost)


def run(opts):
    prog = "jtr %s" % opts.probe
    job, rc = probe_job(opts.probe, opts.probe_args, (opts.max_latency, opts.max_lost),
                        opts.junit, opts.command, hint(opts))
    if job.result is None:
        return rc
    if job.cases and not opts.quiet:
        for line in gate_text.lines(job.cases):
            print(line)
    if opts.junit and not opts.quiet:
        print("junit: %s" % opts.junit)
    sys.stdout.flush()
    # the failed gates last, on stderr: where a CI log ends
    for line in gate_text.failure_lines(job.cases, prog):
        print(line, file=sys.stderr)
    return rc
