# SPDX-License-Identifier: GPL-2.0-only
"""progress - a status line on a terminal for work that takes a while: nothing
for the first AFTER_S seconds (most runs end before), then one line on stderr,
rewritten in place, and cleared at the end; nothing at all when stderr is not a
terminal (a log, a pipe, a test). A command makes one on its stderr and hands
it to its job, which tells it what is being done and calls done() before the
job says anything more."""
import time

AFTER_S = 2.0
EVERY_S = 0.2       # at most this often


class Progress:
    def __init__(self, prog, stream, after_s=AFTER_S):
        self.prog, self.stream = prog, stream
        self.t0, self.after_s, self.last, self.shown = time.monotonic(), after_s, 0.0, False
        self.tty = self.stream.isatty()

    def __call__(self, text):
        """Say what is being done now (shown once AFTER_S have passed)."""
        if not self.tty:
            return
        now = time.monotonic()
        if now - self.t0 < self.after_s or now - self.last < EVERY_S:
            return
        self.last, self.shown = now, True
        self.stream.write("\r\033[K%s: %s (%.0f s)" % (self.prog, text, now - self.t0))
        self.stream.flush()

    def done(self):
        """Clear the line, if one was shown."""
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False
