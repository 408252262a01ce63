"""run - the main job (jtr run): the tracer beside the gap probe, then attribution.

Order: start the tracer on the probe's CPUs (it drains its buffer from another
CPU) and, for the cross-check, perf sched record; wait until they record; run
jtr-gap, which reports its results folder on JTR_RESULTS_FD; stop the tracer,
move its event log into the probe's results folder, attribute, and add the
attribution to result.json (atomically) with a text table beside it. Without
root or BPF the probe still runs and the reason attribution is missing is said.

A stop signal (system/signals.py: Ctrl-C, SIGTERM or SIGHUP, to jtr or its
process group) reaches the probe once; it writes what it measured, the tracer
records until the probe has ended, and the job goes on to attribute the partial
run and says it was interrupted. Before the probe starts, a stop ends the job.
"""
import os

from ..errors import EXIT_INTERRUPTED, UsageError
from ..results.result import load_result
from ..system import signals
from ..trace import backends
from .attribute import attribute_into
from .programs import Program

PROBE = "gap"
INTERRUPTED = EXIT_INTERRUPTED      # the probe's status when a stop request ended it early


class Job:
    """What a run did: the probe's exit status, its Result (None when it wrote
    none), the attribution's lines or why there are none, whether a stop request
    ended it, and notices for stderr (the tracers' own, backend fallbacks)."""

    def __init__(self):
        self.rc = None
        self.result = None
        self.lines = None
        self.why = None
        self.interrupted = False
        self.notices = []


def run_job(probe_args, cpus=None, trace=True, tracer_args=(), slack_ns=None, top=None,
            backend="auto", cross_check=None, prog="jtr run"):
    """The whole job; a Job. @probe_args go to jtr-gap as they are (with -c @cpus
    and -o among them when given); @cpus is the CPU list text the tracer follows.
    cross_check: None, or {"min_ns": NS or None} to record the scheduler's events
    with perf beside the tracer and compare them with the attribution."""
    job = Job()
    job.why = None if trace else "tracing was switched off (--no-trace)"
    tracer = recorder = None
    xwhy = None
    with signals.measuring():
        try:
            if job.why is None:
                tracer, job.why, notice = backends.start(backend, cpus, tracer_args, prog)
                if notice:
                    job.notices.append(notice)
            if tracer and cross_check is not None and not signals.requested():
                recorder, xwhy = backends.start_recorder(cpus)
            if signals.requested():
                raise KeyboardInterrupt
            probe = Program(PROBE, probe_args, env=dict(os.environ, JTR_PROG=prog))
            job.rc, folder = probe.run()
        except BaseException:
            for t in (tracer, recorder):
                if t:
                    t.stop()
                    t.cleanup()
            raise
        trc = tracer.stop() if tracer else None
        xrc = recorder.stop() if recorder else None
    job.interrupted = signals.requested() or job.rc == INTERRUPTED
    job.notices += [t.err for t in (tracer, recorder) if t and t.err]
    if job.rc not in (0, INTERRUPTED) or not folder:
        for t in (tracer, recorder):
            if t:
                t.cleanup()
        return job
    job.result = load_result(folder)
    if recorder:
        if xrc == 0:
            recorder.move_into(folder)
        else:
            recorder.cleanup()
            xwhy = "perf sched record failed: %s" % (recorder.err or "exit %d" % xrc)
            recorder = None
    if not tracer:
        return job
    if trc != 0:
        tracer.cleanup()
        job.why = "the tracer failed: %s" % (tracer.err or "exit %d" % trc)
        return job
    tracer.move_into(folder)
    try:
        job.lines = attribute_into(job.result, slack_ns=slack_ns, top=top, strict=False,
                                   cross_check=dict(cross_check, sched_data=None)
                                   if recorder else None)
    except UsageError as e:
        job.why = str(e)
        return job
    if xwhy:
        job.lines += ["", "cross-check: not run: %s" % xwhy]
    return job
