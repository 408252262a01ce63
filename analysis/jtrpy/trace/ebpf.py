# SPDX-License-Identifier: GPL-2.0-only
"""ebpf - the eBPF tracer (build/bin/jtr-trace) running beside a probe.

It is started on the probe's CPUs before the probe, writes into a temporary
folder, says "tracing ..." when its programs are attached, drains its ring
buffer from another CPU while the probe runs, and on SIGTERM writes events.bin
and trace.json and exits 0.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import threading

from ..errors import JtrError
from ..system import signals
from ..system.files import move_file
from ..system.paths import probe_path

START_TIMEOUT_S = 60


def unavailable():
    """Why the eBPF tracer cannot run here, or None when it can."""
    if os.environ.get("JTR_NO_BPF"):
        return "BPF is switched off for this run (JTR_NO_BPF is set)"
    if os.geteuid() != 0:
        return ("the kernel-event tracer needs root (or CAP_BPF and CAP_PERFMON): run "
                "'sudo jtr run'")
    try:
        probe_path("trace")
    except JtrError as e:   # not built: the message says how to build it
        return str(e)
    return None


class Tracer:
    """jtr-trace running in the background, writing into a temporary folder."""

    backend = "ebpf"

    def __init__(self, cpus, extra=(), prog="jtr run"):
        self.dir = tempfile.mkdtemp(prefix="jtr-trace-")
        cmd = [probe_path("trace"), "-o", self.dir]
        if cpus:
            cmd += ["-c", cpus]
        cmd += list(extra)
        self.proc = signals.spawn(cmd, env=dict(os.environ, JTR_PROG="%s: tracer" % prog),
                                  stop=False, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        self.banner = None
        self.out = []
        self.err = ""

    def wait_ready(self):
        """Block until the tracer prints its 'tracing ...' line; None or why it failed."""
        result = {}

        def read():
            for line in self.proc.stdout:
                if line.startswith("tracing "):
                    result["banner"] = line.strip()
                    return
                self.out.append(line)

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(START_TIMEOUT_S)
        if "banner" in result:
            self.banner = result["banner"]
            return None
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.err = self.proc.stderr.read().strip()
        self.cleanup()
        return self.err.splitlines()[-1] if self.err else "the tracer did not start"

    def stop(self):
        """SIGTERM the tracer (it writes its files and exits); its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate()
        self.out.append(out)
        # the tracer's own "stopping: ..." notice is for a person at its terminal
        self.err = "\n".join(line for line in err.splitlines()
                             if line.strip() and "stopping: writing" not in line)
        return self.proc.returncode

    def move_into(self, outdir):
        """Move events.bin and trace.json into the probe's results folder, each
        whole or not at all (a full disk: OSError, nothing truncated left); the
        tracer's folder removed either way."""
        try:
            for name in ("events.bin", "trace.json"):
                src = os.path.join(self.dir, name)
                if not os.path.exists(src):
                    raise FileNotFoundError(src)
                move_file(src, os.path.join(outdir, name))
        except OSError:
            for name in ("events.bin", "trace.json"):   # a log without its metadata
                try:
                    os.unlink(os.path.join(outdir, name))
                except OSError:
                    pass
            raise
        finally:
            self.cleanup()

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)
