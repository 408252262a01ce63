"""jtr maxrate's search without the programs: retries, the steal rule, and the
bisection, driven by a fake step that passes below a known ceiling."""
from jtrpy.commands import maxrate as command
from jtrpy.drivers import maxrate


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
