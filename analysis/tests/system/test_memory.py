# SPDX-License-Identifier: GPL-2.0-only
"""system.memory: the cyclic garbage collector paused inside the block and put
back as it was, also when the block raises."""
import gc

import pytest

from jtrpy.system import memory
from jtrpy.system.memory import paused_gc


@pytest.fixture
def gc_state():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_and_enabled_after(gc_state):
    gc.enable()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_enabled_again_after_an_exception(gc_state):
    gc.enable()
    with pytest.raises(KeyError):
        with paused_gc():
            raise KeyError("x")
    assert gc.isenabled()


def test_left_off_when_it_was_off(gc_state):
    """A caller that had turned it off keeps it off (nested blocks too)."""
    gc.disable()
    with paused_gc():
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_available_bytes(tmp_path):
    f = tmp_path / "meminfo"
    f.write_text("MemTotal:       24 kB\nMemFree:   1 kB\nMemAvailable:   2048 kB\n")
    assert memory.available_bytes(str(f)) == 2048 * 1024
    f.write_text("MemTotal: 24 kB\n")
    assert memory.available_bytes(str(f)) is None
    assert memory.available_bytes(str(tmp_path / "none")) is None
