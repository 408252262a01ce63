# SPDX-License-Identifier: GPL-2.0-only
"""packages - how to get what a command needs and this machine lacks, said in one
place: the distribution's package first (Debian and Ubuntu, Fedora and RHEL: the
names scripts/deps.sh installs, docs/install.md), then, for a Python module, pip
where pip may install.

Debian 12+ and Ubuntu 23.04+ mark their system Python as externally managed
(PEP 668): `pip install` into it stops with "externally-managed-environment".
So pip is only ever suggested into a venv: the one jtr runs in, or a new one
(~/.venv/jtr) whose python then runs jtr. Never a bare `pip install`."""
import os
import sys

from . import paths

# Python module: (Debian and Ubuntu package, Fedora and RHEL package, pip's name,
# the extra of jtr's own package that brings it (pyproject.toml), or None)
PYTHON_MODULES = {
    "numpy": ("python3-numpy", "python3-numpy", "numpy", "compare"),
    "matplotlib": ("python3-matplotlib", "python3-matplotlib", "matplotlib", "report"),
}
# program: (Debian, Ubuntu, Fedora and RHEL packages)
PROGRAMS = {
    "perf": ("linux-perf", "linux-tools-common linux-tools-$(uname -r)", "perf"),
}
VENV = "~/.venv/jtr"


def in_venv():
    """True when jtr runs on a venv's python (pip installs there, PEP 668 or not)."""
    return sys.prefix != sys.base_prefix


def launcher():
    """The jtr program another python can run: the source tree's, or make install's."""
    if paths.IN_SOURCE_TREE:
        return os.path.join(paths.SOURCE_TREE, "jtr")
    return os.path.join(paths.PREFIX, "bin", "jtr")


def python_hint(module):
    """One line (no full stop): how to get Python module @module for the python
    that runs jtr."""
    deb, rpm, req, extra = PYTHON_MODULES[module]
    distro = "apt-get install %s (Debian, Ubuntu), dnf install %s (Fedora, RHEL)" % (deb, rpm)
    if in_venv():
        if extra and not paths.IN_SOURCE_TREE:
            req = "'jtr[%s]'" % extra          # jtr itself was installed with pip
        return "%s for the system python3; into this venv: %s -m pip install %s" % (
            distro, sys.executable, req)
    return ("%s; or with pip, into a venv rather than the system Python (PEP 668): "
            "python3 -m venv %s && %s/bin/pip install %s, then run %s/bin/python %s"
            % (distro, VENV, VENV, req, VENV, launcher()))


def program_hint(name):
    """One line: the packages that bring program @name, per distribution."""
    deb, ubuntu, rpm = PROGRAMS[name]
    return "apt-get install %s (Debian), %s (Ubuntu), dnf install %s (Fedora, RHEL)" % (
        deb, ubuntu, rpm)
