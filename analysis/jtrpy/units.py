"""units - how jtr writes a duration for people (one format everywhere)."""


def fmt_ns(ns):
    """A duration for people: 727 ns, 11.1 us, 2.97 ms, 1.20 s."""
    ns = float(ns)
    if ns < 1e3:
        return "%.0f ns" % ns
    if ns < 1e6:
        return "%.1f us" % (ns / 1e3)
    if ns < 1e9:
        return "%.2f ms" % (ns / 1e6)
    return "%.2f s" % (ns / 1e9)
