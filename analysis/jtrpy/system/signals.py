"""signals - the Ctrl-C rule on the front end's side, and the one way it starts
programs.

The rule, for every command: the first SIGINT, SIGTERM or SIGHUP (to jtr alone
or to its whole process group) stops what is running and keeps what was
measured; every later one is acknowledged on stderr and skips nothing (no
revert, tracer detach or atomic rename is cut short); the exit status is 130.

The programs jtr starts run in a process group of their own, so a signal to
jtr's group (a terminal's Ctrl-C, `kill -TERM -PGID`, systemd, `timeout`)
reaches jtr alone, and jtr passes one SIGTERM to each program it runs: exactly
once, however many signals came. They also get SIGTERM when jtr dies, even by
SIGKILL (PR_SET_PDEATHSIG; the C programs set it again themselves after a
setuid exec or their privilege drop clears it: JTR_PARENT_PID), so no tracer
or probe outlives it.

install(prog) sets the handlers (cli/main.py, for every Python command). Outside
a measuring() block the first signal raises KeyboardInterrupt where the code
is (an analysis command: its files are written atomically, nothing half done
stays); inside one it only sets requested(), and the driver finishes its step,
writes and says it was interrupted.
"""
import contextlib
import ctypes
import os
import signal
import subprocess
import sys

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
PARENT_ENV = "JTR_PARENT_PID"      # lib/jtr_probe.h JTR_PARENT_ENV
_PR_SET_PDEATHSIG = 1

try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):   # not glibc: the C programs still follow their parent
    _prctl = None


class _State:
    def __init__(self):
        self.prog = "jtr"
        self.first = None       # the first stop signal, or None
        self.measuring = 0      # depth of measuring() blocks
        self.children = {}      # pid: Popen of the programs a stop is passed to
        self.told = set()       # pids already sent their one stop signal


_S = _State()


def _say(text):
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):   # SIGHUP: the terminal is gone
        pass


def _on_signal(signum, frame):
    if _S.first is not None:
        _say("%s: still stopping: writing what was measured (kill -9 aborts)\n" % _S.prog)
        return
    _S.first = signum
    live = [p for p in _S.children.values() if p.poll() is None]
    for p in live:
        tell(p)
    if not _S.measuring:
        raise KeyboardInterrupt
    if not live:
        _say("\n%s: stopping: writing what was measured\n" % _S.prog)


def install(prog):
    """The rule's handlers, for command @prog ("jtr run")."""
    _S.prog = prog
    for s in STOP_SIGNALS:
        signal.signal(s, _on_signal)


def requested():
    """True once a stop signal came."""
    return _S.first is not None


@contextlib.contextmanager
def measuring():
    """A stop signal inside sets requested() instead of raising KeyboardInterrupt."""
    _S.measuring += 1
    try:
        yield
    finally:
        _S.measuring -= 1


def _child_setup():
    # runs in the child between fork and exec: its own process group, the stop
    # signals at their defaults (jtr may ignore them), SIGTERM when jtr dies
    os.setpgid(0, 0)
    for s in STOP_SIGNALS:
        signal.signal(s, signal.SIG_DFL)
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def spawn(argv, env=None, stop=True, affinity=None, **popen_kw):
    """Start a program the rule's way (see the module's text); a Popen. @stop:
    pass it the one SIGTERM when a stop signal comes (a probe); False for one
    the driver stops itself, in its order (a tracer, which records until the
    probe has ended). @affinity: the CPUs it may run on (default: jtr's)."""
    env = dict(os.environ if env is None else env)
    env[PARENT_ENV] = str(os.getpid())

    def setup():
        _child_setup()
        if affinity:
            os.sched_setaffinity(0, affinity)
    proc = subprocess.Popen(argv, env=env, restore_signals=True, preexec_fn=setup, **popen_kw)
    if stop:
        _S.children = {pid: p for pid, p in _S.children.items() if p.poll() is None}
        _S.children[proc.pid] = proc
        if _S.first is not None:    # started after the stop came
            tell(proc)
    return proc


def tell(proc, sig=signal.SIGTERM):
    """Ask @proc to stop with @sig, once: False when it was asked already or has ended."""
    if proc.pid in _S.told or proc.poll() is not None:
        return False
    _S.told.add(proc.pid)
    try:
        proc.send_signal(sig)
    except OSError:
        return False
    return True


def reset():
    """Forget a stop and the programs (tests; a process that runs commands in turn)."""
    _S.first, _S.measuring = None, 0
    _S.children, _S.told = {}, set()
