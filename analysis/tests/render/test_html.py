# SPDX-License-Identifier: GPL-2.0-only
"""render.html: the pieces of a page (values as result.json spells them, text
escaped, images inline) and a report folder written whole, with the line jtr
report prints."""
import base64

from jtrpy.render import html as H


def test_values_as_json_spells_them():
    assert [H.jnum(v) for v in (None, True, 1.5, 7, "text", [1, 2], {"a": None})] == \
        ["null", "true", "1.5", "7", "text", "[1, 2]", '{"a": null}']
    assert H.fmt_ns(1500) == "1.5 us" and H.fmt_ns(None) == "" and H.fmt_ns("x") == ""


def test_text_is_escaped_everywhere():
    assert H.esc('<a href="x">&\'') == "&lt;a href=&quot;x&quot;&gt;&amp;&#x27;"
    t = H.table([("<b>", "1")], head=("a&b", "n"), cls="top")
    assert t.split("\n") == ['<table class="top">', "<tr><th>a&amp;b</th><th>n</th></tr>",
                             "<tr><td>&lt;b&gt;</td><td>1</td></tr>", "</table>"]
    assert H.table([]) == "<table>\n</table>"
    page = H.page_html("a <title>", ["<p>one</p>", "", None, "<p>two</p>"])
    assert "<title>a &lt;title&gt;</title>" in page
    assert "\n<p>one</p>\n<p>two</p>\n</body>" in page and page.startswith("<!DOCTYPE html>")


def test_images_are_inline_and_linked():
    data = b"\x89PNG\r\n\x1a\nxyz"
    i = H.img("ccdf", data, 'the "tails"')
    assert 'src="data:image/png;base64,%s"' % base64.b64encode(data).decode() in i
    assert 'alt="the &quot;tails&quot;"' in i and '<a href="ccdf.png">ccdf.png</a>' in i
    assert H.svg_figure("<svg/>", "a < b", "p-1") == (
        '<figure class="plot"><svg/><figcaption>a &lt; b (<a href="p-1.png">p-1.png</a>)'
        "</figcaption></figure>")
    assert H.svg_figure("<svg/>", "c") == ('<figure class="plot"><svg/><figcaption>c'
                                           "</figcaption></figure>")


def test_write_all_writes_every_file_and_says_which(tmp_path):
    line = H.write_all(str(tmp_path), {"ccdf": b"png"}, "<html/>", {"a.gp": "gp"})
    assert line == "jtr report: %s (ccdf.png, a.gp)" % (tmp_path / "report.html")
    assert (tmp_path / "ccdf.png").read_bytes() == b"png"
    assert (tmp_path / "a.gp").read_text() == "gp"
    assert (tmp_path / "report.html").read_text() == "<html/>"
    assert H.write_all(str(tmp_path), {}, "x", {}).endswith("(no plots)")
    many = H.write_all(str(tmp_path), {"p%d" % i: b"" for i in range(9)}, "x", {})
    assert many.endswith("(p0.png, p1.png, p2.png, p3.png, p4.png, p5.png, ... 9 files)")
