# SPDX-License-Identifier: GPL-2.0-only
"""The walk from `jtr run` to the page: each command's driver hands the document
along, and control does not keep coming back to a module it left. Traced for
real (sys.setprofile in the jtr process, a 300 ms traced run, then its page):
the calls the command's driver makes into the package's other modules, a run
of calls into one module counted as one entry, enter no module more than twice
(a run once entered results/ and render/report.py 13 times, going back and
forth between loading, judging and saving)."""
import json
import os
import subprocess
import sys
from collections import Counter

from conftest import ROOT, need_tracing

LIMIT = 2

# run jtr's main() in this process, recording each call the driver module
# (argv[1]) makes into another jtrpy module: [(module, function)]
WALKER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from jtrpy.cli.main import main
driver, calls = sys.argv[2], []
def profile(frame, event, arg):
    if event == "call" and frame.f_back is not None and \
            frame.f_back.f_globals.get("__name__") == driver:
        callee = frame.f_globals.get("__name__", "")
        if callee.startswith("jtrpy.") and callee != driver:
            calls.append((callee, frame.f_code.co_name))
sys.setprofile(profile)
try:
    rc = main(sys.argv[4:])
except SystemExit as e:
    rc = e.code
sys.setprofile(None)
with open(sys.argv[3], "w") as f:
    json.dump({"rc": rc, "calls": calls}, f)
"""


def entries(calls):
    """The modules entered, in order: consecutive calls into one module are one
    entry."""
    out = []
    for module, _ in calls:
        if not out or out[-1] != module:
            out.append(module)
    return out


def over(calls, limit=LIMIT):
    """{module: entries} of the modules entered more than @limit times."""
    return {m: n for m, n in Counter(entries(calls)).items() if n > limit}


def walk(tmp_path, driver, *argv):
    out = tmp_path / (driver.rsplit(".", 1)[-1] + ".walk.json")
    env = dict(os.environ)
    env.pop("JTR_PROG", None)
    p = subprocess.run([sys.executable, "-c", WALKER, os.path.join(ROOT, "analysis"), driver,
                        str(out)] + [str(a) for a in argv], capture_output=True, text=True,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    assert doc["rc"] in (0, None), (doc["rc"], p.stderr)
    return doc["calls"]


def test_counting_entries():
    """A module left and entered again counts again; calls in a row do not."""
    calls = [("a", "f"), ("a", "g"), ("b", "f"), ("a", "h"), ("c", "f"), ("a", "i")]
    assert entries(calls) == ["a", "b", "a", "c", "a"]
    assert over(calls) == {"a": 3} and over(calls, 3) == {}


def test_the_walk_from_jtr_run_to_the_page(tmp_path):
    need_tracing()
    cpu = max(os.sched_getaffinity(0))
    run = walk(tmp_path, "jtrpy.drivers.run", "run", "-c", cpu, "-d", "300ms", "-q",
               "-o", tmp_path / "r")
    modules = set(entries(run))
    # the job's steps are all in it: the probe, the tracer, attribution, gates, the save
    assert {"jtrpy.drivers.programs", "jtrpy.drivers.attribute", "jtrpy.drivers.gates",
            "jtrpy.results.result"} <= modules, entries(run)
    assert not over(run), entries(run)
    page = walk(tmp_path, "jtrpy.drivers.report", "report", "-o", tmp_path / "page",
                tmp_path / "r")
    assert "jtrpy.render.html" in set(entries(page)), entries(page)
    assert (tmp_path / "page" / "report.html").exists()
    assert not over(page), entries(page)
