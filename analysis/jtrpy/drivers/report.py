# SPDX-License-Identifier: GPL-2.0-only
"""jtr report's job: everything a page shows is loaded and computed here (the
results, their outlier logs, two results compared, a suite's items), then
render/ draws the page from that alone and the files are written (report.html
last). render/ reads no file and runs no statistic."""
import os

from ..errors import UsageError
from ..render import compare_page, report, suite_page
from ..render.html import write_all
from ..results.outliers import read_outliers
from ..results.quantity import select
from ..results.result import load_result, make_output_dir
from ..results.suite import is_suite, item_folder, load_suite
from ..stats.compare import check_result, compare


def outlier_rows(result):
    """The rows of @result's outlier log for its timeline; [] when it has none or
    a damaged one (the page shows the worst outliers only)."""
    if not report.attribution_of(result):
        return []
    try:
        return read_outliers(result)
    except UsageError:
        return []


def suite_items(folder, entries):
    """({item name: Result}, {item name: why it has none}) of a suite's items."""
    loaded, why = {}, {}
    for e in entries:
        try:
            d = item_folder(folder, e)
            p = os.path.join(d, "result.json") if d else None
            if p and os.path.lexists(p):
                loaded[e["name"]] = load_result(p)
        except UsageError as err:
            why[e["name"]] = str(err)
    return loaded, why


def pages(results, given, opts):
    """({name: png bytes}, the page, {name: text}) of one result or two compared
    (@given: how the user named them; @opts as write_report's)."""
    if len(results) == 1:
        return report.single_page(results[0], given[0], opts, outlier_rows(results[0]))
    # errors name the results as the user gave them
    c = compare(results[:1], results[1:], labels_a=given[:1], labels_b=given[1:],
                quantity=opts.get("quantity"), mixed=opts.get("mixed"))
    return compare_page.build(results, given, opts, report.summary_section, c)


def default_out(results):
    if len(results) == 1:
        return os.path.join(results[0].folder, "report")
    names = [os.path.basename(os.path.abspath(r.folder)) or "result" for r in results]
    return "report-%s-vs-%s" % tuple(names)


def write_report(paths, output, opts):
    """jtr report PATHS [-o OUTPUT]: the page of one result, of two compared or of a
    suite folder written into OUTPUT (default beside the result); the line jtr
    report prints. @opts: gnuplot, histo_buckets, quantity, mixed."""
    if not 1 <= len(paths) <= 2:
        raise UsageError("give one result, or two to compare; see 'jtr report --help'")
    if len(paths) == 1 and is_suite(paths[0]):
        if opts.get("quantity"):
            raise UsageError("--quantity %s: a suite's page shows each item on its own tool's "
                             "quantity; give a result of the suite instead (%s/ITEM)"
                             % (opts["quantity"], paths[0]))
        doc = load_suite(paths[0])
        loaded, why = suite_items(paths[0], doc.get("items", []))
        out = make_output_dir(output or os.path.join(paths[0], "report"), what="report folder")
        return write_all(out, *suite_page.build(paths[0], doc, opts, loaded, why))
    results = [load_result(p) for p in paths]
    for p, r in zip(paths, results):
        select(r, opts.get("quantity"), p)      # one it has not: refused before writing
    if len(results) == 2:
        for p, r in zip(paths, results):
            check_result(r, p)
    out = make_output_dir(output or default_out(results), what="report folder")
    return write_all(out, *pages(results, paths, opts))
