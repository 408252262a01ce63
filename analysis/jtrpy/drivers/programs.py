"""programs - jtr's C programs run from the drivers: signals as a shell would
leave them, so the first Ctrl-C or SIGTERM makes a program write what it
measured and exit, and the results folder learned from the program itself
(JTR_RESULTS_FD: it writes the folder's path to that descriptor when the
folder is in place), never scraped from its output."""
import os
import signal
import subprocess

from ..system.paths import probe_path
from ..system.procs import proc_stat

RESULTS_FD_ENV = "JTR_RESULTS_FD"


def _child_signals():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Program:
    """One running jtr-NAME and the pipe its results folder comes back on."""

    def __init__(self, name, args, env=None, **popen_kw):
        env = dict(os.environ if env is None else env)
        self.name = name
        self.read_end, write_end = os.pipe()
        env[RESULTS_FD_ENV] = str(write_end)
        try:
            self.proc = subprocess.Popen([probe_path(name)] + list(args), env=env,
                                         restore_signals=True, preexec_fn=_child_signals,
                                         pass_fds=(write_end,), **popen_kw)
        except BaseException:
            os.close(self.read_end)
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
        lines = b"".join(chunks).decode(errors="replace").splitlines()
        return lines[-1].rstrip("/") if lines and lines[-1] else None

    def run(self):
        """Wait for the end: (exit status, results folder or None)."""
        rc = self.wait()
        return rc, self.folder()

    def __del__(self):
        if getattr(self, "read_end", None) is not None:
            os.close(self.read_end)


def signal_children(sig, comm=None):
    """Send @sig to this process's children (named @comm, if given)."""
    me = os.getpid()
    for p in os.listdir("/proc"):
        st = proc_stat(int(p)) if p.isdigit() else None
        if st and st.ppid == me and comm in (None, st.comm):
            try:
                os.kill(int(p), sig)
            except OSError:
                pass


def stop(proc, grace=5.0):
    """Ask a child to stop (SIGINT: it writes what it has), then kill it; its exit."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode
