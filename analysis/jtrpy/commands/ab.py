# SPDX-License-Identifier: GPL-2.0-only
"""ab - jtr ab PROFILE [OPTIONS] [-- PROBE [PROBE OPTIONS]]: does a tuning
profile help? Baseline runs, the profile applied, tuned runs, reverted,
compared; always reverted (error, Ctrl-C, SIGTERM, SIGHUP). The probe is any
of jtr run's, with its own options passed on as they are; drivers/ab.py's ab_job
checks what they need of the machine and runs the experiment."""
import sys

from ..cli.parser import (
    Count,
    Duration,
    JtrParser,
    add_accept_invalid,
    add_backend,
    add_no_tuned,
    add_partner_cpus,
    add_quantity,
    note,
    say,
    shared,
)
from ..cli.progress import Progress
from ..drivers.ab import ab_job
from ..errors import UsageError
from ..results.probes import RUN_PROBES
from ..system.cpus import online_cpus
from .run import app_options, parse_app

DESCRIPTION = """\
Measure whether a tuning profile helps: baseline runs on the machine as it is,
the profile applied (jtr tune apply), the same runs again, the profile reverted,
and the two sides compared (jtr compare: percentiles with bootstrap confidence
intervals, time lost, outliers/s, per-cause deltas, a verdict). With --repeat N
there are N runs a side, interleaved A B B A A B ..., so drift on a noisy
machine shows as run-to-run spread instead of as an effect. Each run is a
jtr run of PROBE (after '--'; gap when none is given) with its options as they
are, ping's jtr pong and pub's jtr sub started beside it, and the sides are
compared on the probe's default quantity (gap; null; send's send runs; ping's
rtt_from_intended; pub: the subscriber's latency_from_send) or --quantity.
PROBE may be app: 'jtr ab PROFILE -- app --func BIN:SYMBOL -- CMD' times every
call of your program's function in each run (jtr run app; the program started
anew for each). The profile is
reverted whatever happens: an error, or Ctrl-C, SIGTERM or SIGHUP. The first of
those stops the experiment: the run under way is kept (marked partial) and
compared with the rest, and the exit status is 130; later ones only wait for
the revert and the results to be written."""

NOTES = """\
Needs root (it applies a profile). Run it from a housekeeping CPU.
-d sets the length of a gap run; the other probes' own options set theirs (null:
-n samples, --runs runs; send: -n; ping and pub: -n messages, -r rate), and -d is
refused with them. jtr ab chooses each run's folder (-o in the probe's options
is refused). With --boot the runs are not interleaved: all the baseline runs
before the reboot, the tuned ones after it."""

EXAMPLES = """\
  sudo jtr ab jtr-latency -d 30
  sudo jtr ab jtr-isolate --cpus 1 --repeat 3
  sudo jtr ab jtr-latency --repeat 3 -- null -n 500K -r 1
  sudo jtr ab jtr-isolate --cpus 1 --pong-cpu 0 -- ping -T udp -1 -n 20K -r 10K
  sudo jtr ab jtr-latency --quantity rtt_from_send -- ping -T udp -1 -n 20K -r 10K
  sudo jtr ab jtr-isolate --cpus 1 --boot -o ab1; sudo reboot
  sudo jtr ab --resume ab1"""


def make_parser(prog):
    p = JtrParser(prog, usage="%(prog)s PROFILE [OPTIONS] [-- PROBE [PROBE OPTIONS]]",
                  description=DESCRIPTION, notes=NOTES, examples=EXAMPLES)
    p.add_argument(*shared("-c"), metavar="LIST",
                   help="CPUs to isolate (jtr-isolate, jtr-realtime) and to measure "
                        "(default: measure the default CPU of jtr run)")
    p.add_argument(*shared("-d"), metavar="DUR", dest="duration_ns",
                   type=Duration(10 ** 6, 30 * 86400 * 10 ** 9),
                   help="each gap run (default 10s; 500ms, 2m; a bare number is in seconds); "
                        "the other probes' options set their length")
    add_partner_cpus(p, online_cpus)
    p.add_argument("--repeat", metavar="N", type=Count(1, 100), default=1,
                   help="runs a side, 1 to 100 (default 1)")
    p.add_argument("--no-trace", action="store_false", dest="trace",
                   help="measure only (no kernel-event tracing, no per-cause deltas)")
    add_backend(p)
    add_no_tuned(p)
    p.add_argument(*shared("-o"), metavar="DIR",
                   help="results folder (default results/DATE-HOST-ab): a-1/, b-1/, ... "
                        "(each a jtr run results folder), ab.json, compare.json and "
                        "compare.txt")
    add_quantity(p)
    add_accept_invalid(p)
    p.add_argument("--boot", action="store_true",
                   help="the profile's boot options too: the baseline runs, the profile "
                        "applied with them (a grub drop-in), then reboot and go on with "
                        "--resume DIR")
    p.add_argument("--resume", metavar="DIR",
                   help="after the reboot --boot asked for: the tuned runs, the revert "
                        "(the boot options too) and the comparison of the experiment in DIR")
    p.add_operands("profile", "PROFILE", "the profile to test (see 'jtr tune list')")
    return p


def parse(parser, args):
    """jtr ab's options before '--'; after it the probe and its options (none: gap)."""
    args = list(args)
    probe, probe_args = "gap", []
    if "--" in args:
        i = args.index("--")
        args, rest = args[:i], args[i + 1:]
        if not rest or rest[0] not in RUN_PROBES + ("app",):
            raise UsageError("-- %s: give a probe after '--': one of %s or app, e.g. 'jtr "
                             "ab jtr-latency -- ping -T udp -n 20K'" % (
                                 rest[0] if rest else "", ", ".join(RUN_PROBES)))
        probe, probe_args = rest[0], rest[1:]
    opts = parser.parse_args(args)
    extra = [w for w in opts.profile[1:] if w in RUN_PROBES]
    if extra:
        raise UsageError("%s: put the probe after '--': jtr ab %s [OPTIONS] -- %s [ITS OPTIONS]"
                         % (extra[0], opts.profile[0], extra[0]))
    opts.probe, opts.probe_args = probe, probe_args
    # jtr run app's options, checked as it checks them (its program after its own --)
    opts.app = app_options(parse_app(probe_args)) if probe == "app" else None
    return opts


def options(opts):
    """The job's settings (drivers/ab.py ab_job) from the parsed options."""
    if opts.resume is not None:
        if opts.profile or opts.boot:
            raise UsageError("--resume DIR goes on with the experiment in DIR, its profile "
                             "and options as it was started: give nothing else")
        return {"resume": opts.resume}
    if not opts.profile:
        raise UsageError("give the profile to test, e.g. 'jtr ab jtr-latency'; see "
                         "'jtr tune list'")
    if len(opts.profile) > 1:
        raise UsageError("give one profile; '%s' is one too many" % opts.profile[1])
    return {"profile": opts.profile[0], "cpus": opts.cpus, "duration_ns": opts.duration_ns,
            "repeat": opts.repeat, "trace": opts.trace, "backend": opts.backend,
            "probe": opts.probe, "probe_args": opts.probe_args, "pong_cpu": opts.pong_cpu,
            "sub_cpu": opts.sub_cpu, "quantity": opts.quantity,
            "accept_invalid": opts.accept_invalid, "out": opts.output,
            "via_tuned": opts.via_tuned, "app": opts.app, "boot": opts.boot}


def run(opts):
    return ab_job(options(opts), say, note, Progress("jtr ab", sys.stderr))
