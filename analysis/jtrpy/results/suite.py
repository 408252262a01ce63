"""suite - a jtr suite folder's index (suite.json, jtr-suite/1): which items ran,
with which command, how they ended and where their results are. Written
atomically before the first item and after each one, so a reader (or a Ctrl-C)
finds it whole at every moment."""
import datetime
import os
import socket

from ..system.files import read_json, write_json

FORMAT = "jtr-suite/1"
NAME = "suite.json"


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
    """The index of the suite in @folder; UsageError when there is none."""
    return read_json(os.path.join(folder, NAME), FORMAT, "suite index")
