# SPDX-License-Identifier: GPL-2.0-only
"""programs - jtr's C programs run from the drivers, the rule's way
(system/signals.py: their own process group, one SIGTERM when a stop comes,
SIGTERM when jtr dies), and the results folder learned from the program itself
(JTR_RESULTS_FD: it writes the folder's path to that descriptor when the folder
is in place), never scraped from its output."""
import os
import subprocess
import time

from ..system import signals
from ..system.paths import probe_path

RESULTS_FD_ENV = "JTR_RESULTS_FD"


class Program:
    """One running jtr-NAME and the pipe its results folder comes back on."""

    def __init__(self, name, args, env=None, prefix=(), **popen_kw):
        """@prefix: words before the program (ip netns exec NAME)."""
        env = dict(os.environ if env is None else env)
        self.name = name
        self.read_end, write_end = os.pipe()
        env[RESULTS_FD_ENV] = str(write_end)
        try:
            self.proc = signals.spawn(list(prefix) + [probe_path(name)] + list(args), env=env,
                                      pass_fds=(write_end,), **popen_kw)
        except BaseException:
            os.close(self.read_end)
            self.read_end = None        # closed: not again when this half-made one goes
            raise
        finally:
            os.close(write_end)
        self.pid = self.proc.pid

    def wait(self, timeout=None):
        """The program's exit status once it has ended."""
        return self.proc.wait(timeout)

    def poll(self):
        return self.proc.poll()

    def folder(self):
        """The results folder the program reported (after it ended), or None."""
        chunks = []
        while True:
            b = os.read(self.read_end, 65536)
            if not b:
                break
            chunks.append(b)
        os.close(self.read_end)
        self.read_end = None
        return said_folder(b"".join(chunks))

    def run(self):
        """Wait for the end: (exit status, results folder or None)."""
        rc = self.wait()
        return rc, self.folder()

    def __del__(self):
        if getattr(self, "read_end", None) is not None:
            os.close(self.read_end)


def said_folder(data):
    """The folder a program wrote on JTR_RESULTS_FD (@data: the bytes read): its
    path and a newline in one write, so everything but that newline, newlines and
    bytes that are not UTF-8 in the name included (os.fsdecode: the name the file
    system has), its last '/' dropped; None when it said nothing."""
    if data.endswith(b"\n"):
        data = data[:-1]
    return os.fsdecode(data).rstrip("/") or None


def stop(proc, grace=5.0):
    """Ask a child to stop (its one stop signal: it writes what it has), then kill
    it after @grace seconds; its exit status."""
    if proc.poll() is None:
        signals.tell(proc)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def wait_ready(proc, log, timeout):
    """Until a subscriber says 'ready on' in @log; False if it exited or timed out."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with open(log, encoding="utf-8", errors="replace") as f:
            if "ready on" in f.read():
                return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    return False


def last_line(path):
    """The last line a program wrote to its log (warnings left out), '' when none."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = [x.strip() for x in f if x.strip() and "warning:" not in x]
    except OSError:
        return ""
    return lines[-1] if lines else ""
