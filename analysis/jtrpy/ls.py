"""ls - jtr ls: past results with their headline numbers, newest first."""
import json
import os
import sys

from .cpus import pack_cpulist
from .errors import UsageError
from .figures import result_figures, utc_time
from .result import load_result, result_path
from .units import fmt_ns

FORMAT = "jtr-ls/1"

USAGE = """\
usage: jtr ls [--json] [FOLDER...]

List past results, newest first, one a line: when it started (UTC), the tool,
the CPUs, how long it ran, the per-loop p99, p99.99 and max, the time lost to
interruptions, the largest cause (when attributed), the tuning profile that was
active, and whether the run was stopped early. Each FOLDER is a results folder or
a folder of them (default: results). Folders that hold no jtr result are skipped
and counted on the last line; results/latest is not listed twice.

  --json   print the list as JSON ({fmt}): per result its path and the numbers
           (ns, %), and the folders skipped

examples:
  jtr ls
  jtr ls --json | python3 -m json.tool
  jtr ls results /srv/jitter/results before-tuning
"""


def parse_args(args):
    as_json, folders = False, []
    for a in args:
        if a == "--json":
            as_json = True
        elif a.startswith("-"):
            raise UsageError("unknown option '%s'; see 'jtr ls --help'" % a)
        else:
            folders.append(a)
    return as_json, folders


def _is_result(path):
    """A result.json of format jtr-result/1 in @path (a folder)?"""
    try:
        load_result(path)
        return True
    except UsageError:
        return False


def find(folders, default):
    """([(path, result)], [skipped folders]): every result in @folders; a folder
    that is a result is taken as one, else its sub-folders are looked at."""
    found, skipped, seen = [], [], set()

    def take(path):
        real = os.path.realpath(path)
        if real in seen:
            return
        seen.add(real)
        try:
            found.append((path, load_result(path)))
        except UsageError:
            skipped.append(path)

    for top in folders:
        if not os.path.exists(top):
            if default:
                continue
            raise UsageError("%s: no such folder" % top)
        if not os.path.isdir(top):
            if os.path.basename(top) == "result.json":
                take(os.path.dirname(top) or ".")
                continue
            raise UsageError("%s: not a folder; give results folders or folders of them" % top)
        if os.path.exists(result_path(top)):
            take(top)
            continue
        try:
            names = sorted(os.listdir(top))
        except OSError as e:
            raise UsageError("%s: cannot read: %s" % (top, e.strerror))
        # real folders first, so a link (results/latest) is the one left out
        names.sort(key=lambda n: os.path.islink(os.path.join(top, n)))
        for name in names:
            p = os.path.join(top, name)
            if os.path.isdir(p):
                take(p)
    return found, skipped


def _ns(ns):
    return "-" if ns is None else fmt_ns(ns)


def _dur(ns):
    if not ns:
        return "-"
    s = ns / 1e9
    if s < 120:
        return "%.1f s" % s
    if s < 7200:
        return "%.1f m" % (s / 60)
    return "%.1f h" % (s / 3600)


def _cause(c):
    if not c:
        return "-"
    return "%s %.0f %%" % (c["name"] or c["category"], 100.0 * (c["share"] or 0))


def rows(found):
    """One dict per result, newest first."""
    out = []
    for path, r in found:
        f = result_figures(r)
        f["path"] = path
        out.append(f)
    epoch = utc_time("1970-01-01T00:00:00Z")
    out.sort(key=lambda f: (utc_time(f["started_at"]) or epoch, f["path"]), reverse=True)
    return out


def format_table(items, skipped):
    head = ("started (UTC)", "tool", "CPUs", "duration", "p99", "p99.99", "max", "lost",
            "top cause", "profile", "folder")
    lines = []
    for f in items:
        t = utc_time(f["started_at"])
        p = f["percentiles_ns"]
        lines.append((
            t.strftime("%Y-%m-%d %H:%M:%S") if t else "?",
            (f["tool"] or "?") + (" (partial)" if f["partial"] else ""),
            pack_cpulist(f["cpus"]) or "-",
            _dur(f["duration_ns"]),
            _ns(p.get("99")), _ns(p.get("99.99")), _ns(f["max_ns"]),
            "%.3f %%" % f["lost_pct"] if f["lost_pct"] is not None else "-",
            _cause(f["top_cause"]),
            f["tuning_profile"] or "-",
            f["path"]))
    out = []
    if lines:
        width = [max(len(x[i]) for x in [head] + lines) for i in range(len(head))]
        right = {3, 4, 5, 6, 7}
        for x in [head] + lines:
            out.append("  ".join((x[i].rjust(width[i]) if i in right else
                                  x[i].ljust(width[i])) for i in range(len(x))).rstrip())
    n = len(items)
    tail = "%d result%s" % (n, "" if n == 1 else "s")
    if skipped:
        tail += "; %d folder%s skipped (no jtr result in %s)" % (
            len(skipped), "" if len(skipped) == 1 else "s",
            "it" if len(skipped) == 1 else "them")
    out.append(tail)
    return out


def main(args):
    if any(a in ("-h", "--help") for a in args):
        sys.stdout.write(USAGE.format(fmt=FORMAT))
        return 0
    as_json, folders = parse_args(args)
    default = not folders
    found, skipped = find(folders or ["results"], default)
    items = rows(found)
    if as_json:
        print(json.dumps({"format": FORMAT, "results": items, "skipped": skipped}, indent=2))
        return 0
    for line in format_table(items, skipped):
        print(line)
    return 0
