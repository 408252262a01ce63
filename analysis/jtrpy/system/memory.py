# SPDX-License-Identifier: GPL-2.0-only
"""memory - building millions of small acyclic objects (event indexes, outlier rows)
without the cyclic garbage collector walking them again and again."""
import gc
from contextlib import contextmanager


@contextmanager
def paused_gc():
    """Pause the cyclic garbage collector inside the block."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
