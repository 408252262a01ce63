# SPDX-License-Identifier: GPL-2.0-only
"""jtrpy - jtr's Python side: the front end and everything after a measurement
(attribution, comparison, reports, tuning). docs/architecture.md has the map."""
import os

# jtr does no linear algebra: numpy's BLAS gets one thread. Left to itself,
# OpenBLAS starts a thread per CPU when numpy is imported (on the CPUs jtr
# measures too, where jtr's own process may run) and each command spent 0.07 s
# more CPU on them here (jtr compare 0.28 s); a value the user set is kept
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

_HERE = os.path.dirname(os.path.realpath(__file__))
_ROOT = os.path.dirname(os.path.dirname(_HERE))


def _read_version():
    """The one VERSION file: the copy `make install` and the wheel put in the
    package, else the source tree's (this package is its analysis/jtrpy)."""
    paths = [os.path.join(_HERE, "VERSION")]
    if _HERE == os.path.join(_ROOT, "analysis", "jtrpy"):
        paths.append(os.path.join(_ROOT, "VERSION"))
    for path in paths:
        try:
            with open(path, encoding="ascii") as f:
                return f.read().strip()
        except OSError:
            pass
    return "unknown"


__version__ = _read_version()
