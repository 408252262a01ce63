"""stops - how a front end that changes the machine (jtr tune apply and revert,
jtr ab) takes SIGINT, SIGTERM and SIGHUP, to the process or to its process group.

The first is a stop request: the command stops what it is doing (a measurement
ends early and keeps what it measured, an apply stops and is undone) and then
cleans up. Every later one is acknowledged with one line on stderr and changes
nothing. The handlers only count (they never raise), so no Python code is cut
short half-way, and they stay installed until the cleanup (revert, atomic
renames, removing temporary files) is over: a signal can delay jtr's exit, never
skip its cleanup. Once a stop was requested they are ignored to the end of the
process: the command has cleaned up and is on its way out with status 130.
"""
import os
import signal

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopRequests:
    """`with StopRequests("jtr ab", on_first) as stops:` the handlers of SIGNALS
    while the block runs. .stopped once a stop was requested; .busy is what a
    later signal is told ("still reverting the tuning; wait"), and the first too
    with @ack_first (for what cannot stop early, like a revert);
    on_first(signum) is called from the handler of the first (keep it short)."""

    def __init__(self, prog, on_first=None, busy="stopping; wait", ack_first=False):
        self.prog = prog
        self.on_first = on_first
        self.busy = busy
        self.ack_first = ack_first
        self.count = 0
        self.signum = None
        self._old = {}

    def __enter__(self):
        self._old = {s: signal.signal(s, self._handle) for s in SIGNALS}
        return self

    def __exit__(self, *exc):
        # after a stop request the cleanup is over and the command ends (130):
        # a signal now would only kill it on its way out, so they are ignored
        for s, h in self._old.items():
            signal.signal(s, signal.SIG_IGN if self.count else h)
        return False

    @property
    def stopped(self):
        return self.count > 0

    def taken(self):
        """A stop request another handler took (jtr run's, during a measurement):
        from now on a signal is a later one."""
        if not self.count:
            self.count = 1

    def _handle(self, signum, frame):
        self.count += 1
        if self.count == 1:
            self.signum = signum
            if self.on_first:
                self.on_first(signum)
            if not self.ack_first:
                return
        # os.write, not print: the main code may be inside a print to stderr
        try:
            os.write(2, ("%s: %s\n" % (self.prog, self.busy)).encode())
        except OSError:
            pass
