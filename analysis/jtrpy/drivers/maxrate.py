"""maxrate - jtr maxrate: the maximum sustainable rate of a transport: run jtr
sub and jtr pub at a rate for a step, step up while nothing fails, then bisect
between the last good and the first bad rate; maxrate.json holds every step."""
import os
import socket
import subprocess

from ..errors import UsageError
from ..results.result import load_result
from ..system import signals
from ..system.files import write_json
from ..system.paths import probe_path
from ..system.procs import cpu_times
from ..vocab import DATAGRAM_TRANSPORTS
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
    try:
        return load_result(folder).get("transport") or {}
    except UsageError:
        return None


def refused(rec, pub_log, sub_log):
    """UsageError when jtr pub or jtr sub refused its options (exit 2): every
    step would, so the search ends at once with the program's own words."""
    for side, log, opt in (("pub", pub_log, "--pub"), ("sub", sub_log, "--sub")):
        if rec.get(side + "_exit") == 2:
            raise UsageError("jtr %s refused its options (from -T, -P, -m, -b, -%s or %s): %s"
                             % (side, "A" if side == "pub" else "a", opt, last_line(log)))


class Search:
    def __init__(self, o, outdir):
        self.o, self.outdir, self.steps = o, outdir, []

    def common(self):
        c = ["-T", self.o["kind"]] + (["-P", self.o["addr"]] if self.o["addr"] else [])
        return c + (["-b"] if self.o["busy"] else [])

    def step(self, rate):
        """Run one step at @rate; its record (appended to self.steps)."""
        o, n = self.o, len(self.steps) + 1
        d = os.path.join(self.outdir, "%02d-%d" % (n, rate))
        os.makedirs(d)
        self.ticks0 = cpu_ticks()
        count = max(10, rate * o["step_ns"] // 10**9)
        warm = max(10, count // 10)
        sub_cmd = [probe_path("sub"), "-f", "-o", os.path.join(d, "sub")] + self.common()
        sub_cmd += (["-a", str(o["sub_cpu"])] if o["sub_cpu"] is not None else []) + o["sub"]
        pub_cmd = [probe_path("pub"), "-q", "-o", os.path.join(d, "pub"), "-r", str(rate),
                   "-n", str(count), "-w", str(warm), "-m", str(o["len"])] + self.common()
        pub_cmd += (["-a", str(o["pub_cpu"])] if o["pub_cpu"] is not None else []) + o["pub"]
        rec = {"step": n, "rate_hz": rate, "count": count, "warmup": warm,
               "folder": os.path.basename(d)}
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
        pt, st = read(os.path.join(d, "pub")), read(os.path.join(d, "sub"))
        rec["steal_pct"] = steal_pct(self.ticks0, cpu_ticks())
        low = rate * (1 - o["slack"] / 100)
        if pt is not None:
            issued = pt.get("issued") or 0
            rec.update(pub_rate_hz=pt.get("rate_hz"), sent=pt.get("sent"),
                       late_sends=pt.get("late_sends"),
                       late_pct=100.0 * (pt.get("late_sends") or 0) / issued if issued else None)
            if rec.get("pub_exit"):
                reasons.append("pub exit %d (%s)" % (rec["pub_exit"], pt.get("peer")))
            if (pt.get("rate_hz") or 0) < low:
                reasons.append("sender behind")
            if rec["late_pct"] is not None and rec["late_pct"] > o["max_late"]:
                reasons.append("late sends")
        elif "pub_exit" in rec:
            reasons.append("pub exit %d, no result" % rec["pub_exit"])
        if st is not None:
            rec.update(sub_rate_hz=st.get("rate_hz"), received=st.get("received"),
                       lost=st.get("lost"), duplicates=st.get("duplicates"),
                       end_of_stream=st.get("end_of_stream"))
            if st.get("lost"):
                reasons.append("loss")
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


def save(outdir, o, s, good, bad, state):
    doc = {"format": FORMAT, "tool": "maxrate", "host": socket.gethostname(),
           "params": {"transport": o["kind"], "addr": o["addr"], "from_hz": o["from"],
                      "to_hz": o["to"], "step_ns": o["step_ns"], "msg_len": o["len"],
                      "busy": o["busy"], "pub_cpu": o["pub_cpu"], "sub_cpu": o["sub_cpu"],
                      "tolerance_pct": o["tolerance"], "slack_pct": o["slack"],
                      "max_late_pct": o["max_late"], "retries": o["retries"],
                      "max_steal_pct": o["max_steal"], "pub_options": o["pub"],
                      "sub_options": o["sub"]},
           "state": state, "max_rate_hz": good, "first_bad_hz": bad, "steps": s.steps}
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




def find_max_rate(o, outdir, progress):
    """The whole search into @outdir, @progress(step record) after each step:
    (Search, good, bad, state). A stop signal (system/signals.py) reaches the
    running pub and sub once; the step ends as "interrupted" and the search
    stops with the table so far (state "interrupted"); maxrate.json is written
    either way."""
    s = Search(o, outdir)
    with signals.measuring():
        try:
            good, bad, state = search(o, s, outdir, progress)
        except KeyboardInterrupt:
            done = [r for r in s.steps if not r.get("interrupted")]
            ok = [r["rate_hz"] for r in done if r["pass"]]
            ko = [r["rate_hz"] for r in done if not r["pass"] and r["rate_hz"] > max(ok or [0])
                  and sum(x["rate_hz"] == r["rate_hz"] for x in done) > o["retries"]]
            good, bad, state = max(ok) if ok else None, min(ko) if ko else None, "interrupted"
    save(outdir, o, s, good, bad, state)
    return s, good, bad, state
