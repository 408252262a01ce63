# SPDX-License-Identifier: GPL-2.0-only
"""trace.backends: which tracer records a run, with stand-ins for both tracers:
eBPF when it can, perf when eBPF is not wanted or not possible (said why), none
with every reason; the tracer's refusal of an option said as jtr run's option."""
import types

import pytest

from jtrpy.errors import UsageError
from jtrpy.trace import backends, ebpf, perf, sched


class Fake:
    """A tracer that is ready, or says why not; remembers what it was given."""
    made = []

    def __init__(self, cpus, *rest, why=None, rc=None):
        self.cpus, self.rest, self.why, self.cleaned = cpus, rest, why, False
        self.proc = types.SimpleNamespace(returncode=rc)
        Fake.made.append(self)

    def wait_ready(self):
        return self.why

    def cleanup(self):
        self.cleaned = True


@pytest.fixture
def tracers(monkeypatch, tmp_path):
    """Set ebpf_why/perf_why (unavailable) and ebpf_fail/perf_fail (wait_ready);
    the folder backends.start makes for perf is made in the test's own (these
    stand-ins remove nothing: seven empty /tmp/jtr-perf-* a run were left)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    s = types.SimpleNamespace(ebpf_why=None, perf_why=None, ebpf_fail=None, perf_fail=None,
                              rc=1)
    Fake.made = []
    monkeypatch.setattr(ebpf, "unavailable", lambda: s.ebpf_why)
    monkeypatch.setattr(perf, "unavailable", lambda: s.perf_why)
    monkeypatch.setattr(ebpf, "Tracer", lambda c, a, p: Fake(c, a, p, why=s.ebpf_fail,
                                                             rc=s.rc))
    monkeypatch.setattr(perf, "PerfTracer", lambda c, d: Fake(c, d, why=s.perf_fail))
    monkeypatch.setattr(backends, "default_cpu", lambda: 7)
    return s


def test_ebpf_when_it_can(tracers):
    t, why, notice = backends.start("auto", "1-2", ["-b", "4M"])
    assert (why, notice) == (None, None) and t.rest == (["-b", "4M"], "jtr run")
    assert t.cpus == "1-2" and len(Fake.made) == 1


def test_perf_when_ebpf_cannot_says_why(tracers):
    tracers.ebpf_why = "BPF is switched off"
    t, why, notice = backends.start("auto", None)
    assert why is None and notice == ("eBPF tracer unavailable (BPF is switched off); "
                                      "tracing with perf")
    assert t.cpus == "7"                  # no CPU list: the default CPU's
    tracers.ebpf_why, tracers.ebpf_fail = None, "the tracer did not start"
    t, why, notice = backends.start("auto", "3")
    assert notice == "eBPF tracer unavailable (the tracer did not start); tracing with perf"


def test_asked_for_one_backend(tracers):
    tracers.ebpf_why = "no root"
    assert backends.start("ebpf", "1") == (None, "no root", None)
    assert Fake.made == []                # perf not tried
    t, why, notice = backends.start("perf", "1")
    assert t is Fake.made[0] and (why, notice) == (None, None)


def test_no_tracer_gives_every_reason(tracers):
    tracers.ebpf_why, tracers.perf_why = "no root", "perf is not installed"
    assert backends.start("auto", "1") == (None, "no root; perf is not installed", None)
    tracers.perf_why, tracers.perf_fail = None, "perf record failed: exit 1"
    assert backends.start("auto", "1") == (None, "no root; perf record failed: exit 1", None)
    assert Fake.made[-1].cleaned
    tracers.ebpf_why = None
    tracers.ebpf_fail = "jtr run: tracer: failed to attach"
    assert backends.start("perf", "1")[1] == "perf record failed: exit 1"


@pytest.mark.parametrize("opt,name", [("b", "--trace-buffer"), ("i", "--drain-interval")])
def test_the_tracers_refusal_of_an_option_is_jtr_runs(tracers, opt, name):
    tracers.rc = 2
    tracers.ebpf_fail = "jtr watch: tracer: -%s 3: not a power of two" % opt
    with pytest.raises(UsageError) as e:
        backends.start("auto", "1", prog="jtr watch")
    assert str(e.value) == "%s 3: not a power of two" % name
    # exit 2 without such a line: an ordinary failure, perf tried next
    tracers.ebpf_fail = "jtr watch: tracer: cannot load"
    assert backends.start("auto", "1", prog="jtr watch")[2].startswith(
        "eBPF tracer unavailable (jtr watch: tracer: cannot load)")


def test_recorder(monkeypatch):
    made = []

    class Rec(Fake):
        def __init__(self, cpus):
            super().__init__(cpus, why="perf sched record failed: exit 1" if made else None)
            made.append(self)
    monkeypatch.setattr(sched, "SchedRecorder", Rec)
    monkeypatch.setattr(backends, "default_cpu", lambda: 5)
    rec, why = backends.start_recorder(None)
    assert why is None and rec.cpus == "5"
    rec, why = backends.start_recorder("1")
    assert rec is None and why == "perf sched record failed: exit 1" and made[1].cleaned


def test_a_stop_while_the_tracer_starts_ends_it_and_removes_its_folder(tracers, monkeypatch):
    """Ctrl-C (or SIGTERM) while the tracer starts: its process, if it has one
    yet, is killed and its folder removed before the stop goes on up (a jtr run
    stopped then left its tracer's folder in /tmp)."""
    killed = []
    running = types.SimpleNamespace(poll=lambda: None, kill=lambda: killed.append(1),
                                    wait=lambda: 0)

    def interrupted(self):
        raise KeyboardInterrupt

    def made(proc):
        def make(*a):
            t = Fake(*a)
            t.proc = proc
            return t
        return make

    monkeypatch.setattr(Fake, "wait_ready", interrupted)
    monkeypatch.setattr(perf, "PerfTracer", made(None))      # perf not started yet
    monkeypatch.setattr(ebpf, "Tracer", made(running))
    tracers.ebpf_why = "no root"
    with pytest.raises(KeyboardInterrupt):
        backends.start("auto", "1")
    assert [t.cleaned for t in Fake.made] == [True] and killed == []
    Fake.made = []
    tracers.ebpf_why = None
    with pytest.raises(KeyboardInterrupt):
        backends.start("ebpf", "1")
    assert [t.cleaned for t in Fake.made] == [True] and killed == [1]
