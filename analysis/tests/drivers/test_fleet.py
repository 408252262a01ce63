# SPDX-License-Identifier: GPL-2.0-only
"""drivers.fleet: -o checked before anything is read, the folders asked for, the
document judged by the rule given and shown before the page is written, the
page written whole, and a page that cannot be written one line after what was
shown."""
import os

import pytest

from jtrpy.drivers.fleet import fleet_job
from jtrpy.errors import UsageError
from jtrpy.results.fleet import Rule

from ..results.test_fleet import QUIET, gap, noisy, write


@pytest.fixture
def hosts(tmp_path):
    write(tmp_path / "f" / "a" / "gap", gap(lost_pct=1.0, causes=QUIET))
    write(tmp_path / "f" / "b" / "gap", gap(lost_pct=3.0, causes=noisy()))
    return str(tmp_path / "f")


def test_output_is_checked_before_anything_is_read(tmp_path):
    shown = []
    with pytest.raises(UsageError) as e:
        fleet_job([str(tmp_path / "nowhere")], Rule(), output=str(tmp_path / "no" / "x.html"),
                  show=shown.append)
    assert str(e.value) == "-o %s: no such folder %s" % (tmp_path / "no" / "x.html",
                                                         tmp_path / "no")
    with pytest.raises(UsageError, match="is a folder; give a file name, e.g. -o fleet.html"):
        fleet_job([str(tmp_path / "nowhere")], Rule(), output=str(tmp_path))
    with pytest.raises(UsageError, match=r"^give the folders of the hosts' results"):
        fleet_job([], Rule(), output=str(tmp_path / "x.html"))
    assert shown == [] and not os.path.exists(tmp_path / "x.html")


def test_the_document_is_shown_then_the_page_written(hosts, tmp_path):
    page = tmp_path / "fleet.html"
    seen = []

    def show(doc):
        seen.append((doc, page.exists()))
    doc = fleet_job([hosts], Rule(ratio=1.5), output=str(page), show=show)
    assert seen == [(doc, False)]
    assert doc["format"] == "jtr-fleet/1" and doc["flagged_hosts"] == ["b"]
    assert doc["rule"]["ratio"] == 1.5
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert [n for n in os.listdir(tmp_path) if n.startswith(".")] == []


def test_without_output_no_page(hosts, tmp_path):
    doc = fleet_job([hosts], Rule(ratio=4.0))
    assert doc["flagged_hosts"] == []           # 3x is under a 4x rise
    assert sorted(os.listdir(tmp_path)) == ["f"]


def test_invalid_rows_are_judged_only_when_accepted(hosts, tmp_path):
    bad = gap(lost_pct=3.0, causes=noisy())
    bad["validity"] = {"valid": False, "reasons": [
        {"code": "late_sends", "scope": "measurement", "text": "late sends",
         "fix": "run it on an idle CPU", "value": 5}]}
    write(tmp_path / "f" / "b" / "gap", bad)
    left = fleet_job([hosts], Rule())
    assert left["flagged_hosts"] == [] and [x["host"] for x in left["invalid"]] == ["b"]
    assert left["invalid"][0]["why"].startswith("not a valid measurement: late sends")
    taken = fleet_job([hosts], Rule(), accept_invalid=True)
    assert taken["flagged_hosts"] == ["b"] and taken["invalid"] == []


def test_a_page_that_cannot_be_written_comes_after_what_was_shown(hosts, tmp_path):
    out = tmp_path / "gone"
    out.mkdir()
    seen = []

    def show(doc):          # the folder goes between the check and the write
        seen.append(doc)
        os.rmdir(out)
    with pytest.raises(UsageError) as e:
        fleet_job([hosts], Rule(), output=str(out / "fleet.html"), show=show)
    assert len(seen) == 1
    assert str(e.value) == "-o %s: cannot write: No such file or directory" % (
        out / "fleet.html")
