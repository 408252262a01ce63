"""suite - jtr suite: the standard set of measurements into one folder (the
original's tstall.sh), and jtr report of that folder (its plotall.sh).

Items, one results folder each under the suite's folder: the 100-cycle null loop
timed with RDTSC (null) and with clock_gettime (null-clock, the original's
tst_clock), the clock sources (clock), back-to-back timestamps (gap), and a send
tool's send-vs-null pairs per transport (send-KIND) when jtr-send is built.
suite.json says what ran, with which command, its exit status and where; it is
written atomically before the first item and after each one, so a reader (or a
Ctrl-C) finds it complete at every moment.
"""
import datetime
import json
import os
import signal
import socket
import subprocess
import sys
import time

from . import runjob
from .cli import parse_count, parse_duration_ns, take_value
from .cpus import default_cpu, online_cpus, pack_cpulist, parse_cpulist
from .errors import JtrError, UsageError
from .figures import result_figures, run_pairs
from .paths import probe_path
from .result import dumps_result, load_result, new_results_dir, write_atomic
from .units import fmt_ns

FORMAT = "jtr-suite/1"
TRANSPORTS = ("shm", "tcp", "udp", "mcast", "unix", "unix-dgram")
DEFAULTS = {"samples": "2M", "send_samples": "500K", "runs": 3, "gap_ns": 10 * 10**9,
            "reads": "1M"}
QUICK = {"samples": "20K", "send_samples": "20K", "runs": 2, "gap_ns": 5 * 10**8,
         "reads": "20K"}

USAGE = """\
usage: jtr suite [--quick] [-o DIR] [--cpus LIST] [-n COUNT] [-r RUNS]
                 [-d DURATION] [--transports LIST] [--only LIST]

Run the standard set of measurements one after the other, each into its own
folder under DIR, like the original jitter tools' tstall.sh; then 'jtr report
DIR' draws them all on one page, like their plotall.sh.

  null         jtr null: the 100-cycle empty loop timed with RDTSC (tst_null)
  null-clock   jtr null -t clock: the same loop timed with clock_gettime (tst_clock)
  clock        jtr clock: cost and steps of each clock source
  gap          jtr gap: back-to-back timestamps, every interruption logged
  send-KIND    jtr send -T KIND: send calls against a null loop of the same mean,
               in pairs (send_1, null_1, ...), per transport (tst_sock and friends);
               only when jtr-send is built, else skipped with a line saying so

options:
  --quick            short items for a first look or a test: 20K samples x 2 runs,
                     gap 0.5 s, clock 20K reads, in seconds (default: null loops
                     2M samples x 3 runs as the original, gap 10 s, clock 1M
                     reads, send 500K samples x 3 pairs; about 40 s here, plus
                     about 20 s per transport)
  -o DIR             the suite's folder (default results/DATE-HOST-suite); must not
                     exist
  --cpus LIST        CPUs to measure: gap measures them all, the others the first
                     (default: first isolated CPU, else the last online one)
  -n COUNT           samples per run of null, null-clock and send (K/M/G
                     suffixes; default 2M, send 500K)
  -r RUNS            runs of null and null-clock, pairs of send
  -d DURATION        gap's duration (10s, 500ms; bare = seconds)
  --transports LIST  send's transports, comma-separated (default: all of
                     {kinds})
  --only LIST        run only these items (names as above, comma-separated; send
                     for every send-KIND)

DIR/suite.json lists the items: name, tool, command, folder, status (done,
failed, interrupted, skipped, not run), exit status, start, end; each item's
output is in DIR/NAME.log. Ctrl-C stops the item that is running (it writes what
it measured), keeps what finished and marks the suite partial. Exit status 0
when every item ran, 1 when one failed, 2 for bad options, 130 when interrupted.

examples:
  jtr suite --quick -o /tmp/s && jtr report /tmp/s
  jtr suite --cpus 1 -o before-tuning
  jtr suite --only null,send --transports udp,shm -n 500K
"""


def now_iso():
    t = datetime.datetime.now(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


# --- options ---------------------------------------------------------------

def parse(args):
    o = {"quick": False, "out": None, "cpus": None, "samples": None, "runs": None,
         "gap_ns": None, "transports": list(TRANSPORTS), "only": None}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--quick":
            o["quick"] = True
        elif a in ("-o", "--output"):
            o["out"] = take_value(args, i, a)
            i += 1
        elif a == "--cpus":
            v = take_value(args, i, a)
            try:
                cpus = parse_cpulist(v)
            except ValueError:
                cpus = []
            online = online_cpus()
            if not cpus or any(c not in online for c in cpus):
                raise UsageError("--cpus %s: give online CPUs (%s), e.g. --cpus 1 or "
                                 "--cpus 0-1" % (v, pack_cpulist(online)))
            o["cpus"] = cpus
            i += 1
        elif a == "-n":
            v = take_value(args, i, a)
            parse_count_suffix(a, v)
            o["samples"] = v
            i += 1
        elif a == "-r":
            o["runs"] = parse_count(a, take_value(args, i, a), 1, 50)
            i += 1
        elif a == "-d":
            o["gap_ns"] = parse_duration_ns(a, take_value(args, i, a), 10**9)
            if o["gap_ns"] < 10**7:
                raise UsageError("-d %s: gap needs at least 10ms" % args[i + 1])
            i += 1
        elif a == "--transports":
            v = take_value(args, i, a)
            kinds = [k for k in v.split(",") if k]
            bad = [k for k in kinds if k not in TRANSPORTS]
            if bad or not kinds:
                raise UsageError("--transports %s: use some of %s" % (v, ",".join(TRANSPORTS)))
            o["transports"] = kinds
            i += 1
        elif a == "--only":
            v = take_value(args, i, a)
            names = [k for k in v.split(",") if k]
            ok = ("null", "null-clock", "clock", "gap", "send")
            bad = [k for k in names if k not in ok and not (
                k.startswith("send-") and k[5:] in TRANSPORTS)]
            if bad or not names:
                raise UsageError("--only %s: use some of %s (or send-KIND)" % (v, ",".join(ok)))
            o["only"] = names
            i += 1
        else:
            raise UsageError("unknown option '%s'; see 'jtr suite --help'" % a)
        i += 1
    return o


def parse_count_suffix(opt, s):
    """A count like 2M or 500K (1 to 1G); UsageError."""
    import re
    m = re.fullmatch(r"(\d+)([kKmMgG]?)", s or "")
    v = int(m.group(1)) * {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}[m.group(2).lower()] \
        if m else 0
    if not 1 <= v <= 10**9:
        raise UsageError("%s %s: use a count from 1 to 1G (K, M, G suffixes), e.g. 2M" % (opt, s))
    return v


# --- the plan --------------------------------------------------------------

def send_binary():
    """(path of jtr-send, None) or (None, why it cannot run)."""
    try:
        return probe_path("send"), None
    except JtrError as e:
        return None, str(e)


def plan(o):
    """The items in order: [{"name", "tool", "args"}], and the lines to print for
    what is skipped, and the skipped items."""
    d = QUICK if o["quick"] else DEFAULTS
    n = o["samples"] or d["samples"]
    ns = o["samples"] or d["send_samples"]
    r = str(o["runs"] or d["runs"])
    cpus = o["cpus"] or [default_cpu()]
    cpu = str(cpus[0])
    gap_s = "%gs" % ((o["gap_ns"] or d["gap_ns"]) / 1e9)
    items = [
        {"name": "null", "tool": "null",
         "args": ["-n", n, "-r", r, "-c", cpu, "-d", "null"]},
        {"name": "null-clock", "tool": "null",
         "args": ["-t", "clock", "-n", n, "-r", r, "-c", cpu, "-d", "null-clock"]},
        {"name": "clock", "tool": "clock", "args": ["-n", d["reads"], "-c", cpu]},
        {"name": "gap", "tool": "gap", "args": ["-d", gap_s, "-c", pack_cpulist(cpus)]},
    ]
    skipped = []
    prog, why = send_binary()
    for kind in o["transports"]:
        it = {"name": "send-" + kind, "tool": "send",
              "args": ["-T", kind, "-n", ns, "-r", r, "-c", cpu, "-d", "send-" + kind]}
        if prog:
            items.append(it)
        else:
            it["why"] = why
            skipped.append(it)
    if o["only"]:
        keep = lambda it: it["name"] in o["only"] or (  # noqa: E731
            it["tool"] == "send" and "send" in o["only"])
        items = [it for it in items if keep(it)]
        skipped = [it for it in skipped if keep(it)]
    return items, skipped


# --- running ---------------------------------------------------------------

class Suite:
    """suite.json, kept on disk as it changes."""

    def __init__(self, folder, command):
        self.folder = folder
        self.doc = {"format": FORMAT, "command": command, "host": socket.gethostname(),
                    "started_at": now_iso(), "ended_at": None, "state": "running",
                    "partial": False, "items": [], "pairs": []}

    def save(self):
        write_atomic(os.path.join(self.folder, "suite.json"),
                     dumps_result(self.doc) + "\n")


def item_line(folder):
    """The headline of a finished item: p99.99 and max of its result."""
    try:
        f = result_figures(load_result(folder))
    except UsageError:
        return None, None
    p = f["percentiles_ns"].get("99.99")
    return ("p99.99 %s, max %s" % (fmt_ns(p), fmt_ns(f["max_ns"]))
            if p is not None and f["max_ns"] is not None else ""), f["partial"]


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [x.strip() for x in f.read().splitlines() if x.strip()]
    except OSError:
        return ""
    lines = [x for x in lines if "warning:" not in x] or lines
    return lines[-1] if lines else ""


def run_item(suite, it, k, total, interrupted):
    """Run one item; fills its entry in suite.json."""
    entry = it["entry"]
    folder = os.path.join(suite.folder, it["name"])
    log = os.path.join(suite.folder, it["name"] + ".log")
    args = it["args"] + ["-q", "-o", folder]
    entry.update(status="running", started_at=now_iso())
    suite.save()
    print("suite: %d/%d %s: jtr %s %s" % (k, total, it["name"], it["tool"], " ".join(args)))
    sys.stdout.flush()
    t0 = time.monotonic()
    env = dict(os.environ, JTR_PROG="jtr suite: %s" % it["name"])
    with open(log, "w") as f:
        try:
            child = runjob.start_probe(it["tool"], args, env, stdout=f,
                                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        except (JtrError, OSError) as e:
            f.write("%s\n" % e)
            rc = None
        else:
            rc = child.wait()
    dt = time.monotonic() - t0
    has = os.path.isfile(os.path.join(folder, "result.json"))
    head, partial = item_line(folder) if has else (None, None)
    if rc == 0 and has and not partial and not interrupted:
        status = "done"
    elif interrupted or (rc is not None and rc < 0) or partial:
        status = "interrupted"
    else:
        status = "failed"
    entry.update(status=status, exit_status=rc, ended_at=now_iso(),
                 duration_s=round(dt, 3), result="%s/result.json" % it["name"] if has else None)
    suite.save()
    if status == "done":
        print("suite: %d/%d %s: done in %.1f s: %s" % (k, total, it["name"], dt, head))
    elif status == "interrupted":
        print("suite: %d/%d %s: interrupted after %.1f s%s" % (
            k, total, it["name"], dt, "; kept what it measured (%s)" % head if has else ""))
    else:
        print("suite: %d/%d %s: failed (%s): %s" % (
            k, total, it["name"], "did not start" if rc is None else "exit %d" % rc,
            last_line(log)))
    sys.stdout.flush()
    return status


def run_suite(o, command):
    folder = new_results_dir("suite", o["out"])
    items, skipped = plan(o)
    try:
        os.makedirs(folder)
    except OSError as e:
        raise UsageError("-o %s: cannot create the folder: %s" % (folder, e.strerror or e))
    suite = Suite(folder, command)
    for it in items:
        it["entry"] = {"name": it["name"], "tool": it["tool"], "folder": it["name"],
                       "command": ["jtr", it["tool"]] + it["args"] + ["-q", "-o", os.path.join(
                           folder, it["name"])], "status": "not run", "exit_status": None,
                       "log": it["name"] + ".log"}
        suite.doc["items"].append(it["entry"])
    for it in skipped:
        suite.doc["items"].append({"name": it["name"], "tool": it["tool"], "folder": None,
                                   "command": ["jtr", it["tool"]] + it["args"],
                                   "status": "skipped", "exit_status": None,
                                   "why": it["why"]})
    names = [it["name"] for it in items]
    if "null-clock" in names and "null" in names:
        suite.doc["pairs"].append(["null-clock", "null"])
    suite.save()
    print("suite: %s: %d item%s (%s)" % (folder, len(items), "" if len(items) == 1 else "s",
                                        ", ".join(names)))
    if skipped:
        print("suite: send: skipped: %s" % skipped[0]["why"])
    interrupted = []

    def on_sigint(*_):
        # the terminal's Ctrl-C reaches the item too; a SIGINT to jtr alone does
        # not, so pass it on as SIGTERM (the item's stop request either way)
        interrupted.append(1)
        runjob.signal_children(signal.SIGTERM)
    old = signal.signal(signal.SIGINT, on_sigint)
    old_term = signal.signal(signal.SIGTERM, on_sigint)
    failed = 0
    try:
        for k, it in enumerate(items, 1):
            if interrupted:
                break
            st = run_item(suite, it, k, len(items), interrupted)
            failed += st == "failed"
    finally:
        signal.signal(signal.SIGINT, old)
        signal.signal(signal.SIGTERM, old_term)
    suite.doc["ended_at"] = now_iso()
    suite.doc["partial"] = bool(interrupted)
    suite.doc["state"] = "interrupted" if interrupted else "done"
    suite.save()
    done = sum(e["status"] == "done" for e in suite.doc["items"])
    print("suite: %s: %d of %d items done%s%s; 'jtr report %s' draws them" % (
        folder, done, len(items), ", %d failed" % failed if failed else "",
        ", interrupted (partial)" if interrupted else "", folder))
    return 130 if interrupted else 1 if failed else 0


def main(args):
    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(USAGE.format(kinds=",".join(TRANSPORTS)))
        return 0
    return run_suite(parse(args), ["jtr suite"] + list(args))


# --- the report (plotall) --------------------------------------------------

def load_suite(folder):
    path = os.path.join(folder, "suite.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise UsageError("%s: cannot read the suite's index: %s" % (path, e))
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UsageError("%s: format is %r, expected %r" % (
            path, doc.get("format") if isinstance(doc, dict) else None, FORMAT))
    return doc


def report_main(folder, out, opts):
    """jtr report SUITE_DIR: report.html with a section per item, the PNGs and
    each item's .gp and .txt, in @out (default SUITE_DIR/report)."""
    from . import report as rp
    from . import legacy
    from .report import esc, img, jnum, table

    doc = load_suite(folder)
    out = out or os.path.join(folder, "report")
    rp.prepare_out(out)
    plt = rp._plt()
    entries = [e for e in doc.get("items", []) if isinstance(e, dict)]
    loaded = {}
    for e in entries:
        p = os.path.join(folder, e.get("folder") or "", "result.json") if e.get("folder") else None
        if p and os.path.isfile(p):
            try:
                loaded[e["name"]] = load_result(p)
            except UsageError:
                pass
    names = list(loaded)
    stems = rp.file_stems(names)
    results = [loaded[n] for n in names]
    pngs, texts, body = {}, {}, []
    title = "jtr suite: %s" % os.path.basename(os.path.abspath(folder))
    body.append("<h1>%s</h1>" % esc(title))
    body.append("<p>%s to %s on %s%s: <code>%s</code></p>" % (
        esc(doc.get("started_at")), esc(doc.get("ended_at")), esc(doc.get("host")),
        " <b>(partial: interrupted)</b>" if doc.get("partial") else "",
        esc(" ".join(doc.get("command") or []))))
    rows = []
    for e in entries:
        r = loaded.get(e["name"])
        f = result_figures(r) if r else {}
        pc = f.get("percentiles_ns") or {}
        rows.append((e["name"], e.get("tool"), e.get("status"), jnum(e.get("exit_status")),
                     jnum(pc.get("99")) if r else "", jnum(pc.get("99.99")) if r else "",
                     jnum(f.get("max_ns")) if r else "",
                     e.get("why") or " ".join(str(c) for c in e.get("command") or [])))
    body.append(table(rows, head=("item", "tool", "status", "exit", "p99 ns", "p99.99 ns",
                                  "max ns", "command (or why skipped)")))
    # the cross-item pairs (null-clock vs null)
    pairs = [(names.index(a), names.index(b)) for a, b in doc.get("pairs") or []
             if a in names and b in names]
    cross, ctexts = rp.seed_graphs(plt, stems, results, pairs=pairs, inner=False,
                                   nb=opts.get("histo_buckets"))
    for e in entries:
        name = e["name"]
        body.append('<h2 id="%s">%s</h2>' % (esc(name), esc(name)))
        body.append("<p>%s, status %s, exit %s%s</p>" % (
            esc(e.get("tool")), esc(e.get("status")), esc(jnum(e.get("exit_status"))),
            (": " + esc(e["why"])) if e.get("why") else ""))
        r = loaded.get(name)
        if r is None:
            body.append("<p>no result</p>")
            continue
        i = names.index(name)
        # a send result's pairs show every run; others get each run alone
        sp, st = rp.seed_graphs(plt, stems[i:i + 1], [r], every=not run_pairs(r),
                                nb=opts.get("histo_buckets"))
        mine = {k: v for k, v in cross.items() if k.startswith("plot_%s_v_" % stems[i])
                and k not in sp}
        runs = legacy.plottable_runs(r)
        if runs:
            cmap = plt.get_cmap("tab10")
            h = rp.plot_histogram(plt, [(x.get("name") or "run %d" % j, x["histogram"]["buckets"],
                                         cmap(j % 10)) for j, x in enumerate(runs)])
            pngs["%s-histogram" % stems[i]] = h
            body.append(img("%s-histogram" % stems[i], h,
                            "%s: histogram of loop times, counts on a log scale" % name))
        # the pairs first (send vs null, null-clock vs null), then each run alone
        order = sorted(sp, key=lambda k: "_v_" not in k)
        for k in list(mine) + order:
            data = mine.get(k) or sp[k]
            pngs[k] = data
            body.append(img(k, data, k))
        texts.update(st)
        body.append("<p>files: %s</p>" % ", ".join(
            '<a href="%s">%s</a>' % (esc(t), esc(t)) for t in st))
        body.append(table([(x.get("name"), jnum(x.get("cpu")), jnum(x.get("samples")),
                            jnum(x.get("min_ns")),
                            *[jnum((x.get("percentiles_ns") or {}).get(q))
                              for q in ("50", "99", "99.9", "99.99", "99.999")],
                            jnum(x.get("max_ns"))) for x in r.get("runs", [])
                           if isinstance(x, dict)],
                          head=("run", "cpu", "samples", "min_ns", "p50", "p99", "p99.9",
                                "p99.99", "p99.999", "max_ns")))
        w = rp.warnings_of(r)
        if w:
            body.append('<ul class="warn">%s</ul>' % "".join("<li>%s</li>" % esc(x) for x in w))
    texts.update(ctexts)
    print(rp.write_all(out, pngs, rp.page_html(title, body), texts))
    return 0
