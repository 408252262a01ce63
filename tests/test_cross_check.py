# SPDX-License-Identifier: GPL-2.0-only
"""The cross-check: the attribution of a run against `perf sched timehist` of the
same window. The FIFO spinner of the ground-truth tests preempts the probe; both
must see its preemptions (matched). With the sched_switch records removed from
the tracer's log, the attribution is blind to them and the check must say so."""
import json
import re
import shutil

import pytest
from conftest import load, run_jtr
from injection import need_perf, outliers_holding, part_of

from jtrpy.trace import events as ev

pytestmark = pytest.mark.measures

INJECTOR = "jtr-inject"


@pytest.fixture
def injected(request):
    """The shared `jtr run --cross-check` with the FIFO spinner on the probe's CPU
    (conftest.fifo_injected): (folder, result, injection spans, stdout)."""
    need_perf()
    return request.getfixturevalue("fifo_injected")


def injector_tids(res):
    """The spinner's pids, from the causes the attribution found."""
    return {t["pid"] for c in res["attribution"]["causes"]
            if c["category"] == "task preemption" and c["name"] == INJECTOR
            for t in c["tasks"]}


def injector_outliers(res):
    """Outliers charged (in part) to the spinner."""
    return [o for o in res["attribution"]["worst"]
            if part_of(o, "task preemption", name=INJECTOR) > 0]


def of_injector(kind, tids):
    """The disagreements of one kind (attribution_only, timehist_only) that are
    the spinner's."""
    return sum(t["count"] for t in kind["tasks"] if t["tid"] in tids)


def test_run_cross_check_matches_the_injected_preemptions(injected, validate):
    d, res, spans, out = injected
    validate(res)
    assert res["files"]["sched"] == "sched.data" and (d / "sched.data").stat().st_size > 0
    cc = res["cross_check"]
    tids = injector_tids(res)
    assert tids, "the attribution found no jtr-inject preemption"
    charged = injector_outliers(res)
    # counted in outliers, not injections: spins the host made run back to back
    # are one outlier and one timehist slice
    held = outliers_holding(res, spans)
    assert len(held) >= 0.9 * len(spans), (len(held), len(spans))
    assert len([o for o in held if o in charged]) >= 0.95 * len(held), (len(charged), len(held))
    wrong = of_injector(cc["attribution_only"], tids) + of_injector(cc["timehist_only"], tids)
    assert wrong <= 0.05 * len(held), json.dumps(cc, indent=1)
    assert cc["matched"]["count"] >= len(charged) - of_injector(cc["attribution_only"], tids)
    assert cc["matched"]["count"] >= 0.95 * len(held)
    # timehist saw the spinner itself: other tasks ran at least the spins' time
    spun = sum(e - b for b, e in spans)
    assert cc["totals"]["timehist_ns"] >= 0.9 * spun, (cc["totals"], spun)
    assert cc["probe_tasks"] and cc["probe_tasks"][0]["comm"] == "jtr-gap"
    # what jtr run printed
    assert "cross-check with perf sched timehist (sched.data" in out
    assert re.search(r"^  matched +%d " % cc["matched"]["count"], out, re.M)
    assert "cross-check: %s" % cc["verdict"] in out


def test_blind_attribution_is_caught(injected, tmp_path, validate):
    """Without sched_switch records the attribution cannot see the spinner: its
    preemptions must come out as timehist-only (charged to something else)."""
    src, res, spans, _ = injected
    d = tmp_path / "blind"
    shutil.copytree(src, d)
    log = ev.read_events(str(d))
    kept = [e for e in log.iter_events() if e.type != ev.SWITCH]
    assert len(kept) < log.records
    meta = {k: v for k, v in log.meta.items() if k != "events"}   # counts: recounted
    ev.write_events(str(d), kept, log.start_ns, log.end_ns, meta=meta)
    p = run_jtr("attribute", "--top", "100000", "--cross-check", d)
    assert p.returncode == 0, p.stderr
    blind = validate(load(d))
    cc = blind["cross_check"]
    tids = injector_tids(res)
    assert not injector_tids(blind), "the preemptions were still seen without switches"
    th = cc["timehist_only"]
    spinner = [t for t in th["tasks"] if t["tid"] in tids]
    assert spinner and spinner[0]["comm"] == "jtr-inject", th["tasks"]
    n = sum(t["count"] for t in spinner)
    assert n >= 0.95 * len(outliers_holding(res, spans)), (n, len(spans))
    assert sum(t["ns"] for t in spinner) >= 0.9 * sum(e - b for b, e in spans)
    assert cc["verdict"] == "%d disagreements" % cc["disagreements"]
    assert cc["disagreements"] >= th["count"]
    assert cc["totals"]["difference_ns"] < 0    # timehist's time was not charged to tasks
    assert "timehist-only    +" in p.stdout
    # the same as JSON, nothing written
    q = run_jtr("attribute", "--top", "100000", "--cross-check", "--json", "--no-write", d)
    assert q.returncode == 0, q.stderr
    assert json.loads(q.stdout)["cross_check"] == cc
    assert re.search(r"timehist-only by task: .*jtr-inject\[\d+\] \d+× ", p.stdout)
    assert "cross-check: %d disagreements" % cc["disagreements"] in p.stdout


def test_cross_check_without_sched_data(tmp_path):
    out = tmp_path / "plain"
    run_jtr("gap", "-d", "0.2", "-q", "-o", out, check=True)
    p = run_jtr("attribute", "--cross-check", out)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert "sched.data: no such file" in p.stderr and "jtr run --cross-check" in p.stderr
    p = run_jtr("attribute", "--cross-check", "--sched-data", tmp_path / "none.data", out)
    assert p.returncode == 2 and p.stderr.strip().endswith("none.data: no such file")
    p = run_jtr("attribute", "--cross-check-min", "2us", out)
    assert p.returncode == 2 and "go with --cross-check" in p.stderr
    bad = tmp_path / "bad.data"
    bad.write_text("not perf data\n")
    if shutil.which("perf"):
        p = run_jtr("attribute", "--cross-check", "--sched-data", bad, out)
        assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
        assert "Traceback" not in p.stderr


def test_run_cross_check_usage_errors(tmp_path):
    p = run_jtr("run", "--cross-check", "--no-trace", "-d", "1", "-o", tmp_path / "x")
    assert p.returncode == 2 and "drop --no-trace" in p.stderr
    p = run_jtr("run", "--cross-check", "-d", "1", "-o", tmp_path / "y",
                env={"JTR_NO_PERF": "1"})
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "--cross-check needs perf sched record: perf is switched off" in p.stderr
    p = run_jtr("run", "--cross-check-min", "1us", "-d", "1", "-o", tmp_path / "z")
    assert p.returncode == 2 and "goes with --cross-check" in p.stderr
    assert not any((tmp_path / n).exists() for n in ("x", "y", "z"))


def test_help_lists_the_options():
    for cmd, opts in (("run", ("--cross-check", "--cross-check-min DUR",
                               "jtr run --cross-check -c 1")),
                      ("attribute", ("--cross-check", "--sched-data PATH",
                                     "--cross-check-min DUR",
                                     "jtr attribute --cross-check results/latest"))):
        p = run_jtr(cmd, "--help")
        assert p.returncode == 0 and not p.stderr, p.stderr
        assert all(o in p.stdout for o in opts), (cmd, p.stdout)
