# SPDX-License-Identifier: GPL-2.0-only
"""system.numeric: numpy where it is installed, None where it is missing or
JTR_NUMPY=0 turns the fast paths off."""
import sys

import numpy

from jtrpy.system.numeric import numpy_or_none


def test_numpy_when_installed(monkeypatch):
    monkeypatch.delenv("JTR_NUMPY", raising=False)
    assert numpy_or_none() is numpy
    monkeypatch.setenv("JTR_NUMPY", "1")
    assert numpy_or_none() is numpy


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("JTR_NUMPY", "0")
    assert numpy_or_none() is None


def test_none_where_numpy_cannot_be_imported(monkeypatch):
    monkeypatch.delenv("JTR_NUMPY", raising=False)
    monkeypatch.setitem(sys.modules, "numpy", None)     # import numpy raises ImportError
    assert numpy_or_none() is None
