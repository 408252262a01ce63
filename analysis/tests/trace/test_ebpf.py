# SPDX-License-Identifier: GPL-2.0-only
"""trace.ebpf: why the tracer cannot run, and the tracer's life beside a probe
with a stand-in jtr-trace (JTR_LIBEXEC): ready on its 'tracing' line, stopped
by SIGTERM, its files moved into the results folder, its refusal said in its
own last line. Nothing is traced."""
import os
import sys

import pytest

from jtrpy.system import signals
from jtrpy.trace import ebpf

FAKE = """#!%s
import os, signal, sys, time
out = sys.argv[sys.argv.index("-o") + 1]
plan = os.environ.get("FAKE_TRACE", "ok")
if plan == "refuse":
    print("%%s: -b 3: not a power of two" %% os.environ["JTR_PROG"], file=sys.stderr)
    sys.exit(2)
if plan == "silent":
    sys.exit(1)
def stop(*a):
    print("stopping: writing events.bin", file=sys.stderr)
    print("warning: 3 events dropped", file=sys.stderr)
    for name in ("events.bin", "trace.json"):
        open(os.path.join(out, name), "w").write(name)
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("loading", flush=True)
print("tracing CPUs %%s: %%s" %% (sys.argv[sys.argv.index("-c") + 1], " ".join(sys.argv[5:])),
      flush=True)
time.sleep(30)
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    b = tmp_path / "bin"
    b.mkdir()
    p = b / "jtr-trace"
    p.write_text(FAKE % sys.executable)
    p.chmod(0o755)
    monkeypatch.setenv("JTR_LIBEXEC", str(b))
    monkeypatch.delenv("JTR_NO_BPF", raising=False)
    signals.reset()
    yield b
    signals.reset()


def test_why_it_cannot_run(fake, tmp_path, monkeypatch):
    monkeypatch.setattr(ebpf.os, "geteuid", lambda: 0)
    assert ebpf.unavailable() is None
    monkeypatch.setenv("JTR_NO_BPF", "1")
    assert ebpf.unavailable() == "BPF is switched off for this run (JTR_NO_BPF is set)"
    monkeypatch.delenv("JTR_NO_BPF")
    monkeypatch.setattr(ebpf.os, "geteuid", lambda: 1000)
    assert ebpf.unavailable().startswith("the kernel-event tracer needs root")
    monkeypatch.setattr(ebpf.os, "geteuid", lambda: 0)
    monkeypatch.setenv("JTR_LIBEXEC", str(tmp_path))         # not built there
    assert ebpf.unavailable().startswith("the kernel-event tracer jtr-trace is not built")


def test_ready_stopped_and_moved(fake, tmp_path):
    t = ebpf.Tracer("1-2", ["-b", "4M"], prog="jtr run")
    try:
        assert t.wait_ready() is None
        assert t.banner == "tracing CPUs 1-2: -b 4M"
        assert t.out == ["loading\n"]
        assert t.stop() == 0
        assert t.err == "warning: 3 events dropped"       # its "stopping" line left out
        out = tmp_path / "result"
        out.mkdir()
        t.move_into(str(out))
        assert sorted(os.listdir(out)) == ["events.bin", "trace.json"]
        assert not os.path.exists(t.dir)
    finally:
        if t.proc.poll() is None:
            t.proc.kill()
            t.proc.wait()
        t.cleanup()


def test_a_refusal_is_its_last_line(fake, monkeypatch):
    monkeypatch.setenv("FAKE_TRACE", "refuse")
    t = ebpf.Tracer("1", prog="jtr watch")
    assert t.wait_ready() == "jtr watch: tracer: -b 3: not a power of two"
    assert t.proc.returncode == 2 and not os.path.exists(t.dir)
    monkeypatch.setenv("FAKE_TRACE", "silent")
    t = ebpf.Tracer(None)
    assert t.wait_ready() == "the tracer did not start"


def test_move_into_wants_both_files(fake, tmp_path):
    t = ebpf.Tracer.__new__(ebpf.Tracer)
    t.dir = str(tmp_path / "tr")
    os.makedirs(t.dir)
    (tmp_path / "tr" / "events.bin").write_text("x")
    with pytest.raises(FileNotFoundError):
        t.move_into(str(tmp_path))
