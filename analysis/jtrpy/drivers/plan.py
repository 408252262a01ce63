# SPDX-License-Identifier: GPL-2.0-only
"""plan - what a measurement under jtr run (or jtr ab) needs: the probe's own
options with the CPUs jtr fills in, the partner program at the other end (jtr
pong for ping, jtr sub for pub) with the probe's transport options, the CPUs of
every side (the tracer follows them all) and which program's result holds the
latency and its outlier log.

The probe's options are passed on unchanged; only the few a plan needs are
looked at (the CPU options, the transport group, -o) and the ones jtr pins are
added when the user gave none. Sides are named as result.json names them in
an attribution ("ping"/"pong", "pub"/"sub"; one-sided probes have none).
"""
from ..errors import UsageError
from ..results import probes as P
from ..system.cpus import default_cpu, online_cpus
from ..values import format_cpulist, parse_cpulist
from ..vocab import DATAGRAM_TRANSPORTS

# jtr run's probes, those that measure every CPU of -c (one thread each), the
# program each starts at the other end: the probe model's (results/probes.py)
PROBES = P.RUN_PROBES
MULTI_CPU = tuple(p for p in PROBES if P.BY_TOOL[p].multi_cpu)
PARTNERS = {p: P.BY_TOOL[p].partner for p in PROBES if P.BY_TOOL[p].partner}
# the transport group every endpoint shares: options with a value, and flags
TRANSPORT_VALUED = (("-T", "--transport"), ("-P", "--addr"), (None, "--recv"),
                    (None, "--iface"), (None, "--ttl"), (None, "--slots"),
                    (None, "--timeout"), (None, "--sndbuf"), (None, "--rcvbuf"))
TRANSPORT_FLAGS = (("-b", "--busy"), (None, "--mcast-wide"), (None, "--nagle"))
# the transport options (TP_PROG_LONG_OPTS in transports/prog/tp_prog.h) each end
# sets for itself: where the shm reader's ring lives, how long an end waits for
# its peer to appear (test_parity.py: every C option is in one of the three)
TRANSPORT_OWN = ("--numa-node", "--cross-numa", "--wait")
SHM_SLOT = 4096         # pong's default --max-len


def partner_cpu_of(probe, pong_cpu, sub_cpu):
    """The other end's CPU from --pong-cpu and --sub-cpu ([int] or None each), or
    None; UsageError for one that does not go with @probe, or more than one CPU."""
    cpu = None
    for name, cpus in (("--pong-cpu", pong_cpu), ("--sub-cpu", sub_cpu)):
        if cpus is None:
            continue
        partner = name[2:-4]
        if PARTNERS.get(probe) != partner:
            raise UsageError("%s: %s has no jtr %s to place (it goes with %s)" % (
                name, probe, partner, "ping" if partner == "pong" else "pub"))
        if len(cpus) != 1:
            raise UsageError("%s %s: give one CPU" % (name, format_cpulist(cpus)))
        cpu = cpus[0]
    return cpu


def find_option(args, short, long):
    """The last value given to @short/@long in @args ("-a 1", "-a1", "--cpu 1",
    "--cpu=1"), or None."""
    value = None
    for i, a in enumerate(args):
        if a == "--":
            break
        if a in (short, long) and i + 1 < len(args):
            value = args[i + 1]
        elif long and a.startswith(long + "="):
            value = a[len(long) + 1:]
        elif short and a.startswith(short) and len(a) > 2 and not a.startswith("--"):
            value = a[2:]
    return value


def has_flag(args, short, long):
    """Whether the flag @short/@long is in @args."""
    return any(a in (short, long) for a in args)


def transport_args(args):
    """The transport options of @args, as they were given, for the other end."""
    out = []
    for short, long in TRANSPORT_VALUED:
        v = find_option(args, short, long)
        if v is not None:
            out += [long, v]
    for short, long in TRANSPORT_FLAGS:
        if has_flag(args, short, long):
            out.append(long)
    return out


def fifo_args(args):
    """The other end runs at the probe's SCHED_FIFO priority (-f PRIO): a round
    trip or a message is only as real-time as its slower end."""
    prio = find_option(args, "-f", "--fifo")
    return ["--fifo", prio] if prio is not None else []


def _cpu(text, what):
    """A CPU number from an option's value; UsageError naming it."""
    try:
        cpus = parse_cpulist(text)
    except UsageError as e:
        raise UsageError("%s %s: %s" % (what, text, e)) from None
    if len(cpus) != 1:
        raise UsageError("%s %s: give one CPU" % (what, text))
    return cpus[0]


def other_cpu(taken):
    """An online CPU not in @taken (the first), else the first of @taken."""
    rest = [c for c in online_cpus() if c not in taken]
    return rest[0] if rest else sorted(taken)[0]


class Plan:
    """The programs of one measurement and the CPUs of each side.

    probe, args: the C program (jtr-PROBE) and its options; partner,
    partner_args: the other end, or None; sides: {side: [cpus]} (one side named
    after the probe for one-sided probes); measured_by: "probe" or "partner", the
    program whose result holds the latency and outliers (ping: the probe; pub:
    the subscriber); partner_first: start it before the probe and wait until it
    is ready; notices: what jtr chose for the user."""

    def __init__(self, probe):
        self.probe = probe
        self.args = []
        self.partner = PARTNERS.get(probe)
        self.partner_args = []
        self.sides = {}
        self.measured_by = "probe"
        self.partner_netns = None
        self.wait_ready = False
        self.notices = []

    @property
    def spare_cpu(self):
        """Where the tracer drains its buffer when every CPU is traced: a CPU of the
        end that logs no outliers (send's drain thread, pong, pub), never the
        measured one; None for one-sided probes."""
        for side in ("drain", "pong", "pub"):
            if self.sides.get(side):
                return self.sides[side][0]
        return None

    @property
    def cpus(self):
        """Every CPU of the measurement, sorted."""
        return sorted({c for cs in self.sides.values() for c in cs})

    @property
    def cpu_text(self):
        return format_cpulist(self.cpus) if self.cpus else None


def make_plan(probe, args, cpus=None, partner_cpu=None):
    """The Plan of `jtr run PROBE ARGS`: @cpus ([int] from jtr run's -c or None)
    are the measured CPUs; @partner_cpu (int or None) the other end's CPU."""
    if probe not in PROBES:
        raise UsageError("%s: no such probe for jtr run; give one of %s"
                         % (probe, ", ".join(PROBES)))
    p = Plan(probe)
    args = list(args)
    if partner_cpu is not None and p.partner is None:
        raise UsageError("--pong-cpu and --sub-cpu go with ping and pub: %s has no other end"
                         % probe)
    if probe in MULTI_CPU:
        given = find_option(args, "-c", "--cpus") or find_option(args, None, "--cpu")
        if cpus and given is not None:
            raise UsageError("-c %s and the probe's -c %s both say where %s runs; give one"
                             % (format_cpulist(cpus), given, probe))
        if given is not None:
            try:
                cpus = parse_cpulist(given)
            except UsageError as e:
                raise UsageError("-c %s: %s" % (given, e)) from None
        else:
            p.args = ["-c", format_cpulist(cpus)] if cpus else []
        p.args = args + p.args
        p.sides = {probe: list(cpus) if cpus else [default_cpu()]}
        return p
    own = P.BY_TOOL[probe].cpu_option
    given = find_option(args, *own)
    if cpus and given is not None:
        raise UsageError("-c %s and %s %s both say where %s runs; give one"
                         % (format_cpulist(cpus), own[0], given, probe))
    if cpus and len(cpus) != 1:
        raise UsageError("-c %s: %s measures one CPU; give one" % (format_cpulist(cpus), probe))
    if given is not None and given.strip() == "-1":
        raise UsageError("%s -1: jtr run pins every measuring thread (the tracer follows "
                         "them); give a CPU or leave %s out" % (own[0], own[0]))
    cpu = cpus[0] if cpus else (_cpu(given, own[0]) if given is not None else default_cpu())
    if given is None:
        args += [own[0], str(cpu)]
    p.args = args
    if probe == "null":
        p.sides = {"null": [cpu]}
    elif probe == "send":
        drain = find_option(args, "-a", "--drain-cpu")
        if "--no-drain" in args:
            p.sides = {"send": [cpu]}
        else:
            d = _cpu(drain, "-a") if drain is not None else other_cpu({cpu})
            if drain is None:
                p.args += ["-a", str(d)]
            p.sides = {"send": [cpu], "drain": [d]}
    elif probe == "ping":
        mine = [cpu]
        if not has_flag(args, "-1", "--one-thread"):
            snd = find_option(args, "-A", "--send-cpu")
            s = _cpu(snd, "-A") if snd is not None and snd.strip() != "-1" else cpu
            if snd is None or snd.strip() == "-1":
                p.args += ["-A", str(s)]
                p.notices.append("ping's sending thread is pinned to CPU %d beside the "
                                 "receiving one (it spins between sends: -1 takes one thread, "
                                 "-A CPU another CPU)" % s)
            mine = sorted({cpu, s})
        peer = partner_cpu if partner_cpu is not None else other_cpu(set(mine))
        p.partner_args = transport_args(args) + ["-a", str(peer)]
        length = find_option(args, "-m", "--len")
        kind = find_option(args, "-T", "--transport") or "udp"
        if kind == "shm" and length is not None and length.isdigit() and \
                int(length) > SHM_SLOT:
            p.partner_args += ["-m", length]
        p.partner_args += fifo_args(args)
        p.sides = {"ping": mine, "pong": [peer]}
    else:   # pub: the subscriber measures the latency
        peer = partner_cpu if partner_cpu is not None else other_cpu({cpu})
        p.partner_args = transport_args(args) + ["-a", str(peer)] + fifo_args(args)
        kind = find_option(args, "-T", "--transport") or "udp"
        p.wait_ready = kind in DATAGRAM_TRANSPORTS
        p.measured_by = P.BY_TOOL[probe].measured_by
        p.sides = {"pub": [cpu], "sub": [peer]}
    if p.partner and p.sides[p.partner] == p.sides[probe][:1] and len(online_cpus()) > 1:
        p.notices.append("%s and %s share CPU %d" % (probe, p.partner, p.sides[probe][0]))
    return p
