# SPDX-License-Identifier: GPL-2.0-only
"""jtr compare's job: the two results loaded, compared (stats/compare.py) and the
comparison written to -o FILE; the command prints it."""
import os

from ..errors import UsageError
from ..results.result import load_result
from ..stats.compare import compare
from ..system.files import check_outputs, dumps_json, write_output


def check_output(out):
    """-o FILE must be a file in a folder that exists: said before anything is read."""
    d = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(d) or os.path.isdir(out):
        raise UsageError("-o %s: cannot write there; choose a file in a folder that exists"
                         % out)


def compare_results(pa, pb, out=None, **params):
    """(the comparison, its JSON text) of the results at @pa (A, before) and @pb (B,
    after), as the user named them; with @out, the JSON written there atomically.
    @params: stats.compare.compare's confidence, resamples, seed, quantity, mixed,
    min_effect_ns, min_effect_pct, accept_invalid."""
    if out:
        check_output(out)
    a, b = load_result(pa), load_result(pb)
    if out:
        check_outputs([("-o", out)], a.inputs() + b.inputs())
    c = compare([a], [b], labels_a=[pa], labels_b=[pb], **params)
    text = dumps_json(c) + "\n"
    if out:
        try:
            write_output(out, text)
        except OSError as e:
            raise UsageError("-o %s: cannot write: %s; choose a writable file"
                             % (out, e.strerror or e))
    return c, text
