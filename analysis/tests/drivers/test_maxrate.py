# SPDX-License-Identifier: GPL-2.0-only
"""jtr maxrate's search without the programs: retries, the steal rule, and the
bisection, driven by a fake step that passes below a known ceiling; a search
per message size and the rate sweep, driven the same way; the job around them
(the programs checked, the folder made, or removed when the options are
refused, the exit status, the sweep rows handed to the progress)."""
import json
import os

import pytest

from jtrpy.commands import maxrate as command
from jtrpy.drivers import maxrate
from jtrpy.errors import JtrError, UsageError


class FakeSearch:
    """Passes at or below @ceiling; @script gives (pass, steal) for the first tries."""
    def __init__(self, ceiling, script=()):
        self.ceiling, self.script, self.steps = ceiling, list(script), []

    def step(self, rate):
        ok, steal = self.script.pop(0) if self.script else (rate <= self.ceiling, 1.0)
        r = {"rate_hz": rate, "pass": ok, "steal_pct": steal,
             "noisy": not ok and steal > 5.0}
        self.steps.append(r)
        return r


def opts(**kw):
    o = command.options(command.make_parser("jtr maxrate").parse_args(["--from", "1K"]))
    o.update(kw)
    return o


def test_noisy_failures_do_not_use_up_retries():
    # three failures with 40 % steal, then a quiet failure, then a pass
    s = FakeSearch(10**9, [(False, 40.0)] * 3 + [(False, 1.0), (True, 1.0)])
    r = maxrate.trial(opts(), s, 1000, lambda r: None)
    assert r["pass"] and [x["try"] for x in s.steps] == [1, 2, 3, 4, 5]


def test_noisy_tries_are_capped():
    s = FakeSearch(10**9, [(False, 40.0)] * 10)
    r = maxrate.trial(opts(retries=1), s, 1000, lambda r: None)
    assert not r["pass"] and len(s.steps) == maxrate.NOISY_TRIES + 2


def test_quiet_failures_use_up_retries():
    s = FakeSearch(10**9, [(False, 1.0)] * 10)
    r = maxrate.trial(opts(retries=2), s, 1000, lambda r: None)
    assert not r["pass"] and len(s.steps) == 3


def test_search_converges_on_the_ceiling(tmp_path):
    s = FakeSearch(7300)
    good, bad, state = maxrate.search(opts(), s, str(tmp_path), lambda r: None)
    assert state == "done" and good <= 7300 < bad and (bad - good) <= 0.05 * good + 1
    assert [x["rate_hz"] for x in s.steps][:4] == [1000, 2000, 4000, 8000]


def test_steal_pct():
    assert maxrate.steal_pct((10, 1000), (30, 1100)) == 20.0
    assert maxrate.steal_pct(None, (1, 2)) is None
    assert maxrate.steal_pct((10, 1000), (10, 1000)) is None
    steal, total = maxrate.cpu_ticks()
    assert 0 <= steal <= total


class SizedSearch(FakeSearch):
    """A fake step per (size, rate): passes at or below ceiling(size); a
    message size of its own (len), like drivers.maxrate.Search."""
    def __init__(self, o, outdir, ceiling):
        super().__init__(None)
        self.o, self.outdir, self.ceiling_of = o, outdir, ceiling
        self.len, self.sizes, self.sweep, self.state = o["sizes"][0], [], [], "running"

    def step(self, rate):
        ok = rate <= self.ceiling_of(self.len)
        r = {"step": len(self.steps) + 1, "msg_len": self.len, "rate_hz": rate, "pass": ok,
             "steal_pct": 0.0, "noisy": False, "lost": 0 if ok else 7,
             "pub_rate_hz": rate, "sub_rate_hz": rate if ok else rate / 2,
             "late_pct": 1.0, "verdict": "pass" if ok else "FAIL: loss",
             "latency_ns": {"from_intended": {"p50_ns": rate // 100, "p99_ns": rate // 10,
                                              "p99.9_ns": rate // 5, "max_ns": rate,
                                              "samples": 10}}}
        self.steps.append(r)
        return r


def test_search_per_size(tmp_path):
    o = opts(sizes=[64, 512, 1500], len=64)
    s = SizedSearch(o, str(tmp_path), lambda size: 640000 // size * 100)
    begun = []
    maxrate.search_sizes(o, s, str(tmp_path), lambda r: None,
                         lambda i, size: begun.append((i, size)))
    assert begun == [(0, 64), (1, 512), (2, 1500)]
    assert [r["msg_len"] for r in s.sizes] == [64, 512, 1500]
    for r in s.sizes:
        ceiling = 640000 // r["msg_len"] * 100
        assert r["state"] == "done" and r["max_rate_hz"] <= ceiling < r["first_bad_hz"]
        assert r["first_bad_hz"] - r["max_rate_hz"] <= 0.05 * r["max_rate_hz"] + 1
        assert r["mb_per_s"] == r["max_rate_hz"] * r["msg_len"] / 1e6
        # the figures are those of a step of this size that passed at the answer
        at = s.steps[r["at"]["step"] - 1]
        assert at["msg_len"] == r["msg_len"] and at["pass"]
        assert at["rate_hz"] == r["max_rate_hz"] and r["at"]["lost"] == 0
    # each size's search starts again from --from
    firsts = [st["rate_hz"] for st in s.steps if st["step"] == 1 or
              st["msg_len"] != s.steps[st["step"] - 2]["msg_len"]]
    assert firsts == [1000] * 3
    doc = json.loads((tmp_path / "maxrate.json").read_text())
    assert doc["mode"] == "sizes" and doc["params"]["sizes"] == [64, 512, 1500]


def test_rate_sweep_measures_each_rate_once(tmp_path):
    o = opts(sizes=[64, 128], len=64, rates=[1000, 5000, 20000])
    s = SizedSearch(o, str(tmp_path), lambda size: 10000)
    seen = []
    maxrate.sweep_rates(o, s, str(tmp_path), seen.append, lambda i, size: None)
    assert [(r["msg_len"], r["rate_hz"]) for r in s.sweep] == \
        [(64, 1000), (64, 5000), (64, 20000), (128, 1000), (128, 5000), (128, 20000)]
    assert len(seen) == len(s.steps) == 6              # a failing rate is not run again
    for row, st in zip(s.sweep, s.steps):
        assert row["achieved_hz"] == st["sub_rate_hz"] and row["lost"] == st["lost"]
        assert row["p99_ns"] == st["latency_ns"]["from_intended"]["p99_ns"]
        assert row["pass"] == (st["rate_hz"] <= 10000)
    doc = json.loads((tmp_path / "maxrate.json").read_text())
    assert doc["mode"] == "rates" and doc["sweep"] == s.sweep


def test_a_sweep_row_below_32_bytes_is_from_the_send():
    """A 25-byte message carries no intended send time: its row's latency is the
    one from the send (the sub's from_intended is the same figure, said so)."""
    lat = {"from_send": {"p50_ns": 1, "p99_ns": 2, "p99.9_ns": 3, "max_ns": 4},
           "from_intended": {"p50_ns": 10, "p99_ns": 20, "p99.9_ns": 30, "max_ns": 40}}
    rec = {"step": 1, "msg_len": 25, "rate_hz": 1000, "pass": True, "verdict": "pass",
           "latency_ns": lat}
    row = maxrate.sweep_row(rec)
    assert row["from"] == "send" and row["p99_ns"] == 2
    row = maxrate.sweep_row(dict(rec, msg_len=32))
    assert row["from"] == "intended" and row["p99_ns"] == 20


def test_latency_of_a_sub_result():
    run = {"samples": 100, "max_ns": 900, "min_ns": 7, "mean_ns": 12.5,
           "percentiles_ns": {"50": 10, "99": 50, "99.9": 80}}
    doc = {"runs": [dict(run, name="latency_from_send"),
                    dict(run, name="latency_from_intended", max_ns=1000)]}
    lat = maxrate.latency(doc)
    assert lat["from_send"] == {"p50_ns": 10, "p99_ns": 50, "p99.9_ns": 80, "max_ns": 900,
                                "samples": 100, "min_ns": 7, "mean_ns": 12.5}
    assert lat["from_intended"]["max_ns"] == 1000
    assert maxrate.latency({"runs": []}) is None and maxrate.latency(None) is None
    assert maxrate.latency({"runs": [dict(run, name="latency_from_send", samples=0)]}) is None


def test_modes():
    assert maxrate.mode(opts()) == "search"
    assert maxrate.mode(opts(sizes=[64, 128])) == "sizes"
    assert maxrate.mode(opts(rates=[5])) == "rates"


def outcome(monkeypatch, tmp_path, o, ran):
    """maxrate_job on @o with find_max_rate replaced by @ran(o, outdir, progress,
    begin), the programs found; the Outcome, and what progress was given."""
    monkeypatch.setattr(maxrate, "probe_path", lambda name: "/bin/true")
    monkeypatch.setattr(maxrate, "find_max_rate", ran)
    monkeypatch.chdir(tmp_path)
    seen = []
    return maxrate.maxrate_job(o, lambda rec, row: seen.append((rec, row))), seen


def test_job_needs_the_programs_before_it_makes_a_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("JTR_LIBEXEC", str(tmp_path / "none"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(JtrError, match="the measuring program jtr-pub is not built"):
        maxrate.maxrate_job(opts(), lambda rec, row: None)
    assert list(tmp_path.iterdir()) == []


def test_job_refused_options_leave_nothing(tmp_path, monkeypatch):
    def refused(o, outdir, progress, begin):
        assert os.path.isdir(outdir)
        raise UsageError("jtr pub refused its options")
    with pytest.raises(UsageError):
        outcome(monkeypatch, tmp_path, opts(), refused)
    assert list(tmp_path.iterdir()) == []              # nor the results/ made for it
    (tmp_path / "results").mkdir()
    with pytest.raises(UsageError):
        outcome(monkeypatch, tmp_path, opts(), refused)
    assert list((tmp_path / "results").iterdir()) == []
    with pytest.raises(UsageError):
        outcome(monkeypatch, tmp_path, opts(out=str(tmp_path / "mine")), refused)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_job_exit_status_and_folder(tmp_path, monkeypatch):
    s = FakeSearch(0)
    for o, result, rc in ((opts(), (s, 8000, 9000, "done"), 0),
                          (opts(), (s, 8000, None, "reached --to"), 0),
                          (opts(), (s, None, 1000, "none passed"), 1),
                          (opts(), (s, None, None, "interrupted"), 130),
                          (opts(rates=[1000]), (s, None, None, "done"), 0)):
        out, _ = outcome(monkeypatch, tmp_path, o, lambda *a, r=result: r)
        assert (out.search, out.good, out.bad, out.state) == result and out.rc == rc
        assert out.mode == maxrate.mode(o) and os.path.dirname(out.outdir) == "results"
        assert "-maxrate" in out.outdir and os.path.isdir(tmp_path / out.outdir)
    sized = opts(sizes=[64, 128])
    s.sizes = [{"max_rate_hz": 1000}, {"max_rate_hz": None}]
    out, _ = outcome(monkeypatch, tmp_path, sized, lambda *a: (s, None, 64, "none passed"))
    assert out.rc == 1
    s.sizes[1]["max_rate_hz"] = 500
    out, _ = outcome(monkeypatch, tmp_path, sized, lambda *a: (s, 500, 600, "done"))
    assert out.rc == 0


def test_job_progress_gets_the_sweep_row(tmp_path, monkeypatch):
    o = opts(sizes=[64], rates=[1000, 5000])
    recs = SizedSearch(o, str(tmp_path), lambda size: 1000)

    def ran(o_, outdir, progress, begin):
        for rate in o["rates"]:
            progress(recs.step(rate))
        progress({"step": 3, "rate_hz": 9000, "interrupted": True})
        return recs, None, None, "interrupted"
    out, seen = outcome(monkeypatch, tmp_path, o, ran)
    assert [row for _, row in seen] == [maxrate.sweep_row(r) for r in recs.steps] + [None]
    out, seen = outcome(monkeypatch, tmp_path, opts(), ran)     # a search: no sweep rows
    assert [row for _, row in seen] == [None] * 3


def verdict(tmp_path, o, pub, sub):
    """Search.done()'s verdict on a step whose pub and sub wrote @pub and @sub
    (their transport objects) into its folder."""
    s = maxrate.Search(o, str(tmp_path))
    s.ticks0 = None
    rec = {"step": 1, "folder": "01-1000", "rate_hz": 1000, "pub_exit": 0, "sub_exit": 0}
    for side, t in (("pub", pub), ("sub", sub)):
        d = tmp_path / "01-1000" / side
        d.mkdir(parents=True)
        (d / "result.json").write_text(json.dumps({"format": "jtr-result/1", "tool": side,
                                                   "transport": t, "runs": []}))
    return s.done(rec, [])


def test_the_seed_method_fails_on_loss_and_waits_not_on_late_sends(tmp_path):
    """um_perf's procedure: a rate fails on loss or a send that would block (here:
    waited for room); late sends are the late method's, not the seeds'."""
    pub = {"issued": 1000, "sent": 1000, "rate_hz": 1000.0, "late_sends": 900,
           "blocked_sends": 0}
    sub = {"rate_hz": 1000.0, "received": 1000, "lost": 0, "end_of_stream": True}
    seed, late = opts(), opts(method="late", max_late=50.0)
    assert seed["method"] == "seed"
    assert verdict(tmp_path / "a", seed, pub, sub)["verdict"] == "pass"
    assert verdict(tmp_path / "b", late, pub, sub)["verdict"] == "FAIL: late sends"
    blocked = dict(pub, late_sends=0, blocked_sends=1234)
    for o, d in ((seed, "c"), (late, "d")):
        r = verdict(tmp_path / d, o, blocked, sub)
        assert r["verdict"] == "FAIL: 1,234 sends waited for room" and r["blocked_sends"] == 1234
    r = verdict(tmp_path / "e", seed, dict(pub, late_sends=0), dict(sub, lost=3))
    assert r["verdict"] == "FAIL: loss"
    # where the subscriber's kernel dropped them, the verdict says so
    r = verdict(tmp_path / "f", seed, dict(pub, late_sends=0), dict(sub, lost=3,
                                                                    socket_drops=1205))
    assert r["verdict"] == ("FAIL: loss (1,205 at the subscriber's socket: its receive buffer "
                            "was full)")


def test_max_late_means_the_late_method():
    parse = command.make_parser("jtr maxrate").parse_args
    assert command.options(parse(["--max-late", "20"]))["method"] == "late"
    assert command.options(parse([]))["method"] == "seed"
    assert command.options(parse(["--method", "late"]))["max_late"] == 50.0
    with pytest.raises(UsageError, match="--max-late 20 with --method seed"):
        command.options(parse(["--method", "seed", "--max-late", "20"]))
