# SPDX-License-Identifier: GPL-2.0-only
"""drivers/watch: the tracer's command line from jtr watch's options."""
import argparse

from jtrpy.drivers.watch import tracer_args


def test_tracer_args():
    o = argparse.Namespace(cpus=[2, 3], interval=10**9, keep=120 * 10**9, dump_max=20,
                           recorder=64 << 20, names=32, dump_above=200_000, duration=None,
                           trace_buffer=None, drain_interval=50 * 10**6, app=["myserver", "42"])
    assert tracer_args(o, "out") == [
        "--watch", "-c", "2-3", "-o", "out", "--state-interval", "1000000000ns", "--keep",
        "120000000000ns", "--dump-max", "20", "--recorder", "67108864", "--names", "32",
        "--app", "myserver", "--app", "42", "--dump-above", "200000ns", "-i", "50000000ns"]
