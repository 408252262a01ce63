# SPDX-License-Identifier: GPL-2.0-only
"""What a person sees of one of jtr's HTML pages: the page rendered by headless
Chromium, printed to PDF (the text on the page, in reading order, without what
a closed <details> hides) and screenshot (the pixels).

    seen = browser.see(path, tmp_path)      # skips when Chromium cannot run
    seen.text                               # every word a reader sees
    seen.pixels                             # H x W x 3 uint8 array

Text inside inline SVG figures (axis labels, "max 1.80 ms") is text in the PDF
too, so tests can ask whether a plot shows a value."""
import os
import shutil
import subprocess
import unicodedata

import pytest

WIDTH = 1200


class Seen:
    def __init__(self, text, pixels, pdf, shot):
        self.text, self.pixels, self.pdf, self.shot = text, pixels, pdf, shot

    def words(self):
        return " ".join(self.text.split())


def chromium():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        pytest.skip("chromium is not installed (scripts/deps.sh installs it for make test)")
    return exe


def _chromium(exe, args, out, cwd):
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--no-first-run", "--disable-extensions", "--user-data-dir=%s" % (cwd / "chromium")]
    try:
        p = subprocess.run(cmd + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=120, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip("chromium cannot run here: %s" % e)
    if not os.path.exists(out):
        pytest.skip("chromium cannot run here (exit %d): %s"
                    % (p.returncode, p.stderr.strip().splitlines()[-1:] or ""))


def see(page, tmp, height=3000):
    """Render @page (an HTML file) in headless Chromium; Seen(text, pixels)."""
    import matplotlib.image
    import numpy
    import pypdf
    exe = chromium()
    tmp.mkdir(parents=True, exist_ok=True)
    uri = os.path.abspath(page)
    uri = "file://" + uri
    pdf, shot = tmp / "page.pdf", tmp / "page.png"
    _chromium(exe, ["--no-pdf-header-footer", "--print-to-pdf=%s" % pdf, uri], pdf, tmp)
    _chromium(exe, ["--screenshot=%s" % shot, "--window-size=%d,%d" % (WIDTH, height), uri],
              shot, tmp)
    reader = pypdf.PdfReader(str(pdf))
    # NFKC: the PDF's ligatures (the "fi" of "field") back to letters
    text = unicodedata.normalize("NFKC", "\n".join(pg.extract_text() or ""
                                                   for pg in reader.pages))
    a = matplotlib.image.imread(str(shot))
    pixels = (a[..., :3] * 255).round().astype(numpy.uint8)
    return Seen(text, pixels, pdf, shot)
