"""suite_page - the HTML page of a jtr suite folder: every item's graphs,
histogram and numbers, the send-vs-null graphs of each transport, the
clock_gettime-timed null loop against the RDTSC one, and every item's .gp and
.txt files."""
import os

from ..errors import UsageError
from ..formats import legacy
from ..results.figures import result_figures, run_pairs
from ..results.result import load_result
from ..results.suite import item_folder
from . import plots
from .html import esc, img, jnum, page_html, table
from .report import warnings_of


def build(folder, doc, opts):
    """({name: png bytes}, the HTML page, {name: text}) of the suite in @folder
    whose index is @doc."""
    plt = plots.pyplot()
    entries = doc.get("items", [])
    loaded, why = {}, {}
    for e in entries:
        try:
            d = item_folder(folder, e)
            p = os.path.join(d, "result.json") if d else None
            if p and os.path.lexists(p):
                loaded[e["name"]] = load_result(p)
        except UsageError as err:
            why[e["name"]] = str(err)
    names = list(loaded)
    stems = plots.file_stems(names)
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
                     f.get("quantity") or "", jnum(pc.get("99")) if r else "",
                     jnum(pc.get("99.99")) if r else "",
                     jnum(f.get("max_ns")) if r else "",
                     e.get("why") or " ".join(str(c) for c in e.get("command") or [])))
    body.append(table(rows, head=("item", "tool", "status", "exit", "quantity", "p99 ns",
                                  "p99.99 ns",
                                  "max ns", "command (or why skipped)")))
    # the cross-item pairs (null-clock vs null)
    pairs = [(names.index(a), names.index(b)) for a, b in doc.get("pairs") or []
             if a in names and b in names]
    cross, ctexts = plots.legacy_graphs(plt, stems, results, pairs=pairs, inner=False,
                                   nb=opts.get("histo_buckets"))
    for e in entries:
        name = e["name"]
        body.append('<h2 id="%s">%s</h2>' % (esc(name), esc(name)))
        body.append("<p>%s, status %s, exit %s%s</p>" % (
            esc(e.get("tool")), esc(e.get("status")), esc(jnum(e.get("exit_status"))),
            (": " + esc(e["why"])) if e.get("why") else ""))
        r = loaded.get(name)
        if r is None:
            body.append("<p>no result%s</p>" % (": " + esc(why[name]) if name in why else ""))
            continue
        i = names.index(name)
        # a send result's pairs show every run; others get each run alone
        sp, st = plots.legacy_graphs(plt, stems[i:i + 1], [r], every=not run_pairs(r),
                                nb=opts.get("histo_buckets"))
        mine = {k: v for k, v in cross.items() if k.startswith("plot_%s_v_" % stems[i])
                and k not in sp}
        runs = legacy.plottable_runs(r)
        if runs:
            cmap = plt.get_cmap("tab10")
            h = plots.plot_histogram(plt, [(x.get("name") or "run %d" % j,
                                            x["histogram"]["buckets"],
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
        w = warnings_of(r)
        if w:
            body.append('<ul class="warn">%s</ul>' % "".join("<li>%s</li>" % esc(x) for x in w))
    texts.update(ctexts)
    return pngs, page_html(title, body), texts
