# SPDX-License-Identifier: GPL-2.0-only
"""The unit tests of the Python package, in folders that mirror it; they import
jtrpy from this source tree."""
import os
import sys

import pytest
import xmlschema

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import jtrpy  # noqa: E402,F401 (before any test imports numpy: one BLAS thread, as in jtr)

# as in tests/conftest.py: pytest's cache of the rewritten test modules, whatever
# PYTHONDONTWRITEBYTECODE says
sys.dont_write_bytecode = False

# the JUnit schema CI servers read (scripts/deps.sh puts it into the venv)
JUNIT_XSD = os.path.join(sys.prefix, "share", "junit", "junit-10.xsd")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Every test of this folder is marked beside: make test runs them beside the
    measuring tests, on the first CPU alone (scripts/beside.sh), but those marked
    every_cpu; before -m selects (tryfirst)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        if str(item.path).startswith(here + os.sep):
            item.add_marker(pytest.mark.beside)


@pytest.fixture(scope="session")
def schema():
    """junit-10.xsd as an xmlschema schema (the tests of --junit validate with it)."""
    if not os.path.exists(JUNIT_XSD):
        pytest.fail("%s is missing: make deps (scripts/deps.sh) extracts it from pytest's "
                    "sdist" % JUNIT_XSD)
    return xmlschema.XMLSchema(JUNIT_XSD)
