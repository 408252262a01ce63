"""find - the results under some folders (jtr ls)."""
import os

from ..errors import UsageError
from .result import load_result, result_path


def find_results(folders, default=False):
    """([Result], [skipped folders]): every result in @folders; a folder that is a
    result is taken as one, else its sub-folders are looked at. With @default
    (the folders were not given) a missing folder is no error."""
    found, skipped, seen = [], [], set()

    def take(path):
        real = os.path.realpath(path)
        if real in seen:
            return
        seen.add(real)
        try:
            found.append(load_result(path))
        except UsageError:
            skipped.append(path)

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
        try:
            names = sorted(os.listdir(top))
        except OSError as e:
            raise UsageError("%s: cannot read: %s" % (top, e.strerror))
        # real folders first, so a link (results/latest) is the one left out
        names.sort(key=lambda n: os.path.islink(os.path.join(top, n)))
        for name in names:
            p = os.path.join(top, name)
            if os.path.isdir(p):
                take(p)
    return found, skipped
