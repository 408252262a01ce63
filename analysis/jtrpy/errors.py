"""errors - the exceptions the front end turns into one-line messages."""


class UsageError(Exception):
    """Bad input from the user: printed as 'jtr: message', exit status 2."""


class JtrError(Exception):
    """Something failed that is not the user's input: exit status 1."""
