# SPDX-License-Identifier: GPL-2.0-only
"""find - the results under some folders (jtr ls)."""
import os

from ..errors import UsageError
from .result import load_result, result_path


def find_results(folders, default=False):
    """([Result], [skipped folders], [(folder, why)]): every result in @folders, the
    folders that hold none, and the results that could not be loaded (damaged:
    why is load_result's one-line error). A folder that is a result is taken as
    one, else its sub-folders are looked at. With @default (the folders were not
    given) a missing folder is no error."""
    found, skipped, damaged, seen = [], [], [], set()

    def take(path):
        real = os.path.realpath(path)
        if real in seen:
            return
        seen.add(real)
        if not os.path.lexists(result_path(path)):
            skipped.append(path)
            return
        try:
            found.append(load_result(path))
        except UsageError as e:
            damaged.append((path, str(e)))

    for top in folders:
        if not os.path.exists(top):
            if default:
                continue
            raise UsageError("%s: no such folder" % top)
        if not os.path.isdir(top):
            if os.path.basename(top) == "result.json":
                take(os.path.dirname(top) or ".")
                continue
            raise UsageError("%s: not a folder; give results folders or folders of them" % top)
        if os.path.exists(result_path(top)):
            take(top)
            continue
        for p in subfolders(top):
            take(p)
    return found, skipped, damaged


def subfolders(top):
    """The folders in @top, by name, real ones first so that a link to one of them
    (results/latest) is the copy left out; UsageError when @top cannot be read."""
    try:
        names = sorted(os.listdir(top))
    except OSError as e:
        raise UsageError("%s: cannot read: %s" % (top, e.strerror))
    names.sort(key=lambda n: os.path.islink(os.path.join(top, n)))
    return [os.path.join(top, n) for n in names if os.path.isdir(os.path.join(top, n))]
