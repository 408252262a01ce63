# SPDX-License-Identifier: GPL-2.0-only
"""run - the main job (jtr run): the tracer beside a probe, then attribution.

Order: make the plan (drivers/plan.py: the probe's options, the partner at the
other end, the CPUs of every side); start the tracer on all of those CPUs (it
drains its buffer from another CPU when there is one) and, for the
cross-check, perf sched record; wait until they record; start the partner (jtr
pong for ping, jtr sub for pub: it writes into a temporary folder beside the
results) and, for datagram subscribers, wait until it listens; run the probe,
which reports its results folder on JTR_RESULTS_FD; end the partner (pong is
told to stop; a subscriber ends at the publisher's end of stream); stop the
tracer. Everything then lands in one folder, the one of the program that
measured the latency (ping's; for pub the subscriber's), with the other end's
result in a sub-folder named after it (pong/, pub/); the event log is moved
in, the outliers are attributed (each side's CPUs for a round trip or a
message) and the attribution is added to result.json (atomically) with a text
table beside it. Without root or BPF the probe still runs and the reason
attribution is missing is said.

A stop signal (system/signals.py: Ctrl-C, SIGTERM or SIGHUP, to jtr or its
process group) reaches the probe and the partner once; they write what they
measured, the tracer records until they have ended, and the job goes on to
attribute the partial run and says it was interrupted. Before the probe
starts, a stop ends the job.

run_job is jtr run's job: what the options need of the machine checked (the
other end's CPU and network namespace, perf for --cross-check), measure (the
above), then concluded by drivers/gates.py (--junit's report, the exit
status); the command prints what the Job holds (render/runs.py,
render/gates.py). probe_job is jtr gap's and jtr wake's given a gate: the probe
alone, judged and concluded the same way.
"""
import os
import shutil
import subprocess
import tempfile
import time

from ..errors import EXIT_INTERRUPTED, JtrError, UsageError
from ..results.result import NAME, PROBE_DOC, load_result
from ..system import signals
from ..system.cpus import online_cpus
from ..system.files import owned_folder, remove_orphans
from ..trace import backends
from ..trace.sched import unavailable as cross_check_unavailable
from ..values import format_duration
from .attribute import attribute_into, validity_of
from .gates import conclude, judge
from .plan import MULTI_CPU, find_option, make_plan, partner_cpu_of
from .programs import Program, last_line, stop, wait_ready

INTERRUPTED = EXIT_INTERRUPTED      # the probe's status when a stop request ended it early
READY_S = 20                        # how long a subscriber may take to listen
END_S = 30                          # how long a subscriber may take to end after pub
NETNS_DIR = "/run/netns"            # where ip netns keeps the named network namespaces
ORPHAN_PREFIX = ".jtr-"             # the other end's folder beside the results: .jtr-pong-...


class Job:
    """What a run did: the probe's exit status, its Result (None when it wrote
    none), the attribution's lines or why there are none, the gates' cases
    ([] without limits), whether a stop request ended it, and notices for stderr
    (the tracers' own, backend fallbacks)."""

    def __init__(self):
        self.rc = None
        self.result = None
        self.lines = None
        self.why = None
        self.interrupted = False
        self.notices = []
        self.plan = None
        self.cases = []
        self.detail = ""            # the probe's own table (its stdout), printed after the headline


def env_of(prog, owner):
    """The environment of a program of jtr's (@prog: how it speaks; None: as
    itself); @owner: the result's folder is its, so it writes PROBE_DOC."""
    env = dict(os.environ) if prog is None else dict(os.environ, JTR_PROG=prog)
    if owner:
        env["JTR_RESULT_AS"] = PROBE_DOC
    return env


def probe_result(folder):
    """The result the measuring program wrote into @folder (PROBE_DOC), to be saved
    as the folder's result.json; the folder's result.json when it wrote that
    itself."""
    doc = os.path.join(folder, PROBE_DOC)
    if not os.path.lexists(doc):
        return load_result(folder)
    r = load_result(doc)
    r.path = os.path.join(folder, NAME)
    return r


def saved(result, folder):
    """@result written as @folder's result.json, the program's own file removed
    (when it cannot be written, a full disk, the program's own is kept as the
    folder's result.json)."""
    try:
        result.save()
    except JtrError as e:
        # a full disk: the program's own document stays the result
        if keep_as_written(folder):
            raise JtrError("%s; the probe's own result is kept in %s/ (jtr attribute %s "
                           "attributes it again once there is room)" % (e, folder, folder))
        raise
    except BaseException:
        keep_as_written(folder)
        raise
    doc = os.path.join(folder, PROBE_DOC)
    if os.path.lexists(doc):
        os.unlink(doc)


def took_result(job, folder):
    """After the measuring program ended (job.rc): whether a stop request ended
    it (job.interrupted) and, when it ended well and wrote @folder, its result
    (job.result) and True; False when not (what it wrote is kept as it is)."""
    job.interrupted = signals.requested() or job.rc == INTERRUPTED
    if job.rc not in (0, INTERRUPTED) or not folder:
        if folder:
            keep_as_written(folder)
        return False
    job.result = probe_result(folder)
    return True


def keep_as_written(folder):
    """A program's result jtr does not go on with (it failed): its own file
    becomes the folder's result.json as it is; whether there was one."""
    doc = os.path.join(folder, PROBE_DOC)
    if os.path.lexists(doc):
        os.replace(doc, os.path.join(folder, NAME))
        return True
    return False


class _Ends:
    """The other end of a measurement (the partner program) and a temporary
    folder beside the results for the end that does not own the folder: pong's
    result for ping; for pub, pub's own (the subscriber owns the folder)."""

    def __init__(self, plan, out, prog):
        parent = os.path.dirname(os.path.abspath(out)) if out else os.path.abspath("results")
        os.makedirs(parent, exist_ok=True)
        self.plan = plan
        self.guest = plan.partner if plan.measured_by == "probe" else plan.probe
        # a front end killed with SIGKILL cannot remove its folder: the next run
        # beside it does
        remove_orphans(parent, ORPHAN_PREFIX)
        self.tmp, self.owner = owned_folder(parent, "%s%s-" % (ORPHAN_PREFIX, self.guest))
        self.guest_out = os.path.join(self.tmp, self.guest)
        self.log = os.path.join(self.tmp, "stderr")
        args = list(plan.partner_args)
        if plan.measured_by == "probe":
            args += ["-o", self.guest_out]
        else:
            plan.args = without_output(plan.args) + ["-o", self.guest_out]
            args += ["-o", out] if out else []
        with open(self.log, "wb") as err:
            self.prog = Program(plan.partner, args,
                                env=env_of(prog, plan.measured_by == "partner"),
                                prefix=("ip", "netns", "exec", plan.partner_netns)
                                if plan.partner_netns else (),
                                stdout=subprocess.DEVNULL, stderr=err)

    def failed(self):
        """Why the partner failed, or None while it runs or when it ended well."""
        rc = self.prog.poll()
        if rc in (None, 0, INTERRUPTED):
            return None
        return "jtr %s failed (exit %d): %s" % (self.plan.partner, rc,
                                                last_line(self.log) or "no message")

    def end(self):
        """Stop the partner: pong is told to; a subscriber ends at the publisher's end
        of stream, and is told only when it has not within END_S."""
        if self.plan.measured_by == "partner":
            try:
                self.prog.wait(END_S)
            except subprocess.TimeoutExpired:
                pass
        return stop(self.prog.proc)

    def join(self, probe_folder):
        """One folder for both ends: the owner's, with the guest's result inside,
        named after it; the owner's folder, or None when it wrote none."""
        folder = probe_folder
        if self.plan.measured_by == "partner":
            folder = self.prog.folder()
            if not folder:
                return None
        if os.path.isdir(self.guest_out):
            dst = os.path.join(folder, self.guest)
            if os.path.lexists(dst):
                shutil.rmtree(dst) if os.path.isdir(dst) else os.unlink(dst)
            os.rename(self.guest_out, dst)
        return folder

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.owner.close()


def without_output(args):
    """@args without -o/--output and its value."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in ("-o", "--output"):
            skip = True
        elif not (a.startswith("--output=") or (a.startswith("-o") and len(a) > 2)):
            out.append(a)
    return out


def measure(probe_args, probe="gap", cpus=None, trace=True, tracer_args=(), slack_ns=None,
            top=None, backend="auto", cross_check=None, prog="jtr run", partner_cpu=None,
            partner_netns=None, split=False, gates=None, progress=None):
    """One measurement: the tracer beside the probe, then attribution (jtr run's,
    and each run of jtr ab); a Job. @probe_args go to jtr-PROBE as they are
    (with -o among them when given), the CPUs jtr pins added (drivers/plan.py);
    @cpus: jtr run's -c ([int] or None). cross_check: None, or {"min_ns": NS or
    None} to record the scheduler's events with perf beside the tracer and
    compare them with the attribution. @partner_cpu: pong's or sub's CPU;
    @partner_netns: the network namespace it runs in (ip netns exec). @gates:
    (max latency ns or None, max lost % or None) to judge the run by
    (drivers/gates.judge: job.cases), or None. @progress: the command's status
    line while the run is attributed (cli/progress.py), or None. The result
    document is built in
    memory (the probe's figures, sides, validity, attribution, gates) and saved
    once, at the end."""
    job = Job()
    plan = job.plan = make_plan(probe, probe_args, cpus, partner_cpu)
    plan.partner_netns = partner_netns
    job.notices += plan.notices
    job.why = None if trace else "tracing was switched off (--no-trace)"
    tracer = recorder = partner = None
    xwhy = None
    out = find_option(plan.args, "-o", "--output")
    env = env_of(prog, plan.measured_by != "partner")
    trace_cpus = plan.cpu_text
    tracer_args = list(tracer_args)
    if plan.spare_cpu is not None and set(plan.cpus) >= set(online_cpus()) and \
            not any(a.startswith("--consumer-cpu") for a in tracer_args):
        # no CPU is left untraced: drain from the quiet end, not the measured one
        tracer_args += ["--consumer-cpu", str(plan.spare_cpu)]
    # the probe's own table is kept to be printed after the headline (commands/run.py)
    detail = tempfile.TemporaryFile()
    with signals.measuring():
        try:
            if job.why is None:
                tracer, job.why, notice = backends.start(backend, trace_cpus, tracer_args, prog)
                if notice:
                    job.notices.append(notice)
            if tracer and cross_check is not None and not signals.requested():
                recorder, xwhy = backends.start_recorder(trace_cpus)
            if signals.requested():
                raise KeyboardInterrupt
            if plan.partner:
                partner = _Ends(plan, out, prog)
                if plan.wait_ready and not wait_ready(partner.prog.proc, partner.log, READY_S):
                    raise UsageError(partner.failed() or "jtr %s did not get ready within "
                                     "%d s" % (plan.partner, READY_S))
            probe_proc = Program(probe, plan.args, env=env, stdout=detail)
            job.rc, folder = probe_proc.run()
            if partner:
                partner.end()
        except BaseException:
            detail.close()
            for t in (tracer, recorder):
                if t:
                    t.stop()
                    t.cleanup()
            if partner:
                stop(partner.prog.proc)
                partner.cleanup()
            raise
        trc = tracer.stop() if tracer else None
        xrc = recorder.stop() if recorder else None
    job.detail = read_detail(detail)
    # whatever ends the job after the programs ended (a folder that cannot be
    # read, a stop, an error), nothing of the tracers is left in /tmp, nor the
    # other end's folder (on the way through, _attribute moves or removes them)
    try:
        job.interrupted = signals.requested() or job.rc == INTERRUPTED
        job.notices += [t.err for t in (tracer, recorder) if t and t.err]
        if partner and partner.failed():
            job.notices.append(partner.failed())
        if partner and job.rc in (0, INTERRUPTED) and folder:
            folder = partner.join(folder)
            if folder and plan.measured_by == "partner":
                job.notices.append("the subscriber measured the latency: results in %s/ (%s's, "
                                   "printed above, moved into %s/%s/)"
                                   % (folder, probe, folder, probe))
        if job.rc not in (0, INTERRUPTED) or not folder:
            for t in (tracer, recorder, partner):
                if t:
                    t.cleanup()
            if folder:
                keep_as_written(folder)
            return job
        if partner:
            partner.cleanup()
        job.result = probe_result(folder)
        if probe not in MULTI_CPU:
            job.result["sides"] = dict(plan.sides)
        job.result["validity"] = validity_of(job.result)
        try:
            _attribute(job, folder, tracer, trc, recorder, xrc, xwhy, slack_ns, top, cross_check,
                       split, progress)
            if gates:
                job.cases = judge(job.result, *gates, why=job.why)
        finally:
            # the document built in memory, saved once (also when a stop or an
            # error ends the attribution: what the job has is kept)
            saved(job.result, folder)
        return job
    except BaseException:
        for t in (tracer, recorder, partner):
            if t:
                t.cleanup()
        raise


def read_detail(f):
    """The text the probe printed into the temporary file @f (closed)."""
    with f:
        f.seek(0)
        return f.read().decode("utf-8", "replace")


def _attribute(job, folder, tracer, trc, recorder, xrc, xwhy, slack_ns, top, cross_check,
               split, progress):
    """The tracer's and the recorder's logs moved into @folder, and the job's
    result attributed (job.lines), or job.why says why not."""
    if recorder:
        if xrc == 0:
            try:
                recorder.move_into(folder)
            except OSError as e:
                xwhy = "sched.data could not be moved into %s: %s" % (folder, e.strerror or e)
                recorder = None
        else:
            recorder.cleanup()
            xwhy = "perf sched record failed: %s" % (recorder.err or "exit %d" % xrc)
            recorder = None
    if not tracer:
        return
    if trc != 0:
        tracer.cleanup()
        job.why = "the tracer failed: %s" % (tracer.err or "exit %d" % trc)
        return
    try:
        tracer.move_into(folder)
    except OSError as e:
        # a full disk: the event log is not kept at all rather than truncated
        job.why = "the event log could not be moved into %s: %s" % (folder, e.strerror or e)
        return
    try:
        job.lines = attribute_into(job.result, slack_ns=slack_ns, top=top, strict=False,
                                   cross_check=dict(cross_check, sched_data=None)
                                   if recorder else None, progress=progress,
                                   split=split, save=False)
    except UsageError as e:
        job.why = str(e)
        return
    finally:
        if progress is not None:
            progress.done()
    if xwhy:
        job.lines += ["", "cross-check: not run: %s" % xwhy]


def run_job(o, progress=None):
    """jtr run's job on the command's settings @o (commands/run.py options): the
    other end's CPU (--pong-cpu, --sub-cpu) and network namespace checked, and
    perf for --cross-check; the tracer's options; the measurement (measure),
    then concluded (drivers/gates.conclude: --junit's report, the exit status
    the gates give). (job, exit status). jtr run app's job is drivers/app.py's."""
    started = time.time()
    partner_cpu = partner_cpu_of(o["probe"], o["pong_cpu"], o["sub_cpu"])
    netns = o["partner_netns"]
    if netns is not None and ("/" in netns or
                              not os.path.exists(os.path.join(NETNS_DIR, netns))):
        raise UsageError("--partner-netns %s: no such network namespace (ip netns list "
                         "names them)" % netns)
    if o["cross_check"] is not None:
        why = cross_check_unavailable()
        if why:
            raise UsageError(why)
    tracer_args = []
    if o["trace_buffer"] is not None:
        tracer_args += ["-b", str(o["trace_buffer"])]
    if o["drain_interval"] is not None:
        tracer_args += ["-i", format_duration(o["drain_interval"])]
    job = measure(o["probe_args"], probe=o["probe"], cpus=o["cpus"], trace=o["trace"],
                  tracer_args=tracer_args, slack_ns=o["slack_ns"], top=o["top"],
                  backend=o["backend"], partner_cpu=partner_cpu, partner_netns=netns,
                  split=o["split"], cross_check=o["cross_check"], gates=o["gates"],
                  progress=progress)
    return job, conclude(job, o["junit"], "jtr run", o["probe"], started, o["command"],
                         o["gates"])


def run_alone(probe, args, gates, why, how):
    """jtr gap or jtr wake alone, as jtr would hand over to it (no tracer, no
    pinning of jtr's own: @args as they are), then its result judged by @gates
    (drivers/gates.judge: the gates of every probe judged in one place, its
    causes not measured: @why, @how) and saved; a Job (no lines)."""
    job = Job()
    job.why = why
    with signals.measuring():
        job.rc, folder = Program(probe, args, env=env_of(None, True)).run()
    if not took_result(job, folder):
        return job
    job.cases = judge(job.result, *gates, why=why, how=how)
    saved(job.result, folder)
    return job


def probe_job(probe, args, limits, junit, command, how):
    """jtr gap or jtr wake given a gate (@limits: (max_latency_ns, max_lost_pct)):
    run alone (run_alone: its causes not measured, @how gets them), then
    concluded (drivers/gates.conclude: --junit's report at @junit, for @command,
    and the exit status the gates give). (job, exit status)."""
    started = time.time()
    job = run_alone(probe, args, limits, "jtr %s runs no tracer" % probe, how)
    return job, conclude(job, junit, "jtr", probe, started, command, limits)
