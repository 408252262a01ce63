"""drivers.stops: the first stop signal is a request, later ones are acknowledged,
nothing is raised; after a stop the signals stay ignored to the end."""
import os
import signal

import pytest

from jtrpy.drivers.stops import SIGNALS, StopRequests


@pytest.fixture
def handlers():
    """The test's signal handlers, put back afterwards (a stop leaves them ignored)."""
    old = {s: signal.getsignal(s) for s in SIGNALS}
    yield
    for s, h in old.items():
        signal.signal(s, h)


def test_first_signal_stops_later_ones_are_acknowledged(handlers, capfd):
    firsts = []
    with StopRequests("jtr x", on_first=firsts.append, busy="still busy; wait") as stops:
        assert not stops.stopped
        os.kill(os.getpid(), signal.SIGTERM)
        assert stops.stopped and stops.signum == signal.SIGTERM and firsts == [signal.SIGTERM]
        assert capfd.readouterr().err == ""
        for s in (signal.SIGINT, signal.SIGHUP):
            os.kill(os.getpid(), s)
        assert stops.count == 3 and firsts == [signal.SIGTERM]
        assert capfd.readouterr().err == "jtr x: still busy; wait\n" * 2
    for s in SIGNALS:                       # cleanup over: ignored on the way out
        assert signal.getsignal(s) == signal.SIG_IGN


def test_without_a_stop_the_handlers_are_put_back(handlers):
    old = {s: signal.getsignal(s) for s in SIGNALS}
    with StopRequests("jtr x"):
        assert all(signal.getsignal(s) != old[s] for s in SIGNALS)
    assert {s: signal.getsignal(s) for s in SIGNALS} == old


def test_ack_first_and_taken(handlers, capfd):
    with StopRequests("jtr x", busy="still reverting; wait", ack_first=True) as stops:
        os.kill(os.getpid(), signal.SIGHUP)
        assert stops.stopped
        assert capfd.readouterr().err == "jtr x: still reverting; wait\n"
    with StopRequests("jtr y") as stops:
        stops.taken()                       # another handler took the first
        os.kill(os.getpid(), signal.SIGINT)
        assert stops.count == 2 and capfd.readouterr().err == "jtr y: stopping; wait\n"
