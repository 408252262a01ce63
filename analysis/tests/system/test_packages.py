# SPDX-License-Identifier: GPL-2.0-only
"""system/packages.py: the hints say the distribution's package first, and pip
only into a venv (PEP 668), never into the system Python."""
import re
import sys

import pytest

from jtrpy.system import packages, paths

# "pip install" not run by a venv's own pip or python
BARE_PIP = re.compile(r"(?<!/bin/)(?<!-m )pip install")


def outside_venv(monkeypatch):
    monkeypatch.setattr(sys, "prefix", sys.base_prefix)


def inside_venv(monkeypatch):
    monkeypatch.setattr(sys, "prefix", "/opt/venvs/jtr")


@pytest.mark.parametrize("module", sorted(packages.PYTHON_MODULES))
@pytest.mark.parametrize("where", [outside_venv, inside_venv])
def test_the_distribution_package_comes_first_and_pip_never_bare(monkeypatch, module, where):
    where(monkeypatch)
    deb, rpm, req, _ = packages.PYTHON_MODULES[module]
    hint = packages.python_hint(module)
    assert hint.startswith("apt-get install %s (Debian, Ubuntu), dnf install %s (Fedora, RHEL)"
                           % (deb, rpm))
    assert "\n" not in hint
    assert not BARE_PIP.search(hint), hint


def test_outside_a_venv_pip_goes_into_a_new_one(monkeypatch):
    outside_venv(monkeypatch)
    hint = packages.python_hint("numpy")
    assert "PEP 668" in hint
    assert "python3 -m venv ~/.venv/jtr && ~/.venv/jtr/bin/pip install numpy" in hint
    assert hint.endswith("then run ~/.venv/jtr/bin/python %s" % packages.launcher())


def test_the_launcher_is_the_jtr_beside_the_package(monkeypatch):
    monkeypatch.setattr(paths, "IN_SOURCE_TREE", True)
    assert packages.launcher() == paths.SOURCE_TREE + "/jtr"
    monkeypatch.setattr(paths, "IN_SOURCE_TREE", False)
    assert packages.launcher() == paths.PREFIX + "/bin/jtr"


@pytest.mark.parametrize("source_tree, req", [(True, "numpy"), (False, "'jtr[compare]'")])
def test_inside_a_venv_pip_goes_into_it(monkeypatch, source_tree, req):
    """A pip-installed jtr gets its extra; a source tree run by a venv's python, numpy."""
    inside_venv(monkeypatch)
    monkeypatch.setattr(paths, "IN_SOURCE_TREE", source_tree)
    hint = packages.python_hint("numpy")
    assert hint.endswith("into this venv: %s -m pip install %s" % (sys.executable, req))
    assert "~/.venv" not in hint


def test_perf_is_named_per_distribution():
    hint = packages.program_hint("perf")
    assert "apt-get install linux-perf (Debian)" in hint
    assert "linux-tools-$(uname -r) (Ubuntu)" in hint
    assert "dnf install perf (Fedora, RHEL)" in hint
