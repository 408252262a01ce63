# SPDX-License-Identifier: GPL-2.0-only
"""jtrpy's package: numpy imported after it starts no BLAS thread (one thread
per CPU otherwise, on the CPUs jtr measures too); a value the user set is kept."""
import os
import subprocess
import sys

import pytest

# BLAS starts a thread per CPU the process may use: on one (beside the measuring
# tests, scripts/beside.sh) there would be nothing to see
pytestmark = pytest.mark.every_cpu

ANALYSIS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COUNT = ("import os, jtrpy, numpy; numpy.ones((64, 64)) @ numpy.ones((64, 64)); "
         "print(len(os.listdir('/proc/self/task')), os.environ['OPENBLAS_NUM_THREADS'])")


def threads(env_extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update(env_extra, PYTHONPATH=ANALYSIS)
    out = subprocess.run([sys.executable, "-c", COUNT], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    return int(out[0]), out[1]


def test_numpy_after_jtrpy_runs_in_one_thread():
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: BLAS starts no thread of its own here anyway")
    assert threads({}) == (1, "1")


def test_the_users_setting_is_kept():
    n, value = threads({"OPENBLAS_NUM_THREADS": "2"})
    assert value == "2"
    if len(os.sched_getaffinity(0)) >= 2:
        assert n >= 2           # BLAS started the threads the user asked for
