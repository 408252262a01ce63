# SPDX-License-Identifier: GPL-2.0-only
"""jtr ls's job: the results under some folders found and loaded, and each one's
headline numbers on one quantity, newest first (the jtr-ls/1 document); the
command prints it as JSON or as render/ls.py's table."""
from collections import namedtuple

from ..errors import UsageError
from ..results.figures import result_figures
from ..results.find import find_results
from ..results.quantity import select
from ..system.schema import utc_time

FORMAT = "jtr-ls/1"

# the Results found, the folders that hold none, the damaged results [(path, why)]
Found = namedtuple("Found", "results skipped damaged")


def find(folders):
    """The results in @folders (none given: ./results, which need not exist)."""
    return Found(*find_results(folders or ["results"], not folders))


def rows(found, quantity=None):
    """One dict of headline numbers per Result on @quantity (None: each one's
    default), newest first; and the Results that have no @quantity."""
    out, without = [], []
    for r in found:
        try:
            f = result_figures(r, quantity)
        except UsageError:
            without.append(r)
            continue
        f["path"] = r.folder
        out.append(f)
    epoch = utc_time("1970-01-01T00:00:00Z")
    out.sort(key=lambda f: (utc_time(f["started_at"]) or epoch, f["path"]), reverse=True)
    return out, without


def list_results(found, quantity=None):
    """The jtr-ls/1 document of @found (a Found) on @quantity; UsageError naming the
    quantities the results have when none has @quantity."""
    items, without = rows(found.results, quantity)
    if without and not items:
        have = sorted({q for r in without for q in select(r).names})
        raise UsageError("no result here has the quantity '%s'; they have %s" % (
            quantity, ", ".join(have) or "none (no runs)"))
    return {"format": FORMAT, "results": items, "skipped": found.skipped,
            "damaged": [{"path": p, "error": why} for p, why in found.damaged],
            "without_quantity": [r.folder for r in without]}
