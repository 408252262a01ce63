# SPDX-License-Identifier: GPL-2.0-only
"""advise - jtr advise [--prove] RESULT: from the causes of a measurement to the
remedies that remove them, ranked by the time they would save; --prove measures
each one with jtr ab."""
import json
import sys
import textwrap

from ..cli.parser import (
    Count,
    Duration,
    JtrParser,
    add_accept_invalid,
    add_backend,
    add_no_tuned,
    add_output,
    note,
    say,
    shared,
)
from ..cli.progress import Progress
from ..drivers.advise import advise_job, prove, resume_prove
from ..errors import UsageError
from ..render.advise import format_advice, format_proof
from ..system.paths import tuned_layout

DESCRIPTION = """\
Say what to change to remove what a measurement lost. Each outlier of RESULT is
charged to its causes again (the event log beside it), each cause goes to the
rule that removes it (docs/tuning.md, "From cause to remedy": the tick to
nohz_full, kworkers' vmstat_update to vm.stat_interval, device IRQs to IRQ
affinity, preempting tasks off the CPU, RT throttling (a real-time task losing
its CPU to idle or a lower priority) to sched_rt_runtime_us=-1, ...), and the
remedies are ranked by the time the run lost to their causes. Each says what it
changes (tuned-format lines, or the boot line), what it needs (run time, a
reboot, a kernel option, the host) and whether this machine can do it, and why
not. The time no kernel event explains is the host's or the firmware's: the
advice for it is stated as out of the guest's reach. --prove applies the
remedies this machine can apply, as one generated profile, around jtr ab runs of
RESULT's own probe and options (interleaved, reverted whatever happens), and
prints per remedy the predicted saving, the measured one with its 95 % CI, and
whether the cause went away."""

NOTES = """\
--profile-dir writes a profile that loads on its own: the profile it builds on
(the one RESULT was measured with, else jtr-baseline) is written out in it, not
included. In tuned's user folder it is a profile tuned-adm can name:
{user}/NAME here ({tuned}; /etc/tuned/NAME before tuned 2.23,
/etc/tuned/profiles/NAME from 2.23).
--prove needs root and writes DIR (default results/DATE-HOST-advise): advice.json,
profile/jtr-advised/tuned.conf, ab/ (jtr ab's folder) and prove.json. Run it
from a housekeeping CPU, with no profile applied."""

EXAMPLES = """\
  jtr advise results/latest
  jtr advise --json results/latest
  sudo jtr advise --profile-dir {user}/jtr-advised results/latest
  sudo jtr advise --prove results/latest
  sudo jtr advise --prove --repeat 3 -d 10 --top 2 results/latest"""


def make_parser(prog):
    layout = tuned_layout()
    p = JtrParser(prog, usage="%(prog)s [OPTIONS] RESULT", description=DESCRIPTION,
                  notes="\n".join(textwrap.fill(para, 80) for para in NOTES.format(
                      user=layout["user"], tuned="tuned " + layout["version"] if layout["version"]
                      else "no tuned installed: 2.23's folder").split("\n--prove")[:1]) +
                  "\n--prove" + NOTES.split("\n--prove", 1)[1],
                  examples=EXAMPLES.format(user=layout["user"]))
    p.add_argument("--json", action="store_true",
                   help="print the advice as JSON (format jtr-advise/1)")
    p.add_argument("--profile-dir", metavar="DIR",
                   help="write the profile of the applicable remedies to DIR/tuned.conf "
                        "(then: sudo jtr tune apply DIR)")
    p.add_argument("--top", metavar="N", type=Count(1, 100),
                   help="only the N largest applicable remedies go into the profile")
    p.add_argument("--prove", action="store_true",
                   help="apply the profile around jtr ab runs of RESULT's probe, revert, and "
                        "measure each remedy's saving")
    p.add_argument("--repeat", metavar="N", type=Count(1, 100), default=1,
                   help="--prove: runs a side, interleaved (default 1)")
    p.add_argument(*shared("-d"), metavar="DUR", dest="duration_ns",
                   type=Duration(10 ** 6, 30 * 86400 * 10 ** 9),
                   help="--prove: each gap run (default: RESULT's duration)")
    p.add_argument("--boot", action="store_true",
                   help="--prove: the remedies' boot options too: the baseline runs, the "
                        "profile applied with them; reboot, then jtr advise --resume DIR")
    p.add_argument("--resume", metavar="DIR",
                   help="after that reboot: the tuned runs, the revert and each remedy's "
                        "saving of the --prove --boot experiment in DIR")
    add_backend(p)
    add_no_tuned(p, "--prove: ")
    add_accept_invalid(p, "advise on")
    add_output(p, "--prove: its folder (default results/DATE-HOST-advise)")
    p.add_operands("results", "RESULT", "the results folder to advise on")
    return p


def run(opts):
    if opts.resume is not None:
        if opts.results or opts.prove or opts.boot:
            raise UsageError("--resume DIR goes on with the experiment in DIR as it was "
                             "started: give nothing else")
        rc, proof, doc = resume_prove(opts.resume, say, note)
        if opts.json:
            print(json.dumps(proof, indent=2))
        else:
            print("\n".join(format_proof(proof, doc)))
        print("results: %s" % opts.resume)
        return rc
    if opts.boot and not opts.prove:
        raise UsageError("--boot goes with --prove")
    if len(opts.results) != 1:
        raise UsageError("give one results folder, e.g. 'jtr advise results/latest'")
    if not opts.prove:
        for name in ("repeat", "duration_ns", "output", "via_tuned"):
            if getattr(opts, name) not in (None, 1):
                raise UsageError("--%s goes with --prove" % {"duration_ns": "duration",
                                                             "via_tuned": "no-tuned"}.get(
                    name, name))
    doc, result, outdir = advise_job(opts.results[0], {
        "accept_invalid": opts.accept_invalid, "prove": opts.prove, "top": opts.top,
        "profile_dir": opts.profile_dir, "output": opts.output},
        Progress("jtr advise", sys.stderr))
    if not opts.prove:
        if opts.json:
            print(json.dumps(doc, indent=2))
        else:
            print("\n".join(format_advice(doc, opts.profile_dir)))
        return 0
    # the advice first, then the proof: its jtr ab runs take minutes, and what
    # they prove is on the screen while they run (a second call of the driver)
    print("\n".join(format_advice(doc)))
    print()
    rc, proof = prove(doc, result, {"repeat": opts.repeat, "duration_ns": opts.duration_ns,
                                    "top": opts.top, "backend": opts.backend,
                                    "via_tuned": opts.via_tuned, "boot": opts.boot},
                      outdir, say, note)
    if proof is None:               # --boot: the rest after the reboot
        return rc
    if opts.json:
        print(json.dumps(proof, indent=2))
    else:
        print("\n".join(format_proof(proof, doc)))
    print("results: %s" % outdir)
    if proof.get("interrupted"):
        note("jtr advise: interrupted; partial results in %s/" % outdir)
    return rc
