# SPDX-License-Identifier: GPL-2.0-only
"""errors: the exit statuses every jtr command shares with the C programs, and
the two exceptions kept apart (bad input is never taken for a failure)."""
import os
import re
import signal

from jtrpy.cli.main import main
from jtrpy.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, JtrError, UsageError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_interrupted_is_the_shells_status_of_sigint_and_the_c_programs():
    """130 = 128 + SIGINT, as a shell reports it, and lib/jtr_probe.h's own."""
    assert EXIT_INTERRUPTED == 128 + signal.SIGINT
    with open(os.path.join(ROOT, "lib", "jtr_probe.h")) as f:
        c = re.search(r"#define JTR_EXIT_INTERRUPTED (\d+)", f.read())
    assert c and int(c.group(1)) == EXIT_INTERRUPTED


def test_usage_and_failure_are_distinct_statuses_and_exceptions(capsys):
    """A handler of one exception never takes the other, and the dispatcher turns
    a UsageError into EXIT_USAGE."""
    assert (EXIT_FAILED, EXIT_USAGE) == (1, 2)
    assert not issubclass(UsageError, JtrError) and not issubclass(JtrError, UsageError)
    assert main(["nope"]) == EXIT_USAGE
    capsys.readouterr()
