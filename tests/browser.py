# SPDX-License-Identifier: GPL-2.0-only
"""What a person sees of one of jtr's HTML pages: the page rendered by headless
Chromium, printed to PDF (the text on the page, in reading order, without what
a closed <details> hides) and screenshot (the pixels).

    seen = browser.see(path, tmp_path)      # skips without Chromium
    seen.text                               # every word a reader sees
    seen.pixels                             # H x W x 3 uint8 array

Text inside inline SVG figures (axis labels, "max 1.80 ms") is text in the PDF
too, so tests can ask whether a plot shows a value.

One Chromium serves every page a test process renders: it is started on the
first page and driven over its DevTools pipe (--remote-debugging-pipe: JSON
messages ended by a NUL byte, in on fd 3, out on fd 4), each page in a tab of
its own; starting Chromium costs two seconds of CPU, a page a few tenths."""
import atexit
import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
import unicodedata
import warnings

import pytest

WIDTH = 1200
TIMEOUT_S = 120


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


class CannotRun(Exception):
    pass


class Browser:
    """A headless Chromium of this process, driven over its DevTools pipe."""

    def __init__(self, exe):
        self.home = tempfile.mkdtemp(prefix="jtr-chromium-")
        to_r, self._to = os.pipe()          # we write, Chromium reads its fd 3
        self._from, from_w = os.pipe()      # Chromium writes its fd 4, we read

        def fds():
            # by way of numbers no pipe end has, so neither end is overwritten
            os.dup2(to_r, 1000)
            os.dup2(from_w, 1001)
            os.dup2(1000, 3)
            os.dup2(1001, 4)
        self.log = os.path.join(self.home, "stderr")
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 "--no-first-run", "--disable-extensions", "--remote-debugging-pipe",
                 "--user-data-dir=%s" % self.home],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                preexec_fn=fds, close_fds=False)
        os.close(to_r)
        os.close(from_w)
        self._buf, self._id, self._events = b"", 0, []

    def _read(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from], [], [], left)[0]:
                raise CannotRun("no answer in %d s" % TIMEOUT_S)
            chunk = os.read(self._from, 1 << 20)
            if not chunk:
                with open(self.log, errors="replace") as f:
                    err = f.read().strip().splitlines()
                raise CannotRun("it exited (%s): %s" % (self.proc.wait(), err[-1:] or ""))
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, session=None, **params):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._to, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise CannotRun("%s: %s" % (method, m["error"]))
                return m["result"]
            self._events.append(m)

    def wait_event(self, method, session):
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            for i, m in enumerate(self._events):
                if m.get("method") == method and m.get("sessionId") == session:
                    del self._events[i]
                    return m
            self._events.append(self._read(deadline))

    @contextlib.contextmanager
    def _tab(self, uri, height):
        """A tab of its own with @uri loaded (WIDTH x @height): its session."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        s = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        try:
            self.call("Page.enable", s)
            self.call("Emulation.setDeviceMetricsOverride", s, width=WIDTH, height=height,
                      deviceScaleFactor=1, mobile=False)
            self._events.clear()
            self.call("Page.navigate", s, url=uri)
            self.wait_event("Page.loadEventFired", s)
            yield s
        finally:
            self.call("Target.closeTarget", targetId=target)

    def render(self, uri, pdf, shot, height):
        """Print @uri to the PDF file @pdf and screenshot it (@height pixels high,
        WIDTH wide) to the PNG file @shot, in a tab of its own."""
        with self._tab(uri, height) as s:
            with open(pdf, "wb") as f:
                f.write(base64.b64decode(self.call("Page.printToPDF", s)["data"]))
            with open(shot, "wb") as f:
                f.write(base64.b64decode(self.call("Page.captureScreenshot", s,
                                                   format="png")["data"]))

    def evaluate(self, uri, script, height=3000):
        """The value of the JavaScript expression @script in @uri, loaded in a tab
        of its own (WIDTH x @height)."""
        with self._tab(uri, height) as s:
            r = self.call("Runtime.evaluate", s, expression=script, returnByValue=True)
            if "exceptionDetails" in r:
                raise CannotRun("the script failed: %s" % r["exceptionDetails"])
            return r["result"].get("value")

    def said(self):
        """The last lines Chromium wrote on its stderr."""
        try:
            with open(self.log, errors="replace") as f:
                return " | ".join(f.read().strip().splitlines()[-3:]) or "nothing"
        except OSError:
            return "nothing (its log is gone)"

    def close(self):
        try:
            self.call("Browser.close")
        except (CannotRun, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.home, ignore_errors=True)


_browser = None


def _the_browser():
    global _browser
    if _browser is None or _browser.proc.poll() is not None:
        _browser = Browser(chromium())
        atexit.register(_browser.close)
    return _browser


def close_browser():
    """Close this process's Chromium, if it started one (the next page starts
    another)."""
    global _browser
    if _browser is not None:
        atexit.unregister(_browser.close)
        _browser.close()
        _browser = None


# what a reader's pointer finds at the middle of each element matching a CSS
# selector: the text of the tooltip the browser shows there (the nearest <title>
# of the element under the pointer or of its ancestors), "" where none
HOVER_JS = """(() => {
  const out = [];
  for (const el of document.querySelectorAll(%s)) {
    el.scrollIntoView({block: "center"});
    const r = el.getBoundingClientRect();
    let at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    let text = "";
    for (; at; at = at.parentElement) {
      const t = Array.from(at.children).find(c => c.tagName.toLowerCase() === "title");
      if (t) { text = t.textContent; break; }
    }
    out.push(text);
  }
  return out;
})()"""


def hover_texts(page, selector):
    """What hovering the middle of each element of @page matching @selector shows
    (headless Chromium: the element under the pointer and its <title>)."""
    uri = "file://" + os.path.abspath(page)
    return _the_browser().evaluate(uri, HOVER_JS % json.dumps(selector))


def see(page, tmp, height=3000):
    """Render @page (an HTML file) in headless Chromium; Seen(text, pixels)."""
    import matplotlib.image
    import numpy
    import pypdf
    tmp.mkdir(parents=True, exist_ok=True)
    uri = "file://" + os.path.abspath(page)
    pdf, shot = tmp / "page.pdf", tmp / "page.png"
    try:
        _the_browser().render(uri, pdf, shot, height)
    except (CannotRun, OSError) as e:
        # a Chromium that ended (a broken pipe: it exited) is started again, once,
        # saying why; a second failure is the test's, with what Chromium said
        why = "%s; chromium said: %s" % (e, _browser.said() if _browser else "nothing")
        warnings.warn("Chromium failed (%s): it is started again" % why, stacklevel=1)
        close_browser()
        try:
            _the_browser().render(uri, pdf, shot, height)
        except (CannotRun, OSError) as again:
            pytest.fail("Chromium failed twice: %s; then %s; chromium said: %s" % (
                why, again, _browser.said() if _browser else "nothing"))
    reader = pypdf.PdfReader(str(pdf))
    # NFKC: the PDF's ligatures (the "fi" of "field") back to letters
    text = unicodedata.normalize("NFKC", "\n".join(pg.extract_text() or ""
                                                   for pg in reader.pages))
    a = matplotlib.image.imread(str(shot))
    pixels = (a[..., :3] * 255).round().astype(numpy.uint8)
    return Seen(text, pixels, pdf, shot)
