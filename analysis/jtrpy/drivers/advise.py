# SPDX-License-Identifier: GPL-2.0-only
"""advise - jtr advise RESULT: the remedies for what a measurement lost, ranked by
the time they would save, and (--prove) each one measured with jtr ab.

The evidence is the result's own: its outliers are charged to causes again with
the event log beside them (drivers/attribute.py's attribution_of, each outlier's
parts and the workqueue functions its preempting tasks ran), each part sent to a
rule of tune/advice.py by the cause model (trace/causes.py: RT throttling is a
cause of the attribution's, whatever its pieces' lengths). One refinement needs
the outlier itself, not its cause: the tick of an outlier whose window holds
the soft-lockup watchdog's hrtimer (watchdog_timer_fn) is charged to the
watchdog.

--prove writes the profile of the remedies this machine can apply, runs jtr ab
with the probe and options of RESULT (drivers/ab.py: interleaved, reverted
whatever happens), and per remedy compares the time lost to its causes per
second of run: before (the baseline runs) and after (the tuned runs), the
saving's CI by a compound-Poisson bootstrap over the charged outliers (the
number of outliers of a side drawn from a Poisson law of its count, their
charges drawn with replacement), and whether the cause went away.
"""
import bisect
import os
import random

from ..errors import EXIT_INTERRUPTED, UsageError
from ..results.figures import measured_ns, result_figures, run_lost
from ..results.result import load_result, new_results_dir
from ..results.validity import of as validity_of
from ..results.validity import summary
from ..system import signals
from ..system.files import read_json, write_atomic, write_json
from ..system.numeric import numpy_or_none
from ..trace import causes as C
from ..trace import events as ev
from ..tune import advice as A
from ..tune import engine as E
from ..values import format_cpulist
from .ab import boot_job, experiment, resume_job
from .attribute import attribution_of
from .plan import PROBES

FORMAT = "jtr-advise/1"
WATCHDOG = (C.TICK, C.WATCHDOG_FN)
SLACK_NS = 1000
RESAMPLES = 2000
CONFIDENCE = 95.0


class Evidence:
    """What a result's outliers were charged to: .items [(rule, category, name, ns,
    outlier number)], .outliers (how many), .outlier_ns, .duration_ns, .cpus,
    .throttled (how many outliers RT throttling took part in), .source."""

    def __init__(self, result, progress=None):
        self.result = result
        self.progress = progress
        self.items, self.outliers, self.throttled = [], 0, 0
        f = result_figures(result)
        self.cpus = f["cpus"]
        # the outliers charged are those of every run (send's null runs too): so is
        # the time they are over, and the time lost
        runs = [r for r in result.get("runs", []) if isinstance(r, dict)]
        self.duration_ns = measured_ns(runs) or f["duration_ns"]
        self.lost_pct = f["lost_pct"]
        lost = [run_lost(r) for r in runs]
        if self.lost_pct is not None and len(runs) > f["runs"] and all(lost):
            self.lost_pct = 100.0 * sum(x[0] for x in lost) / sum(x[2] for x in lost)
        att = result.get("attribution")
        if not isinstance(att, dict) or not att.get("causes") and not att.get("outliers"):
            raise UsageError("%s has no attribution (its outliers were not charged to "
                             "causes): measure with jtr run (tracing on), or run jtr "
                             "attribute on it" % result.label)
        events_path = result.file("events")
        if events_path and os.path.exists(events_path):
            att = self._from_events()
        else:
            self._from_causes(att)
        # who sent the IPIs, where the tracer saw the sends: {IPI name: senders}
        self.senders = {c["name"]: c["senders"] for c in att.get("causes") or []
                        if c.get("category") == C.IPI and isinstance(c.get("senders"), list)}
        self.outlier_ns = sum(i[3] for i in self.items)

    def _from_causes(self, att):
        """No event log: the causes table, one item a cause (no per-outlier shapes)."""
        for c in att.get("causes", []):
            rid = A.classify(c["category"], c["name"])
            self.items.append((rid, c["category"], c["name"], c["total_ns"], None))
            self.outliers += c.get("primary_count", 0)

    def _from_events(self):
        result = self.result
        log = ev.read_events(result.file("events"), within=result.folder)
        dog = {}
        for e in log.of_type(ev.HRTIMER_ENTRY):
            if log.symbol(e.b) == WATCHDOG[1]:
                dog.setdefault(e.cpu, []).append(e.ts_ns)
        for ts in dog.values():
            ts.sort()
        k = [0]

        def each(cpu, start, length, parts, pids=(), works=()):
            n = k[0]
            k[0] += 1
            self.throttled += any(cat == C.THROTTLING for cat, _, _ in parts)
            for cat, name, ns in parts:
                rid = A.classify(cat, name, works)
                if rid == "tick" and _within(dog.get(cpu), start - SLACK_NS, start + length):
                    rid, cat, name = ("watchdog",) + WATCHDOG
                self.items.append((rid, cat, name, ns, n))

        att, _ = attribution_of(result, each=each, progress=self.progress)
        self.outliers = k[0]
        self._once_per_instant(att)
        return att

    def _once_per_instant(self, att):
        """Where outliers overlap (round trips in flight together) their parts add up
        to more time than passed: each cause's parts are scaled to its total charged
        once per instant (the attribution's causes), so no saving is more than the
        time the cause took."""
        if "summed_ns" not in (att.get("outliers") or {}):
            return
        total = {}
        for c in att.get("causes") or []:
            k = (c["category"], c["name"])
            total[k] = total.get(k, 0) + c["total_ns"]
        summed = {}
        for _, cat, name, ns, _ in self.items:
            summed[(cat, name)] = summed.get((cat, name), 0) + ns
        self.items = [(rid, cat, name, ns * total.get((cat, name), 0) //
                       max(1, summed[(cat, name)]), n)
                      for rid, cat, name, ns, n in self.items]

    def charges(self):
        """{rule: {(category, name): [ns, count]}}."""
        out = {}
        for rid, cat, name, ns, _ in self.items:
            c = out.setdefault(rid, {}).setdefault((cat, name), [0, 0])
            c[0] += ns
            c[1] += 1
        return out

    def per_outlier(self, rule):
        """The ns each outlier charged to @rule's causes lost to them (one item a
        cause when there was no event log)."""
        got = {}
        for rid, _, _, ns, n in self.items:
            if rid == rule:
                key = n if n is not None else len(got)
                got[key] = got.get(key, 0) + ns
        return list(got.values())

    def task_pids(self):
        """{comm: [pids]} of the task-preemption causes (the attribution's tasks)."""
        out = {name: [] for _, cat, name, _, _ in self.items if cat == C.TASK}
        att = self.result.get("attribution") or {}
        for c in att.get("causes") or []:
            if c.get("category") == C.TASK and c.get("name") in out:
                out[c["name"]] += [t.get("pid") for t in c.get("tasks") or []
                                   if isinstance(t, dict)]
        return out


def _within(ts, lo, hi):
    if not ts:
        return False
    i = bisect.bisect_left(ts, lo)
    return i < len(ts) and ts[i] <= hi


def advise_result(result, progress=None):
    """The advice for @result (a Result): the jtr-advise/1 document. @progress: a
    cli Progress told how the charges are gathered again from the events."""
    evd = Evidence(result, progress)
    if progress is not None:
        progress.done()
    facts = A.facts()
    ctx = A.Context(evd.cpus, facts, {n: A.find_tasks(n, pids, evd.cpus)
                                      for n, pids in evd.task_pids().items()},
                    A.own_path(result.get("transport")), evd.senders)
    charges = evd.charges()
    remedies = A.advise(charges, ctx, evd.outlier_ns, evd.duration_ns)
    host = result.get("host") or {}
    base = host.get("tuning_profile") or "jtr-baseline"
    doc = {"format": FORMAT, "result": result.label, "tool": result.get("tool"),
           "cpus": evd.cpus, "duration_ns": evd.duration_ns, "lost_pct": evd.lost_pct,
           "outliers": evd.outliers, "outlier_ns": evd.outlier_ns,
           "throttled_outliers": evd.throttled, "base_profile": base,
           "virtualised": host.get("virtualised"), "remedies": remedies,
           "own": A.own_causes(charges, ctx),
           "unexplained": _unexplained(evd)}
    doc["profile"] = profile_of(doc) if any(r["applicable"] for r in remedies) else None
    return doc, evd


def _unexplained(evd):
    """The causes no rule takes: [{category, name, ns}]."""
    out = {}
    for rid, cat, name, ns, _ in evd.items:
        if rid is None:
            out[(cat, name)] = out.get((cat, name), 0) + ns
    return [{"category": k[0], "name": k[1], "ns": v}
            for k, v in sorted(out.items(), key=lambda kv: -kv[1])]


def chosen(doc, top=None):
    """The remedies a profile carries: the applicable ones, @top of them at most."""
    rs = [r for r in doc["remedies"] if r["applicable"]]
    return rs[:top] if top else rs


def profile_of(doc, top=None):
    return A.profile_text(chosen(doc, top), doc["base_profile"], "%s (%s on CPU %s)" % (
        doc["result"], doc["tool"], ",".join(map(str, doc["cpus"]))))


def advise_job(path, opts, progress=None):
    """jtr advise RESULT up to the advice: the result at @path loaded (refused when it
    is not a valid measurement, unless @opts["accept_invalid"]), advised on, its
    profile cut to @opts["top"] remedies and written to @opts["profile_dir"]; with
    @opts["prove"] the machine checked first (root, no profile applied) and
    --prove's folder made (@opts["output"], else results/DATE-HOST-advise) with
    advice.json in it. (the jtr-advise/1 document, the Result, that folder or
    None)."""
    result = load_result(path)
    bad = summary(validity_of(result))
    if bad and not opts["accept_invalid"]:
        raise UsageError("%s: no remedy from it: %s; measure again (--accept-invalid "
                         "advises on it all the same)" % (path, bad))
    if opts["prove"]:
        E.need_root("advise --prove")
        st = E.active_state()
        if st:
            raise UsageError("profile %s is applied: revert it first ('jtr tune revert'), so "
                             "the baseline is the machine as RESULT measured it"
                             % st["profile"])
    doc, _ = advise_result(result, progress)
    if opts["top"] and doc["profile"]:
        doc["profile"] = profile_of(doc, opts["top"])
    folder = opts["profile_dir"]
    if folder:
        if not doc["profile"]:
            raise UsageError("--profile-dir: no remedy for %s can be applied here, so there "
                             "is no profile to write" % doc["result"])
        if os.path.exists(os.path.join(folder, "tuned.conf")):
            raise UsageError("--profile-dir %s: it holds a tuned.conf already; give a new "
                             "folder or remove it" % folder)
        made = not os.path.isdir(folder)
        os.makedirs(folder, exist_ok=True)
        try:
            write_atomic(os.path.join(folder, "tuned.conf"), doc["profile"])
        except OSError:
            if made:                # a full disk: no empty folder left as if written
                os.rmdir(folder)
            raise
    if not opts["prove"]:
        return doc, result, None
    outdir = new_results_dir("advise", opts["output"])
    os.makedirs(outdir)
    write_json(os.path.join(outdir, "advice.json"), doc)
    return doc, result, outdir


# ---------------------------------------------------------------- --prove

def probe_of(result):
    """(probe, its options) that made @result, as jtr ab takes them: the command
    without -o (ab names each run's folder), -c (ab measures the same CPU) and
    gap's -d (ab's -d sets it); UsageError for a result no probe of jtr run made."""
    cmd = [str(a) for a in result.get("command") or []]
    tool = result.get("tool")
    if tool == "app" and isinstance(result.get("app"), dict):
        return tool, []         # its settings are the result's "app" (prove)
    if not cmd or tool not in PROBES:
        raise UsageError("%s was made by %s, not by a probe of jtr run (%s): --prove "
                         "measures with the same probe" % (result.label, tool or "?",
                                                           ", ".join(PROBES)))
    args = cmd[1:]
    if args and args[0] in PROBES:
        args = args[1:]
    drop = {"-o", "--output", "-c", "--cpus", "--cpu"} | (
        {"-d", "--duration"} if tool == "gap" else set())
    out, i = [], 0
    while i < len(args):
        a = args[i]
        name = a.split("=", 1)[0]
        if name in drop:
            i += 1 if "=" in a else 2
            continue
        if len(a) > 2 and a[:2] in drop and not a.startswith("--"):
            i += 1
            continue
        out.append(a)
        i += 1
    return tool, out


def prove(doc, result, opts, outdir, say, note):
    """Apply the profile of @doc's applicable remedies around jtr ab runs of
    RESULT's probe into @outdir, then compare per remedy. @opts: repeat,
    duration_ns, top, backend; @say and @note: the lines due while it works,
    for stdout and stderr (what is proved, then jtr ab's: drivers/ab.py).
    Returns (exit status, the proof document)."""
    booted = with_boot_remedies(doc, opts["top"]) if opts.get("boot") else []
    rs = chosen(doc, opts["top"])
    if not rs:
        raise UsageError("nothing to prove: no remedy for %s can be applied on this "
                         "machine (see jtr advise %s)" % (doc["result"], doc["result"]))
    if booted:
        say("--boot: with the boot remedies %s" % ", ".join(
            "%s (%s)" % (r["rule"], " ".join(r["boot"])) for r in booted))
    probe, args = probe_of(result)
    folder = os.path.join(outdir, "profile", "jtr-advised")
    os.makedirs(folder)
    write_atomic(os.path.join(folder, "tuned.conf"), profile_of(doc, opts["top"]))
    cpus = doc["cpus"][:1]
    profile = E.load_profile(folder, cpus)      # checked as jtr tune apply checks it
    dur = opts["duration_ns"]
    if probe == "gap" and dur is None:
        dur = doc["duration_ns"]
    app = None
    if probe == "app":
        # jtr run app's settings as the result keeps them; a process given by --pid
        # must still run (it is measured again in every run)
        app = dict(result["app"], output=None, slack_ns=None, top=None,
                   gates=(None, None), junit=None, argv=None, command="")
        if app.get("pid") is not None and not os.path.isdir("/proc/%d" % app["pid"]):
            raise UsageError("%s timed process %d, which is gone: --prove measures it again; "
                             "run jtr run app again on the running process first"
                             % (result.label, app["pid"]))
        if opts["duration_ns"] is not None:
            app["duration_ns"] = opts["duration_ns"]
    o = {"profile": folder, "duration_ns": dur if probe == "gap" else None,
         "repeat": opts["repeat"], "trace": True, "backend": opts["backend"],
         "via_tuned": opts.get("via_tuned"), "app": app,
         "probe": probe, "probe_args": args, "partner_cpu": None, "quantity": None}
    say("proving %d remed%s of %s with jtr ab (profile %s/tuned.conf)"
        % (len(rs), "y" if len(rs) == 1 else "ies", doc["result"], folder))
    if opts.get("boot"):
        # the boot options need a reboot: the baseline now, the rest after it
        doc["prove"] = {"top": opts["top"], "boot": True}
        write_json(os.path.join(outdir, "advice.json"), doc)
        rc = boot_job(dict(o, cpus=format_cpulist(cpus), pong_cpu=None, sub_cpu=None,
                           accept_invalid=False, out=os.path.join(outdir, "ab")), say, note,
                      resume="jtr advise --resume %s" % outdir)
        return rc, None
    os.makedirs(os.path.join(outdir, "ab"))
    # a stop, however late, ends the runs and keeps what they measured: the
    # savings are worked out and prove.json written all the same (a SIGTERM
    # after jtr ab's runs lost it)
    with signals.measuring():
        rc = experiment(o, profile, cpus, os.path.join(outdir, "ab"), say, note)
        proof = measure_savings(doc, rs, os.path.join(outdir, "ab"))
        if signals.requested():
            rc = EXIT_INTERRUPTED
        proof["exit_status"] = rc
        proof["interrupted"] = signals.requested()
        write_json(os.path.join(outdir, "prove.json"), proof)
    return rc, proof


BOOT_OPTION = "cmdline_jtr_advised"


def with_boot_remedies(doc, top=None):
    """--prove --boot: the remedies of @doc that only a boot line lacks (this machine
    can change its command line, and its kernel has what the words need) made
    applicable, their words one [bootloader] line (each word once) in each of them
    (the profile writes an option once); re-sorted as advise sorts them. The
    remedies so made, among the @top chosen."""
    ok, _ = E.can_change_cmdline()
    made = []
    for r in doc["remedies"]:
        if r["applicable"] or not r.get("boot") or not ok or (
                any(w.startswith("nohz_full=") for w in r["boot"]) and
                not E.has_nohz_full()):
            continue
        r["applicable"], r["why_not"] = True, None
        made.append(r)
    doc["remedies"].sort(key=lambda r: (not r["applicable"], r["rule"] == "host",
                                        -r["saving_ns"], r["rule"]))
    made = [r for r in chosen(doc, top) if r in made]
    words = list(dict.fromkeys(w for r in made for w in r["boot"]))
    for r in made:
        r["changes"] = [{"section": "bootloader", "option": BOOT_OPTION,
                         "value": "+" + " ".join(words),
                         "comment": "boot: the boot lines of %s (a reboot)" % ", ".join(
                             x["rule"] for x in made)}]
    return made


def resume_prove(outdir, say, note):
    """jtr advise --resume DIR: after the reboot --prove --boot asked for, jtr ab's
    tuned runs (drivers/ab.py resume_job) and each remedy's saving, prove.json
    written. (exit status, the proof document, the advice)."""
    doc = read_json(os.path.join(outdir, "advice.json"), FORMAT, "jtr advise --prove record",
                    missing="give the folder jtr advise --prove --boot wrote")
    if not isinstance(doc.get("prove"), dict) or not doc["prove"].get("boot"):
        raise UsageError("--resume %s: not a jtr advise --prove --boot experiment" % outdir)
    rs = chosen(doc, doc["prove"].get("top"))
    abdir = os.path.join(outdir, "ab")
    with signals.measuring():
        rc = resume_job(abdir, say, note)
        proof = measure_savings(doc, rs, abdir)
        if signals.requested():
            rc = EXIT_INTERRUPTED
        proof["exit_status"] = rc
        proof["interrupted"] = signals.requested()
        write_json(os.path.join(outdir, "prove.json"), proof)
    return rc, proof, doc


def measure_savings(doc, remedies, abdir):
    """Per remedy, the time lost to its causes per second before and after, from
    the runs jtr ab wrote in @abdir."""
    sides = {"a": [], "b": []}
    for name in sorted(os.listdir(abdir)):
        side = name.split("-")[0]
        if side in sides and os.path.exists(os.path.join(abdir, name, "result.json")):
            sides[side].append(Evidence(load_result(os.path.join(abdir, name))))
    rng = random.Random(1)
    rows = []
    for r in remedies:
        a = _side(sides["a"], r["rule"])
        b = _side(sides["b"], r["rule"])
        row = {"rule": r["rule"], "predicted_per_s_ns": r["per_s_ns"],
               "before_per_s_ns": a["per_s"], "after_per_s_ns": b["per_s"],
               "before_count": a["count"], "after_count": b["count"],
               "saving_per_s_ns": None, "ci": None, "outcome": "not measured"}
        if a["dur_s"] and b["dur_s"]:
            row["saving_per_s_ns"] = round(a["per_s"] - b["per_s"], 1)
            row["ci"] = _saving_ci(a, b, rng)
            row["outcome"] = _outcome(row, b)
        rows.append(row)
    return {"format": FORMAT + "-proof", "result": doc["result"], "ab": abdir,
            "runs": {k: len(v) for k, v in sides.items()}, "remedies": rows}


def _side(evds, rule):
    charges, dur = [], 0
    for e in evds:
        charges += e.per_outlier(rule)
        dur += e.duration_ns or 0
    s = dur / 1e9
    return {"charges": charges, "dur_s": s, "count": len(charges),
            "per_s": round(sum(charges) / s, 1) if s else None}


def _saving_ci(a, b, rng):
    """The CONFIDENCE % interval of (A - B) per second, compound-Poisson bootstrap."""
    np = numpy_or_none()

    def draws(side):
        ch = side["charges"]
        if np is not None:
            gen = np.random.default_rng(rng.randrange(1 << 30))
            ks = gen.poisson(len(ch), RESAMPLES)
            arr = np.array(ch or [0], dtype=np.float64)
            return [float(arr[gen.integers(0, len(arr), k)].sum()) if ch else 0.0
                    for k in ks]
        out = []
        for _ in range(RESAMPLES):
            k = _poisson(rng, len(ch))
            out.append(float(sum(rng.choice(ch) for _ in range(k))) if ch else 0.0)
        return out
    da, db = draws(a), draws(b)
    d = sorted(x / a["dur_s"] - y / b["dur_s"] for x, y in zip(da, db))
    alpha = (100.0 - CONFIDENCE) / 200.0
    return [round(d[int(alpha * (RESAMPLES - 1))], 1),
            round(d[int((1 - alpha) * (RESAMPLES - 1))], 1)]


def _poisson(rng, lam):
    """A Poisson draw (Knuth's method for small means, normal beyond)."""
    if lam > 50:
        return max(0, int(round(rng.gauss(lam, lam ** 0.5))))
    limit, k, p = pow(2.718281828459045, -lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def _outcome(row, b):
    lo, hi = row["ci"]
    if b["count"] == 0 and row["before_count"] == 0:
        return "not seen"
    if b["count"] == 0:
        return "gone"
    if lo > 0:
        return "reduced"
    if hi < 0:
        return "grew"
    return "within noise"
