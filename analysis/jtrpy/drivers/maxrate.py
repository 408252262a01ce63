# SPDX-License-Identifier: GPL-2.0-only
"""maxrate - jtr maxrate: the maximum sustainable rate of a transport: run jtr
sub and jtr pub at a rate for a step, step up while nothing fails, then bisect
between the last good and the first bad rate; with several message sizes
(--sizes) a search per size, one after the other; with --rates, no search: a
step at each rate given (and size), its subscriber measuring latency (not -f).
maxrate.json holds every step (written again after each), and per mode the
answer per size ("sizes") or the latency at each rate ("sweep").

maxrate_job is the command's job: the programs checked, the results folder
made, the run, and the exit status; the command prints its progress (the
callbacks) and its end (render/maxrate.py)."""
import os
import shutil
import socket
import subprocess
from collections import namedtuple

from ..errors import EXIT_INTERRUPTED, UsageError
from ..results.result import load_result, make_results_dir
from ..system import signals
from ..system.files import write_json
from ..system.paths import probe_path
from ..system.procs import cpu_times
from ..vocab import DATAGRAM_TRANSPORTS, TP_FULL_LEN
from .programs import last_line, stop, wait_ready

FORMAT = "jtr-maxrate/1"

def cpu_ticks():
    """(steal, total) clock ticks of all CPUs so far (/proc/stat), or None."""
    t = cpu_times()
    return None if t is None else (t["all"][7], sum(t["all"]))


def steal_pct(t0, t1):
    """The share of CPU time the hypervisor took between two cpu_ticks()."""
    if t0 is None or t1 is None or t1[1] <= t0[1]:
        return None
    return 100.0 * (t1[0] - t0[0]) / (t1[1] - t0[1])


def read(folder):
    """A program's result.json, or None."""
    try:
        return load_result(folder)
    except UsageError:
        return None


LATENCY_KEYS = ("50", "99", "99.9")


def latency(doc):
    """{"from_send": {...}, "from_intended": {...}} of a jtr sub result that
    measured latency, each {p50_ns, p99_ns, p99.9_ns, max_ns, samples, min_ns,
    mean_ns}; None
    for a fast (-f) one or one with no sample."""
    out = {}
    for run in (doc or {}).get("runs") or []:
        name = str(run.get("name") or "")
        if name.startswith("latency_") and run.get("samples"):
            p = run.get("percentiles_ns") or {}
            row = {"p%s_ns" % k: p.get(k) for k in LATENCY_KEYS}
            row.update(max_ns=run.get("max_ns"), samples=run.get("samples"),
                       min_ns=run.get("min_ns"), mean_ns=run.get("mean_ns"))
            out[name[len("latency_"):]] = row
    return out or None


def refused(rec, pub_log, sub_log):
    """UsageError when jtr pub or jtr sub refused its options (exit 2): every
    step would, so the search ends at once with the program's own words."""
    for side, log, opt in (("pub", pub_log, "--pub"), ("sub", sub_log, "--sub")):
        if rec.get(side + "_exit") == 2:
            raise UsageError("jtr %s refused its options (from -T, -P, -m, -b, -%s or %s): %s"
                             % (side, "A" if side == "pub" else "a", opt, last_line(log)))


class Search:
    """The steps run so far, into @outdir; @len is the message size of the
    steps now (one of o["sizes"])."""

    def __init__(self, o, outdir):
        self.o, self.outdir, self.steps = o, outdir, []
        self.len = o["sizes"][0]
        self.sizes = []         # --sizes: a record per size (size_record), the last one running
        self.sweep = []         # --rates: a row per rate measured (sweep_row)
        self.state = "running"  # the whole run's, for --sizes

    def common(self):
        c = ["-T", self.o["kind"]] + (["-P", self.o["addr"]] if self.o["addr"] else [])
        return c + (["-b"] if self.o["busy"] else [])

    def step(self, rate):
        """Run one step at @rate; its record (appended to self.steps)."""
        o, n = self.o, len(self.steps) + 1
        name = "%02d-%d" % (n, rate) + ("-%dB" % self.len if len(o["sizes"]) > 1 else "")
        d = os.path.join(self.outdir, name)
        os.makedirs(d)
        self.ticks0 = cpu_ticks()
        count = max(10, rate * o["step_ns"] // 10**9)
        warm = max(10, count // 10)
        # a search counts only (--fast); a rate sweep measures the latency too
        sub_cmd = [probe_path("sub")] + ([] if o["rates"] else ["--fast"])
        sub_cmd += ["-o", os.path.join(d, "sub")] + self.common()
        sub_cmd += (["-c", str(o["sub_cpu"])] if o["sub_cpu"] is not None else []) + o["sub"]
        pub_cmd = [probe_path("pub"), "-q", "-o", os.path.join(d, "pub"), "-r", str(rate),
                   "-n", str(count), "-w", str(warm), "-m", str(self.len)] + self.common()
        pub_cmd += (["-c", str(o["pub_cpu"])] if o["pub_cpu"] is not None else []) + o["pub"]
        rec = {"step": n, "msg_len": self.len, "rate_hz": rate, "count": count,
               "warmup": warm, "folder": name}
        # the measured part, the warm-up, and what a receiver 4 times slower needs
        limit = 15 + 5 * (count + warm) / rate
        sub_log, pub_log = os.path.join(d, "sub.log"), os.path.join(d, "pub.log")
        with open(sub_log, "w") as sl, open(pub_log, "w") as pl:
            sub = signals.spawn(sub_cmd, stdout=sl, stderr=subprocess.STDOUT)
            pub = None
            try:
                if o["kind"] in DATAGRAM_TRANSPORTS and not wait_ready(sub, sub_log, 15):
                    rec["sub_exit"] = stop(sub)
                    refused(rec, pub_log, sub_log)
                    return self.done(rec, ["sub did not start (see %s)" % sub_log])
                pub = signals.spawn(pub_cmd, stdout=pl, stderr=subprocess.STDOUT)
                timed_out = []
                try:
                    pub.wait(limit)
                except subprocess.TimeoutExpired:
                    timed_out.append("pub took over %.0f s" % limit)
                rec["pub_exit"] = stop(pub)
                try:
                    # pub refused its options: nothing is coming
                    sub.wait(0 if rec["pub_exit"] == 2 else 15)
                except subprocess.TimeoutExpired:
                    if rec["pub_exit"] != 2:
                        timed_out.append("sub did not finish")
                rec["sub_exit"] = stop(sub)
            finally:
                for p in (pub, sub):
                    if p is not None and p.poll() is None:
                        stop(p)
        refused(rec, pub_log, sub_log)
        return self.done(rec, timed_out)

    def done(self, rec, reasons):
        o, rate = self.o, rec["rate_hz"]
        if signals.requested():     # a stop signal cut the step short: no verdict
            rec.update(interrupted=True, verdict="interrupted", noisy=False, steal_pct=None)
            rec["pass"] = False
            self.steps.append(rec)
            return rec
        d = os.path.join(self.outdir, rec["folder"])
        pdoc, sdoc = read(os.path.join(d, "pub")), read(os.path.join(d, "sub"))
        pt = None if pdoc is None else pdoc.get("transport") or {}
        st = None if sdoc is None else sdoc.get("transport") or {}
        rec["steal_pct"] = steal_pct(self.ticks0, cpu_ticks())
        low = rate * (1 - o["slack"] / 100)
        if pt is not None:
            issued = pt.get("issued") or 0
            rec.update(pub_rate_hz=pt.get("rate_hz"), sent=pt.get("sent"),
                       late_sends=pt.get("late_sends"), blocked_sends=pt.get("blocked_sends"),
                       late_pct=100.0 * (pt.get("late_sends") or 0) / issued if issued else None)
            if rec.get("pub_exit"):
                reasons.append("pub exit %d (%s)" % (rec["pub_exit"], pt.get("peer")))
            if (pt.get("rate_hz") or 0) < low:
                reasons.append("sender behind")
            if pt.get("blocked_sends"):
                # the seeds' EWOULDBLOCK: the transport was full, the sender waited
                n = pt["blocked_sends"]
                reasons.append("%s send%s waited for room" % ("{:,}".format(n),
                                                              "" if n == 1 else "s"))
            if o["method"] == "late" and rec["late_pct"] is not None and \
                    rec["late_pct"] > o["max_late"]:
                reasons.append("late sends")
        elif "pub_exit" in rec:
            reasons.append("pub exit %d, no result" % rec["pub_exit"])
        if st is not None:
            rec.update(sub_rate_hz=st.get("rate_hz"), received=st.get("received"),
                       lost=st.get("lost"), duplicates=st.get("duplicates"),
                       end_of_stream=st.get("end_of_stream"))
            lat = latency(sdoc)
            if lat:
                rec["latency_ns"] = lat
            if st.get("lost"):
                drops = st.get("socket_drops")
                reasons.append("loss (%s at the subscriber's socket: its receive buffer was "
                               "full)" % "{:,}".format(drops) if drops else "loss")
            if rec.get("sub_exit"):
                reasons.append("sub exit %d (%s)" % (rec["sub_exit"], st.get("peer")))
            elif not st.get("end_of_stream"):
                reasons.append("no end of stream")
            if (st.get("rate_hz") or 0) < low:
                reasons.append("receiver behind")
        elif "sub_exit" in rec and not reasons:
            reasons.append("sub exit %d, no result" % rec["sub_exit"])
        rec["pass"] = not reasons
        rec["noisy"] = bool(reasons) and (rec["steal_pct"] or 0) > o["max_steal"]
        if rec["noisy"]:
            reasons.append("host stole %.0f%% of the CPUs" % rec["steal_pct"])
        rec["verdict"] = "pass" if not reasons else "FAIL: " + ", ".join(reasons)
        self.steps.append(rec)
        return rec


def mode(o):
    """"search" (one size), "sizes" (a search per size) or "rates" (a sweep)."""
    return "rates" if o["rates"] else "sizes" if len(o["sizes"]) > 1 else "search"


def size_record(s, size, good, bad, state):
    """A size's answer: its search's state, max rate and first bad rate, MB/s at
    the max rate, and the figures of the step that passed there ("at")."""
    at = [r for r in s.steps if r.get("msg_len") == size and r.get("pass")
          and r["rate_hz"] == good]
    a = at[-1] if at else {}
    return {"msg_len": size, "state": state, "max_rate_hz": good, "first_bad_hz": bad,
            "mb_per_s": good * size / 1e6 if good else None,
            "at": {k: a.get(k) for k in ("step", "pub_rate_hz", "sub_rate_hz", "lost",
                                         "late_pct")} if a else None}


def sweep_row(rec):
    """A rate of the sweep from its step: achieved is the subscriber's rate;
    the latency is from the intended send time (what the schedule asked: a
    sender that fell behind counts its delay), from the send below TP_FULL_LEN
    bytes, where a message carries no intended time (`from`)."""
    whence = "intended" if rec["msg_len"] >= TP_FULL_LEN else "send"
    lat = (rec.get("latency_ns") or {}).get("from_" + whence) or {}
    row = {"step": rec["step"], "msg_len": rec["msg_len"], "rate_hz": rec["rate_hz"],
           "achieved_hz": rec.get("sub_rate_hz"), "pub_rate_hz": rec.get("pub_rate_hz"),
           "lost": rec.get("lost"), "pass": rec["pass"], "verdict": rec["verdict"],
           "from": whence}
    row.update({k: lat.get(k) for k in ("min_ns", "mean_ns", "p50_ns", "p99_ns", "p99.9_ns",
                                        "max_ns")})
    return row


def save(outdir, o, s, good, bad, state):
    m = mode(o)
    if m == "sizes" and s.sizes and state in ("searching", "bisecting", "interrupted"):
        s.sizes[-1].update(size_record(s, s.len, good, bad, state))    # the size running
    doc = {"format": FORMAT, "tool": "maxrate", "host": socket.gethostname(),
           "params": {"transport": o["kind"], "addr": o["addr"], "from_hz": o["from"],
                      "to_hz": o["to"], "step_ns": o["step_ns"], "msg_len": o["sizes"][0],
                      "sizes": o["sizes"], "rates": o["rates"],
                      "busy": o["busy"], "pub_cpu": o["pub_cpu"], "sub_cpu": o["sub_cpu"],
                      "tolerance_pct": o["tolerance"], "slack_pct": o["slack"],
                      "method": o["method"], "max_late_pct": o["max_late"],
                      "retries": o["retries"],
                      "max_steal_pct": o["max_steal"], "pub_options": o["pub"],
                      "sub_options": o["sub"]},
           "mode": m, "state": state, "max_rate_hz": good, "first_bad_hz": bad,
           "steps": s.steps}
    if m == "sizes":
        doc.update(state=s.state, max_rate_hz=None, first_bad_hz=None, sizes=s.sizes)
    elif m == "rates":
        doc.update(max_rate_hz=None, first_bad_hz=None, sweep=s.sweep)
    write_json(os.path.join(outdir, "maxrate.json"), doc)


NOISY_TRIES = 3     # uncounted runs of one rate because the host stole the CPUs


def trial(o, s, rate, progress):
    """A step at @rate, run again up to --retries times while it fails (and up to
    NOISY_TRIES more when the failure came with host steal above --max-steal);
    the last."""
    k = noisy = 0
    while True:
        if signals.requested():
            raise KeyboardInterrupt
        r = s.step(rate)
        k += 1
        r["try"] = k
        progress(r)
        if r.get("interrupted"):
            raise KeyboardInterrupt
        if r["pass"]:
            return r
        if r["noisy"] and noisy < NOISY_TRIES:
            noisy += 1
        elif k - noisy > o["retries"]:
            return r


def search(o, s, outdir, progress):
    """Step up (or down), then bisect; (good, bad, state)."""
    good = bad = None
    rate = o["from"]
    while True:                        # 1. double while passing, halve while failing
        r = trial(o, s, rate, progress)
        if r["pass"]:
            good = rate
            if bad is not None or rate >= o["to"]:
                break
            rate = min(rate * 2, o["to"])
        else:
            bad = rate
            if good is not None:
                break
            if rate == 1:
                return None, bad, "none passed"
            rate = max(1, rate // 2)
        save(outdir, o, s, good, bad, "searching")
    if good >= o["to"] and bad is None:
        return good, None, "reached --to"
    while (bad - good) * 100 > o["tolerance"] * good:   # 2. bisect
        mid = (good + bad) // 2
        if mid in (good, bad):
            break
        r = trial(o, s, mid, progress)
        if r["pass"]:
            good = mid
        else:
            bad = mid
        save(outdir, o, s, good, bad, "bisecting")
    return good, bad, "done"




def search_sizes(o, s, outdir, progress, begin):
    """A search per size of o["sizes"], @begin(index, size) before each; the
    answers in s.sizes. Returns the last size's (good, bad, state)."""
    for i, size in enumerate(o["sizes"]):
        s.len = size
        s.sizes.append(size_record(s, size, None, None, "searching"))
        begin(i, size)
        good, bad, state = search(o, s, outdir, progress)
        s.sizes[-1].update(size_record(s, size, good, bad, state))
    return good, bad, "done"


def sweep_rates(o, s, outdir, progress, begin):
    """A step at each rate of o["rates"] for each size, @begin(index, size)
    before each size; the rows in s.sweep. A step that fails is not run again:
    its verdict is part of the sweep."""
    for i, size in enumerate(o["sizes"]):
        s.len = size
        begin(i, size)
        for rate in o["rates"]:
            if signals.requested():
                raise KeyboardInterrupt
            r = s.step(rate)
            if r.get("interrupted"):
                progress(r)
                raise KeyboardInterrupt
            s.sweep.append(sweep_row(r))
            progress(r)
            save(outdir, o, s, None, None, "sweeping")
    return None, None, "done"


def find_max_rate(o, outdir, progress, begin=lambda i, size: None):
    """The whole run into @outdir, @progress(step record) after each step and
    @begin(index, size) before each size (--sizes, --rates): (Search, good,
    bad, state), good and bad those of the last size searched. A stop signal
    (system/signals.py) reaches the running pub and sub once; the step ends as
    "interrupted" and the run stops with the table so far (state
    "interrupted": the sizes and rates that finished are kept); maxrate.json is
    written either way."""
    s = Search(o, outdir)
    m = mode(o)
    with signals.measuring():
        try:
            if m == "rates":
                good, bad, state = sweep_rates(o, s, outdir, progress, begin)
            elif m == "sizes":
                good, bad, state = search_sizes(o, s, outdir, progress, begin)
            else:
                good, bad, state = search(o, s, outdir, progress)
        except KeyboardInterrupt:
            done = [r for r in s.steps if not r.get("interrupted") and r["msg_len"] == s.len]
            ok = [r["rate_hz"] for r in done if r["pass"]]
            ko = [r["rate_hz"] for r in done if not r["pass"] and r["rate_hz"] > max(ok or [0])
                  and sum(x["rate_hz"] == r["rate_hz"] for x in done) > o["retries"]]
            good, bad, state = max(ok) if ok else None, min(ko) if ko else None, "interrupted"
            if m == "rates":
                good = bad = None
    s.state = state
    save(outdir, o, s, good, bad, state)
    return s, good, bad, state


# what a jtr maxrate run ends with: the Search (its steps, sizes and sweep), the
# last size's good and bad rates and state, the mode, the results folder, and
# the exit status (0 answered, 1 not, EXIT_INTERRUPTED)
Outcome = namedtuple("Outcome", "search good bad state mode outdir rc")


def answered(o, s, good):
    """Whether the run answered: every size a max rate (--sizes), every step run
    (--rates), a rate that passed (a search)."""
    m = mode(o)
    if m == "sizes":
        return all(r["max_rate_hz"] is not None for r in s.sizes)
    if m == "rates":
        return True
    return good is not None


def maxrate_job(o, progress, begin=lambda i, size: None):
    """jtr maxrate's job on settings @o: jtr pub and jtr sub found (not built:
    JtrError now), the results folder made (o["out"], or results/DATE-HOST-maxrate),
    then find_max_rate with @progress(step record, its sweep row or None) after
    each step and @begin(index, size) before each size; an Outcome. Options jtr
    pub or jtr sub refuse (UsageError) leave nothing behind: not the folder, nor
    a results/ made for it."""
    probe_path("pub"), probe_path("sub")          # not built: say so now
    parent = os.path.abspath(os.path.dirname(o["out"]) if o["out"] else "results")
    made_parent = not os.path.isdir(parent)
    outdir = make_results_dir("maxrate", o["out"])

    def step(rec):
        row = sweep_row(rec) if o["rates"] and not rec.get("interrupted") else None
        progress(rec, row)
    try:
        s, good, bad, state = find_max_rate(o, outdir, step, begin)
    except UsageError:
        shutil.rmtree(outdir, ignore_errors=True)      # bad options: nothing is kept
        if made_parent:
            shutil.rmtree(parent, ignore_errors=True)
        raise
    rc = EXIT_INTERRUPTED if state == "interrupted" else 0 if answered(o, s, good) else 1
    return Outcome(s, good, bad, state, mode(o), outdir, rc)
