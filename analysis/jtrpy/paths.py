"""paths - where the measuring programs are, in a source tree or installed."""
import os

from .errors import JtrError

_PKG = os.path.dirname(os.path.abspath(__file__))


def probe_dirs():
    """Folders that may hold the jtr-* programs, in the order they are tried."""
    env = os.environ.get("JTR_LIBEXEC")
    if env:
        return [env]
    return [
        os.path.normpath(os.path.join(_PKG, "..", "..", "build", "bin")),  # source tree
        os.path.normpath(os.path.join(_PKG, "..", "..", "..", "libexec", "jtr")),  # PREFIX
    ]


def probe_path(name):
    """Full path of the program jtr-NAME, or JtrError saying how to build it."""
    for d in probe_dirs():
        p = os.path.join(d, "jtr-" + name)
        if os.access(p, os.X_OK):
            return p
    raise JtrError(
        "the measuring program jtr-%s is not built (looked in %s); run 'make' in the "
        "source tree, or set JTR_LIBEXEC" % (name, ", ".join(probe_dirs())))
