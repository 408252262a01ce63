# SPDX-License-Identifier: GPL-2.0-only
"""suite - jtr suite: the standard set of measurements into one folder
(drivers/suite.py's suite_job plans and runs them; the lines: render/suite.py)."""
import sys

from ..cli.parser import (
    Count,
    CpuList,
    Duration,
    JtrParser,
    Words,
    add_old_letter,
    add_output,
    shared,
)
from ..drivers.suite import ITEMS, suite_job
from ..render import suite as show
from ..system.cpus import online_cpus
from ..vocab import TRANSPORTS

DESCRIPTION = """\
Run the standard set of measurements one after the other, each into its own
folder under DIR; then 'jtr report DIR' draws them all on one page.

  null         jtr null: the 100-cycle empty loop timed with RDTSC
  null-clock   jtr null -t clock: the same loop timed with clock_gettime
  clock        jtr clock: cost and steps of each clock source
  gap          jtr gap: back-to-back timestamps, every interruption logged
  send-KIND    jtr send -T KIND: send calls against a null loop of the same mean,
               in pairs (send_1, null_1, ...), per transport (udp and tcp on a
               loopback port free when the item starts, given with -P); only
               when jtr-send is built, else skipped with a line saying so"""

NOTES = """\
DIR/suite.json lists the items: name, tool, command, folder, status (done,
failed, interrupted, skipped, not run), exit status, start, end; each item's
output is in DIR/NAME.log. Ctrl-C (or SIGTERM, SIGHUP) stops the item that is
running (it writes what it measured), keeps what finished and marks the suite
partial. Exit status 0 when every item ran, 1 when one failed, 2 for bad
options, 130 when interrupted."""

EXAMPLES = """\
  jtr suite --quick -o /tmp/s && jtr report /tmp/s
  jtr suite -c 1 -o before-tuning
  jtr suite --only null,send --transports udp,shm -n 500K"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s [OPTIONS]", description=DESCRIPTION, notes=NOTES,
                  examples=EXAMPLES)
    p.add_argument("--quick", action="store_true",
                   help="short items for a first look or a test: 20K samples x 2 runs, gap "
                        "0.5 s, clock 20K reads, in seconds (default: null loops 2M samples x "
                        "3 runs, gap 10 s, clock 1M reads, send 500K samples x 3 pairs; about "
                        "40 s here, plus about 20 s per transport)")
    add_output(p, "the suite's folder (default results/DATE-HOST-suite): a new folder, whose "
                  "parent must exist")
    p.add_argument(*shared("-c"), metavar="LIST", type=CpuList(online_cpus),
                   help="CPUs to measure: gap measures them all, the others the first "
                        "(default: first isolated CPU, else the last online one)")
    p.add_argument(*shared("-n", "--samples"), dest="samples", metavar="COUNT",
                   type=Count(1, 10 ** 9),
                   help="samples per run of null, null-clock and send (default 2M, send 500K)")
    p.add_argument("--runs", metavar="RUNS", type=Count(1, 50),
                   help="runs of null and null-clock, pairs of send")
    add_old_letter(p, "-r", "--runs", "the runs", type=Count(1, 50), metavar="RUNS")
    p.add_argument(*shared("-d"), metavar="DURATION", type=Duration(10 ** 7, 30 * 86400 *
                                                                           10 ** 9),
                   help="gap's duration (default 10s; 500ms, 2m; a bare number is in seconds)")
    p.add_argument("--transports", metavar="LIST", type=Words(TRANSPORTS),
                   default=list(TRANSPORTS),
                   help="send's transports, comma-separated (default: all of %s)"
                        % ",".join(TRANSPORTS))
    p.add_argument("--only", metavar="LIST",
                   type=Words(ITEMS, lambda w: w.startswith("send-") and w[5:] in TRANSPORTS),
                   help="run only these items (names as above, comma-separated; send for "
                        "every send-KIND)")
    return p


def options(opts):
    """The job's settings (drivers/suite.py suite_job) from the parsed options."""
    return {"quick": opts.quick, "out": opts.output, "cpus": opts.cpus,
            "samples": opts.samples, "runs": opts.runs, "gap_ns": opts.duration,
            "transports": opts.transports, "only": opts.only}


def run(opts):
    def planned(folder, names, skipped):
        for line in show.plan_lines(folder, names, skipped):
            print(line)

    def progress(rec):
        # flushed: the line is out while the item runs (stdout may be a pipe)
        print(show.item_line(rec), flush=True)
    out = suite_job(options(opts), ["jtr suite"] + opts.argv, planned, progress)
    print(show.end_line(out))
    if out.interrupted:
        sys.stdout.flush()
        print("jtr suite: interrupted; partial results in %s/" % out.folder, file=sys.stderr)
    return out.rc
