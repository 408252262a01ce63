# SPDX-License-Identifier: GPL-2.0-only
"""numeric - numpy where it is installed: the fast paths of reading and
attributing large event logs use it and fall back to plain Python without it.

JTR_NUMPY=0 in the environment turns the fast paths off (they give the same
results; the plain path is the reference the tests compare them with)."""
import os


def numpy_or_none():
    """The numpy module, or None when it is missing or JTR_NUMPY=0."""
    if os.environ.get("JTR_NUMPY", "1") == "0":
        return None
    try:
        import numpy
    except ImportError:
        return None
    return numpy
