# SPDX-License-Identifier: GPL-2.0-only
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
writes and says it was interrupted. A block says what the first and the later
signals are told (jtr tune apply: "still undoing the apply; wait"); inside a
holding() block, for what must not stop half-way (a revert), the first signal
too is only acknowledged. Once the command has returned (closing(), cli/main.py)
a stop signal changes nothing: everything is written and the exit status is
decided, so it neither raises on the way out nor kills the exiting process.
"""
import contextlib
import ctypes
import os
import signal
import subprocess

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
PARENT_ENV = "JTR_PARENT_PID"      # lib/jtr_probe.h JTR_PARENT_ENV
_PR_SET_PDEATHSIG = 1

try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):   # not glibc: the C programs still follow their parent
    _prctl = None


STOPPING = "stopping: writing what was measured"
BUSY = "still stopping: writing what was measured (kill -9 aborts)"


class Block:
    """A measuring() or holding() block: what the first signal (@stopping; ''
    says nothing) and the later ones (@busy) are told; .busy may change while
    the block runs. @hold: the first is only acknowledged too."""

    def __init__(self, stopping, busy, hold):
        self.stopping, self.busy, self.hold = stopping, busy, hold


class _State:
    def __init__(self):
        self.prog = "jtr"
        self.ack = None         # ack(text): where a signal is acknowledged (install)
        self.first = None       # the first stop signal, or None
        self.blocks = []        # the measuring() and holding() blocks, innermost last
        self.children = {}      # pid: Popen of the programs a stop is passed to
        self.told = set()       # pids already sent their one stop signal
        self.closing = False    # the command has returned: a signal changes nothing


_S = _State()


def _say(text):
    if _S.ack is not None:
        _S.ack(text)


def _on_signal(signum, frame):
    if _S.closing:
        return
    block = _S.blocks[-1] if _S.blocks else Block(STOPPING, BUSY, False)
    if _S.first is not None or block.hold:
        if _S.first is None:
            _S.first = signum
        _say("%s: %s\n" % (_S.prog, block.busy))
        return
    _S.first = signum
    live = [p for p in _S.children.values() if p.poll() is None]
    for p in live:
        tell(p)
    if not _S.blocks:
        raise KeyboardInterrupt
    if not live and block.stopping:
        _say("\n%s: %s\n" % (_S.prog, block.stopping))


def install(prog, ack):
    """The rule's handlers, for command @prog ("jtr run"); @ack(text): writes
    what a signal is told (the command's stderr; it must not raise, as the
    terminal may be gone)."""
    _S.prog, _S.ack, _S.closing = prog, ack, False
    for s in STOP_SIGNALS:
        signal.signal(s, _on_signal)


def closing(exiting=False):
    """The command has returned: a stop signal from now on is taken and changes
    nothing. @exiting: the process ends next, so they are ignored outright (at
    interpreter shutdown Python puts a handler of its own back to the default,
    and a Ctrl-C then would end the process by SIGINT after all was written)."""
    _S.closing = True
    if exiting:
        for s in STOP_SIGNALS:
            if signal.getsignal(s) is _on_signal:
                signal.signal(s, signal.SIG_IGN)


def requested():
    """True once a stop signal came."""
    return _S.first is not None


@contextlib.contextmanager
def measuring(stopping=None, busy=None):
    """A stop signal inside sets requested() instead of raising KeyboardInterrupt
    (and is passed to the programs started with stop=True). @stopping: what the
    first one is told when no program takes it ('' nothing), @busy: what later
    ones are told; both default to the enclosing block's. Yields the Block."""
    outer = _S.blocks[-1] if _S.blocks else Block(STOPPING, BUSY, False)
    block = Block(outer.stopping if stopping is None else stopping,
                  outer.busy if busy is None else busy, False)
    _S.blocks.append(block)
    try:
        yield block
    finally:
        _S.blocks.remove(block)


@contextlib.contextmanager
def holding(busy):
    """A block no stop signal may cut short (a revert): each one, the first too,
    is acknowledged with @busy; requested() says whether one came."""
    block = Block("", busy, True)
    _S.blocks.append(block)
    try:
        yield block
    finally:
        _S.blocks.remove(block)


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


def run(argv, timeout=None, **popen_kw):
    """A short query (tuned-adm --version, dbus-send) started the rule's way and
    waited for: a CompletedProcess. It ends with jtr, even a jtr killed with
    SIGKILL half-way through (it was left running, seen by jtr tune's kill
    sweep); TimeoutExpired after @timeout seconds, the program killed."""
    proc = spawn(argv, stop=False, **popen_kw)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


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
    _S.first, _S.blocks, _S.closing = None, [], False
    _S.children, _S.told = {}, set()
