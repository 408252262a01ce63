# SPDX-License-Identifier: GPL-2.0-only
"""suite - a jtr suite folder's index (suite.json, jtr-suite/1): which items ran,
with which command, how they ended and where their results are. Written
atomically before the first item and after each one, so a reader (or a Ctrl-C)
finds it whole at every moment."""
import datetime
import os
import socket

from ..errors import UsageError
from ..system.files import inside, read_json, write_json
from ..system.schema import NAME as SHORT_TEXT
from ..system.schema import TEXT, Any, Int, List, Obj, Opt, Str, Tuple, check

FORMAT = "jtr-suite/1"
NAME = "suite.json"

# the fields of suite.json jtr report reads (system/schema.py checks them)
ITEM = Obj({"name": SHORT_TEXT, "tool": Opt(Str(64)), "folder": Opt(Str()), "status": Opt(Str(64)),
            "exit_status": Opt(Int(-255, 255)), "why": Opt(TEXT),
            "command": List(TEXT, "a list of strings")},
           required=("name",), what="an item object")
SUITE_FIELDS = Obj({"command": List(TEXT, "a list of strings"), "host": Opt(SHORT_TEXT),
                    "started_at": Opt(Str(64)), "ended_at": Opt(Str(64)), "partial": Any(),
                    "items": List(ITEM, "a list of item objects"),
                    "pairs": List(Tuple(SHORT_TEXT, SHORT_TEXT, what="a pair of item names"),
                                  "a list of pairs of item names")},
                   what="a suite index object")


def now_iso():
    """Now, as results write times: 2026-11-23T10:15:02.123Z."""
    t = datetime.datetime.now(datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def is_suite(folder):
    """True when @folder holds a suite's index."""
    return os.path.isfile(os.path.join(folder, NAME))


class SuiteIndex:
    """suite.json of the suite in @folder, kept on disk as it changes."""

    def __init__(self, folder, command):
        self.folder = folder
        self.doc = {"format": FORMAT, "command": command, "host": socket.gethostname(),
                    "started_at": now_iso(), "ended_at": None, "state": "running",
                    "partial": False, "items": [], "pairs": []}

    def save(self):
        write_json(os.path.join(self.folder, NAME), self.doc)


def load_suite(folder):
    """The index of the suite in @folder; UsageError when there is none, or it is
    not one (a field named with what it should be)."""
    path = os.path.join(folder, NAME)
    doc = read_json(path, FORMAT, "suite index")
    check(doc, SUITE_FIELDS, path)
    return doc


def item_folder(folder, entry):
    """The results folder of the suite item @entry (of the suite in @folder), or
    None when it has none; UsageError when suite.json names a place outside the
    suite's folder."""
    name = entry.get("folder")
    if not name:
        return None
    path = os.path.join(folder, name)
    if os.path.isabs(name) or not inside(path, folder):
        raise UsageError("%s: items: item %s: its folder is outside the suite's folder"
                         % (os.path.join(folder, NAME), entry["name"]))
    return path
