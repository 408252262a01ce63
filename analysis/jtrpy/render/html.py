# SPDX-License-Identifier: GPL-2.0-only
"""html - the pieces of jtr's HTML pages (self-contained: plots embedded as
base64 PNG, no network) and the writing of a report folder."""
import base64
import html
import json
import os

from ..errors import JtrError
from ..system.files import write_atomic
from ..units import fmt_ns as _fmt_ns

CSS = """
body{font-family:sans-serif;margin:1.5em;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.2em}
td,th{border:1px solid #ccc;padding:2px 8px;font-size:13px;text-align:left;vertical-align:top}
th{background:#eee} td.num{text-align:right}
figure{margin:0.5em 0 1.5em} img{max-width:100%;border:1px solid #ddd}
figure.plot svg{width:100%;height:auto}
h1{font-size:26px;margin:0.2em 0 0.4em}
.summary{border:1px solid #ccc;background:#fafafa;padding:4px 16px 8px;margin:0 0 1.5em}
.summary .what{font-size:15px}
.stats{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0 12px}
.stat{border:1px solid #ccc;background:#fff;padding:6px 14px;min-width:90px}
.stat span{display:block;font-size:13px;color:#555}
.stat b{display:block;font-size:22px}
.stat small{display:block;font-size:12px;color:#555}
table.top td{font-size:14px}
table.people td:not(:last-child),table.top td:not(:last-child){white-space:nowrap}
.key{display:inline-block;width:11px;height:11px;margin-right:6px;vertical-align:middle}
details.raw{margin:1.5em 0;border-top:1px solid #ccc;padding-top:0.5em}
details.raw summary{cursor:pointer;font-weight:bold}
pre{background:#f6f6f6;padding:8px;font-size:12px;overflow-x:auto}
.warn li{color:#a40}
.invalid{color:#fff;background:#b00;padding:6px 10px;border-radius:4px}
"""


def jnum(v):
    """A value spelled as JSON spells it (what result.json holds)."""
    if v is None:
        return "null"
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return v if isinstance(v, str) else json.dumps(v)


def fmt_ns(ns):
    """units.fmt_ns, and "" for a value that is not a number."""
    return _fmt_ns(ns) if isinstance(ns, (int, float)) else ""


def esc(v):
    return html.escape(str(v), quote=True)


def table(rows, head=None, cls=None):
    """An HTML table of rows of cells (already strings)."""
    out = ['<table%s>' % (' class="%s"' % cls if cls else "")]
    if head:
        out.append("<tr>%s</tr>" % "".join("<th>%s</th>" % esc(h) for h in head))
    for r in rows:
        out.append("<tr>%s</tr>" % "".join("<td>%s</td>" % esc(c) for c in r))
    out.append("</table>")
    return "\n".join(out)


def img(name, data, alt):
    return '<figure><img src="data:image/png;base64,%s" alt="%s"><figcaption>%s ' \
           '(<a href="%s.png">%s.png</a>)</figcaption></figure>' % (
               base64.b64encode(data).decode("ascii"), esc(alt), esc(alt), name, name)


def svg_figure(svg, caption, name=None):
    """An inline SVG plot (plots.svg) with its caption; @name links the PNG of the
    same plot written beside the page, when there is one."""
    link = ' (<a href="%s.png">%s.png</a>)' % (esc(name), esc(name)) if name else ""
    return '<figure class="plot">%s<figcaption>%s%s</figcaption></figure>' % (
        svg, esc(caption), link)


def page_html(title, body):
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            "<title>%s</title><style>%s</style></head><body>\n%s\n</body></html>\n"
            % (esc(title), CSS, "\n".join(b for b in body if b)))


def write_all(out, pngs, page, texts):
    """The PNGs, the jtr_null-format files and report.html (last) into @out; the line
    jtr report prints."""
    done = []
    try:
        for name, data in pngs.items():
            write_atomic(os.path.join(out, name + ".png"), data, "wb")
            done.append(name + ".png")
        for name, text in texts.items():
            write_atomic(os.path.join(out, name), text)
            done.append(name)
        write_atomic(os.path.join(out, "report.html"), page)
    except OSError as e:
        # each file is whole or absent: the page, written last, is not there
        raise JtrError("cannot write the report into %s: %s; report.html was not written%s"
                       % (out, e.strerror or e, " (%d of its files were: %s)"
                          % (len(done), ", ".join(done)) if done else ""))
    files = [n + ".png" for n in pngs] + list(texts)
    shown = files if len(files) <= 8 else files[:6] + ["... %d files" % len(files)]
    return "jtr report: %s (%s)" % (os.path.join(out, "report.html"),
                                    ", ".join(shown) or "no plots")
