# SPDX-License-Identifier: GPL-2.0-only
"""memory - building millions of small acyclic objects (event indexes, outlier rows)
without the cyclic garbage collector walking them again and again; the memory this
machine has available now."""
import gc
from contextlib import contextmanager


def available_bytes(meminfo="/proc/meminfo"):
    """MemAvailable in bytes, or None when it cannot be read."""
    try:
        with open(meminfo) as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


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
