# SPDX-License-Identifier: GPL-2.0-only
"""errors - the exceptions the front end turns into one-line messages, and the
exit statuses every jtr command uses (the C programs' as well)."""

EXIT_FAILED = 1             # something failed that is not the user's input
EXIT_USAGE = 2              # bad input: nothing was done
EXIT_INTERRUPTED = 130      # a stop signal ended it early; what was measured is kept


class UsageError(Exception):
    """Bad input from the user: printed as 'jtr CMD: message', exit status 2."""


class JtrError(Exception):
    """Something failed that is not the user's input: exit status 1."""
