# SPDX-License-Identifier: GPL-2.0-only
"""ab - `jtr ab PROFILE [-- PROBE ...]`: baseline runs, the profile applied, tuned
runs, reverted, compared; in one command, and always reverted (an error, Ctrl-C,
SIGTERM, SIGHUP). Each run is run.py's measure of the probe (gap unless another is
given, its options passed on as they are, ping's pong and pub's sub started
beside it); the sides are compared on one quantity (results/quantity.py: the
probe's default, or the one asked for).

With --repeat N the runs are interleaved in ABBA order (A B B A A B B A ...), so a
slow drift of the machine during the experiment falls on both sides equally
instead of passing for an effect of the profile.

With --boot the profile's boot options are part of it, and they need a reboot:
the baseline runs, then the profile applied with its boot options (jtr tune apply
--boot), ab.json says so and jtr ab ends; after the reboot `jtr ab --resume DIR`
applies the runtime part again (it went with the reboot), makes the tuned runs,
reverts the profile (its boot options too: the boot after is as before) and
compares. The runs cannot be interleaved across reboots.

Signals (system/signals.py): the first SIGINT, SIGTERM or SIGHUP, to jtr ab or
to its process group, stops the experiment: the probe under way gets one SIGTERM
and its run is kept (marked partial), the profile is reverted, what was measured
is compared and written, and the exit status is 130. Every later signal is
acknowledged on stderr and skips nothing: the revert and ab.json are done first.

The experiment says its lines as they come through the callbacks it is given,
@say (stdout's: each step, each run's figures, the comparison) and @note
(stderr's: the probe's notices, a setting not restored, the interruption); the
command passes them (commands/ab.py, and jtr advise --prove's).
"""
import os
import time

from ..errors import JtrError, UsageError
from ..render.compare import format_table as compare_table
from ..render.tune import not_restored
from ..results.figures import result_figures
from ..results.quantity import check_name
from ..results.result import load_result, new_results_dir
from ..stats.compare import compare
from ..system import signals
from ..system.files import read_json, write_atomic, write_json
from ..tune import engine as E
from ..units import fmt_ns
from ..values import format_cpulist, format_duration
from .app import measure_app
from .plan import find_option, make_plan, partner_cpu_of
from .run import INTERRUPTED, measure

FORMAT = "jtr-ab/1"
BUSY_TUNED = "still reverting the tuning; wait"
BUSY = "still writing what was measured; wait"
DEFAULT_DURATION_NS = 10 * 10 ** 9      # a gap run's, when neither -d nor gap's own is given
# what sets the length of a run of each other probe (-d is gap's)
LENGTH = {"null": "-n samples a run, --runs runs", "send": "-n samples, --pairs pairs",
          "ping": "-n messages, -r rate", "pub": "-n messages, -r rate"}


def check_probe(o):
    """Refuse what makes no sense for the probe of @o (the command's settings),
    saying why, before anything is applied: -o among its options, a partner CPU
    it has no partner for, -d beside the probe's own length; the isolated CPUs
    (--cpus) checked, the plan of a run made, the quantity compared checked
    against the result that holds it. (duration_ns: gap's -d, its own length
    or DEFAULT_DURATION_NS, None for the others; partner_cpu; isolated CPUs)."""
    probe, args, duration_ns = o["probe"], o["probe_args"], o["duration_ns"]
    if (o.get("app") or {}).get("output") is not None or \
            (probe != "app" and find_option(args, "-o", "--output") is not None):
        raise UsageError("-o in %s's options: jtr ab chooses each run's folder (a-1, b-1, "
                         "... in its own -o); drop it" % probe)
    if probe == "app":
        # its own -d, or ab's, or the program's run (-- CMD) or 10 s (--pid)
        if duration_ns is not None and o["app"]["duration_ns"] is not None and \
                find_option(args, "-d", "--duration") is not None:
            raise UsageError("-d and app's -d both set the length of a run; give one")
        cpus = E.check_cpus(o["cpus"]) if o["cpus"] else []
        check_name("app", o["quantity"], "app results")
        return duration_ns, None, cpus
    partner_cpu = partner_cpu_of(probe, o["pong_cpu"], o["sub_cpu"])
    own = [w for w in (("-d", "--duration"), ("-n", "--count", "--loops"), ("-j",))
           if probe == "gap" and find_option(args, *w) is not None]
    if own and duration_ns is not None:
        raise UsageError("-d and gap's %s both set the length of a run; give one" % own[0][0])
    if probe != "gap" and duration_ns is not None:
        raise UsageError("-d: %s's own options set its length (%s), not a duration; give "
                         "them after '-- %s'" % (probe, LENGTH[probe], probe))
    if probe == "gap" and not own and duration_ns is None:
        duration_ns = DEFAULT_DURATION_NS
    cpus = E.check_cpus(o["cpus"]) if o["cpus"] else []
    plan = make_plan(probe, args, cpus[:1] or None, partner_cpu)
    tool = plan.partner if plan.measured_by == "partner" else probe
    check_name(tool, o["quantity"], "%s results" % tool)
    return duration_ns, partner_cpu, cpus


def ab_job(o, say, note, progress=None):
    """jtr ab's job: --resume DIR's second part of a --boot experiment, --boot's
    first, or the experiment in one go; its exit status."""
    if o.get("resume"):
        return resume_job(o["resume"], say, note, progress)
    if o.get("boot"):
        return boot_job(o, say, note, progress)
    return _ab_job(o, say, note, progress)


def _ab_job(o, say, note, progress=None):
    """jtr ab's job on the command's settings @o (commands/ab.py): the probe
    checked (check_probe), the profile loaded for the isolated CPUs (an unknown
    one refused), root needed and no profile applied (the baseline is the
    machine untuned), the results folder made (o["out"], or
    results/DATE-HOST-ab), then the experiment, its lines through @say and
    @note; its exit status."""
    duration_ns, partner_cpu, cpus = check_probe(o)
    profile = E.load_profile(o["profile"], cpus)      # unknown profile: exit 2 now
    E.need_root("ab")
    st = E.active_state()
    if st:
        raise UsageError("profile %s is applied: revert it first ('jtr tune revert'), so "
                         "the baseline is the machine untuned" % st["profile"])
    outdir = new_results_dir("ab", o["out"])
    os.makedirs(outdir)
    return experiment(dict(o, duration_ns=duration_ns, partner_cpu=partner_cpu), profile,
                      cpus, outdir, say, note, progress)


def boot_job(o, say, note, progress=None, resume=None):
    """jtr ab --boot's first part (ab_job's checks done there): refused before
    anything runs where the boot options cannot be written or the profile has
    none; the baseline runs; the profile applied with its boot options; ab.json
    saying a reboot is due and how to go on (@resume: the command that goes on,
    'jtr ab --resume DIR' by default). Its exit status."""
    duration_ns, partner_cpu, cpus = check_probe(o)
    profile = E.load_profile(o["profile"], cpus)
    E.need_root("ab")
    st = E.active_state()
    if st:
        raise UsageError("profile %s is applied: revert it first ('jtr tune revert'), so "
                         "the baseline is the machine untuned" % st["profile"])
    iso = profile.isolated if profile.isolated is not None else cpus
    if not E.make_plan(profile, iso).boot:
        raise UsageError("--boot: %s has no boot options (a [bootloader] cmdline); drop "
                         "--boot" % profile.name)
    ok, why = E.can_change_cmdline()
    if not ok:
        raise UsageError("--boot: %s" % why)
    outdir = new_results_dir("ab", o["out"])
    os.makedirs(outdir)
    o = dict(o, duration_ns=duration_ns, partner_cpu=partner_cpu, via_tuned=False)
    record = _record(o, profile, cpus)
    record.update({"boot": True, "phase": "baseline"})
    measured = [cpus[0]] if cpus else []
    with signals.measuring(stopping="", busy=BUSY) as block:
        try:
            for k in range(o["repeat"]):
                if signals.requested():
                    break
                name = "a-%d" % (k + 1)
                say("[%s] run %d of %d: %s (baseline)" % (_now(), k + 1, o["repeat"], name))
                if not _side_run(record, outdir, name, "a", None, measured, o, say, note,
                                 progress):
                    break
            else:
                block.busy = BUSY_TUNED
                with E.StateLock(note):
                    E.recover()
                    E.apply(E.make_plan(profile, iso), quiet, boot=True,
                            stop=signals.requested)
                if not signals.requested():
                    record.update({"phase": "reboot", "boot_id": E.boot_id(),
                                   "settings": {k: o[k] for k in RESUME_KEYS}})
        finally:
            block.busy = BUSY
            write_json(os.path.join(outdir, "ab.json"), record)
    if record["phase"] != "reboot":
        _revert(note)                   # what a stopped apply reached
        note("jtr ab: interrupted before the reboot; nothing applied, partial results in "
             "%s/" % outdir)
        return INTERRUPTED
    say("[%s] applied %s with its boot options: %s" % (
        _now(), profile.name, " ".join(E.active_state().get("boot") or [])))
    say("reboot, then: %s" % (resume or "jtr ab --resume %s" % outdir))
    return 0


RESUME_KEYS = ("profile", "cpus", "duration_ns", "repeat", "trace", "backend", "probe",
               "probe_args", "partner_cpu", "quantity", "accept_invalid", "app")


def resume_job(outdir, say, note, progress=None):
    """jtr ab --resume DIR after the reboot --boot asked for: the profile's runtime
    part applied again, the tuned runs, the profile reverted (its boot options
    too), the comparison. Its exit status."""
    record = read_json(os.path.join(outdir, "ab.json"), FORMAT, "jtr ab record",
                       missing="give the folder jtr ab --boot wrote")
    if not isinstance(record.get("settings"), dict):
        raise UsageError("--resume %s: ab.json is not a jtr ab --boot experiment's" % outdir)
    if record.get("phase") != "reboot":
        raise UsageError("--resume %s: nothing to resume (the experiment is %s)" % (
            outdir, record.get("phase")))
    if record.get("boot_id") == E.boot_id():
        raise UsageError("--resume %s: not rebooted since the profile's boot options were "
                         "written; reboot first" % outdir)
    E.need_root("ab")
    o = dict(record["settings"], via_tuned=False)
    st = E.active_state()
    if not st or st["profile"] != o["profile"]:
        raise UsageError("--resume %s: %s is not applied any more (reverted since?); run "
                         "jtr ab --boot again" % (outdir, o["profile"]))
    cpus = E.check_cpus(o["cpus"]) if o["cpus"] else []
    profile = E.load_profile(o["profile"], cpus)
    drift, _ = E.boot_state(st)
    record["boot_options_not_in_effect"] = [" ".join(d) for d in drift]
    for label, want, now in drift:
        note("jtr ab: %s: want %s, now %s" % (label, want, now))
    measured = [cpus[0]] if cpus else []
    mine = os.sched_getaffinity(0)
    applied = False
    with signals.measuring(stopping="", busy=BUSY_TUNED) as block:
        try:
            # the snapshot of the first boot: its boot options out (the next boot
            # is as before), then this boot's runtime part applied
            with E.StateLock(note):
                E.revert(E.read_state(), quiet)
            say("[%s] %s's boot options are in effect in this boot (%s); its drop-in "
                "removed: the next boot is without them" % (
                    _now(), profile.name, "all of them" if not drift else
                    "%d not" % len(drift)))
            applied = True
            _apply(o, cpus, note)
            os.sched_setaffinity(0, mine)
            block.busy = BUSY
            say("[%s] applied %s (its runtime part)" % (_now(), profile.name))
            for k in range(o["repeat"]):
                if signals.requested():
                    break
                name = "b-%d" % (k + 1)
                say("[%s] run %d of %d: %s (%s)" % (_now(), k + 1, o["repeat"], name,
                                                    profile.name))
                if not _side_run(record, outdir, name, "b", profile.name, measured, o, say,
                                 note, progress):
                    break
            else:
                record["partial"] = False
        finally:
            record["phase"] = "done"
            _wind_up(outdir, record, applied and profile, o, say, note, block)
    if record["interrupted"]:
        note("jtr ab: interrupted; partial results in %s/" % outdir)
        return INTERRUPTED
    return 0


def _record(o, profile, cpus):
    """ab.json's first content for the settings @o."""
    measured = [cpus[0]] if cpus else []
    return {"format": FORMAT, "profile": profile.name, "isolated_cpus": format_cpulist(cpus),
            "measured_cpu": str(measured[0]) if measured else None,
            "probe": o["probe"], "probe_args": list(o["probe_args"]),
            "quantity": o["quantity"],
            "duration": format_duration(o["duration_ns"]) if o["duration_ns"] else None,
            "repeat": o["repeat"], "trace": o["trace"], "order": [], "runs": [],
            "partial": True, "interrupted": False, "compare": None, "verdict": None}


def _side_run(record, outdir, name, side, profile, measured, o, say, note, progress):
    """One run of side @side into outdir/@name, kept in @record; whether to go on
    (an interrupted run stops; a failed one raises)."""
    run = _measure(os.path.join(outdir, name), measured, o, say, note, progress)
    run.update({"name": name, "side": side, "profile": profile})
    record["runs"].append(run)
    record["order"].append(name)
    if run["interrupted"]:
        return False
    if run["rc"] != 0:
        err = UsageError if run["rc"] == 2 else JtrError
        raise err("run %s failed (exit %s)" % (name, run["rc"]))
    return True


def order(repeat):
    """['a', 'b', 'b', 'a', 'a', 'b', ...]: ABBA blocks, @repeat runs a side."""
    out = []
    for i in range(repeat):
        out += ["a", "b"] if i % 2 == 0 else ["b", "a"]
    return out


def experiment(o, profile, cpus, outdir, say, note, progress=None):
    """The runs of `jtr ab` into @outdir (which exists) with @profile (loaded and
    checked for @cpus); its progress and the comparison through @say(line), for
    stdout, and @note(line), for stderr; the exit status (130 when a stop was
    requested, whenever it came: ab.json says "interrupted", and "partial" when
    runs are missing or cut short). @progress: the command's status line while
    a run is attributed (cli/progress.py), or None."""
    measured = [cpus[0]] if cpus else []
    seq = order(o["repeat"])
    record = _record(o, profile, cpus)
    mine = os.sched_getaffinity(0)      # apply moves jtr to the housekeeping CPUs
    applied = False                     # a snapshot of ours may be active: revert it
    # where the tuned daemon runs it applies the profile, as jtr tune apply does
    # (two appliers would fight over the same knobs); --no-tuned: jtr's own
    o = dict(o, via_tuned=E.tuned_running() is None if o.get("via_tuned") is None
             else o["via_tuned"])
    record["via_tuned"] = o["via_tuned"]
    n = {"a": 0, "b": 0}
    with signals.measuring(stopping="", busy=BUSY) as block:
        try:
            for k, side in enumerate(seq):
                if signals.requested():
                    break
                n[side] += 1
                name = "%s-%d" % (side, n[side])
                if side == "b" and not applied:
                    block.busy, applied = BUSY_TUNED, True
                    _apply(o, cpus, note)
                    os.sched_setaffinity(0, mine)   # its probes must reach the isolated CPUs
                    if signals.requested():
                        break
                    say("[%s] applied %s%s" % (_now(), profile.name,
                                               " through the tuned daemon (--no-tuned: jtr "
                                               "applies it itself)" if o["via_tuned"] else ""))
                elif side == "a" and applied:
                    _revert(note)
                    block.busy, applied = BUSY, False
                    say("[%s] reverted %s" % (_now(), profile.name))
                    if signals.requested():
                        break
                say("[%s] run %d of %d: %s (%s)" % (_now(), k + 1, len(seq), name,
                    "baseline" if side == "a" else profile.name))
                run = _measure(os.path.join(outdir, name), measured, o, say, note, progress)
                run.update({"name": name, "side": side,
                            "profile": profile.name if side == "b" else None})
                record["runs"].append(run)
                record["order"].append(name)
                if run["interrupted"]:
                    break
                if run["rc"] != 0:
                    err = UsageError if run["rc"] == 2 else JtrError
                    raise err("run %s failed (exit %s); the profile is reverted"
                              % (name, run["rc"]))
            else:
                record["partial"] = False
        finally:
            if signals.requested():
                note("jtr ab: interrupted; %scomparing what was measured"
                     % ("reverting and " if applied else ""))
            _wind_up(outdir, record, applied and profile, o, say, note, block)
    if record["interrupted"]:
        note("jtr ab: interrupted; partial results in %s/" % outdir)
        return INTERRUPTED
    return 0


def _wind_up(outdir, record, applied, o, say, note, block):
    """The end of an experiment: the profile @applied (None: none) reverted, then,
    whatever the revert did, the comparison and ab.json written."""
    # a first stop signal from here on is acknowledged by the handler (the
    # lines before said theirs when it came earlier), up to the moment ab.json's
    # "interrupted" is decided: the exit status follows it, and a signal after
    # that is taken silently and changes nothing
    block.stopping = ("interrupted; reverting and comparing what was measured" if applied
                      else "stopping: writing what was measured")

    def decided():
        block.stopping = ""
        return signals.requested()
    try:
        if applied:
            _revert(note)
            say("[%s] reverted %s" % (_now(), applied.name))
    finally:
        block.busy = BUSY
        block.stopping = "stopping: writing what was measured"
        _finish(outdir, record, decided, say, o["quantity"],
                o.get("accept_invalid", False))


def _now():
    return time.strftime("%H:%M:%S")


def quiet(line):
    """What the applier says of each setting: jtr ab says what it applied itself."""


def _apply(o, cpus, note):
    """Apply the profile (checked again for this moment); a stop request ends the
    apply before its next setting (the caller reverts what it reached)."""
    with E.StateLock(note):
        E.recover()
        profile = E.load_profile(o["profile"], cpus)
        iso = profile.isolated if profile.isolated is not None else cpus
        E.apply(E.make_plan(profile, iso), quiet, stop=signals.requested,
                via_tuned=o.get("via_tuned", False))


def _revert(note):
    """Revert the snapshot this jtr ab wrote (none other), if it is still active;
    @note each setting it could not restore."""
    with E.StateLock(note):
        st = E.read_state(required=False)
        if not st or st["status"] not in ("applying", "applied") or st.get("pid") != os.getpid():
            return
        failed, _ = E.revert(st, quiet)
    for line in not_restored(failed):
        note(line)


def _measure(d, cpus, o, say, note, progress):
    """One jtr run of the probe into @d, its figures (or why there are none)
    through @say and its notices through @note: {"rc": its probe's exit status,
    "result": whether it wrote one, "partial": it covers less than asked,
    "interrupted": a stop request ended it}."""
    args = list(o["probe_args"]) + ["-o", d] + \
        ([] if "-q" in o["probe_args"] or "--quiet" in o["probe_args"] else ["-q"]) + \
        (["-d", format_duration(o["duration_ns"])] if o["duration_ns"] else [])
    try:
        if o["probe"] == "app":
            # the function timed as jtr run app times it; its -c, else the CPU ab measures
            app = dict(o["app"], output=d, cpus=o["app"]["cpus"] or cpus or None)
            if o["duration_ns"]:
                app["duration_ns"] = o["duration_ns"]
            job = measure_app(app, progress)
        else:
            job = measure(args, probe=o["probe"], cpus=cpus or None, trace=o["trace"],
                          backend=o["backend"], partner_cpu=o["partner_cpu"], prog="jtr ab",
                          progress=progress)
    except KeyboardInterrupt:           # stopped before its probe started
        say("    stopped before it wrote a result")
        return {"rc": None, "result": False, "partial": True, "interrupted": True}
    for n in job.notices:
        note("jtr ab: %s" % n)
    run = {"rc": job.rc, "result": job.result is not None, "partial": True,
           "interrupted": job.interrupted}
    if job.result is not None:
        run["partial"] = bool(job.result.get("partial")) or job.interrupted
        say("    %s%s%s" % (_figures(job.result, o["quantity"]),
                            "  (partial)" if run["partial"] else "",
                            "" if job.lines else "  (not attributed: %s)" % job.why))
    elif job.interrupted:
        say("    stopped before it wrote a result (exit %s)" % job.rc)
    return run


def _figures(result, quantity):
    """'rtt_from_intended: p99 40.0 us  p99.99 ...  max ...  lost ...' of a run."""
    try:
        f = result_figures(result, quantity)
    except UsageError as e:
        return str(e)
    p = f["percentiles_ns"]
    if not p:
        return "%s: no samples" % f["quantity"]
    return "%s: p99 %s  p99.99 %s  max %s%s" % (
        f["quantity"], fmt_ns(p["99"]), fmt_ns(p["99.99"]), fmt_ns(f["max_ns"]),
        "  lost %.3f %%" % f["lost_pct"] if f["lost_pct"] is not None else "")


def _count(runs):
    """'2 runs (1 partial)'."""
    part = sum(1 for r in runs if r["partial"])
    return "%d run%s%s" % (len(runs), "" if len(runs) == 1 else "s",
                           " (%d partial)" % part if part else "")


def _finish(outdir, record, stopped, say, quantity=None, accept_invalid=False):
    """Compare what was measured (partial runs too); write ab.json, compare.json
    and compare.txt; @say the comparison (or why there is none) and the folder.
    @stopped(): whether a stop was requested (by the time ab.json is written);
    @quantity: the one compared (None: the default); a run that is not a valid
    measurement leaves the comparison without a verdict unless
    @accept_invalid."""
    got = [r for r in record["runs"] if r["result"]]
    a = [r for r in got if r["side"] == "a"]
    b = [r for r in got if r["side"] == "b"]
    sides = "baseline %s, tuned %s" % (_count(a), _count(b))
    if a and b:
        pa = [os.path.join(outdir, r["name"]) for r in a]
        pb = [os.path.join(outdir, r["name"]) for r in b]
        try:
            c = compare([load_result(p) for p in pa], [load_result(p) for p in pb],
                        labels_a=pa, labels_b=pb, quantity=quantity,
                        accept_invalid=accept_invalid)
        except (UsageError, JtrError) as e:
            c = None
            say("jtr ab: cannot compare (%s): %s" % (sides, e))
        if c is not None:
            write_json(os.path.join(outdir, "compare.json"), c)
            lines = compare_table(c)
            write_atomic(os.path.join(outdir, "compare.txt"), "\n".join(lines) + "\n")
            record["compare"] = "compare.json"
            record["verdict"] = c["verdict"]
            record["quantity"] = c["a"]["quantity"]
            say("")
            say("compared: %s" % sides)
            for line in lines:
                say(line)
    else:
        say("jtr ab: not enough runs to compare (%s)" % sides)
    record["interrupted"] = stopped()
    write_json(os.path.join(outdir, "ab.json"), record)
    say("results: %s" % outdir)
