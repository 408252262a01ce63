# SPDX-License-Identifier: GPL-2.0-only
"""plan - what a measurement under jtr run (or jtr ab) needs: the probe's own
options with the CPUs jtr fills in, the partner program at the other end (jtr
pong for ping, jtr sub for pub) with the probe's transport options, the CPUs of
every side (the tracer follows them all) and which program's result holds the
latency and its outlier log.

The probe's options are passed on unchanged; only the few a plan needs are
looked at (the CPU options, the transport group, -o) and the CPUs jtr pins are
added when the user gave none. Every program takes its CPUs with -c (the one
option alphabet, cli/parser.py ALPHABET): a program with a second thread takes
its CPU second (send: -c CPU,DRAIN; ping: -c RECV,SEND), and the letters of
old (-a, -A) are read as the programs still read them (OLD_LETTERS). Sides are
named as result.json names them in an attribution ("ping"/"pong", "pub"/"sub";
one-sided probes have none).
"""
from ..cli.parser import OLD_LETTERS
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
SHM_SLOT = 4096         # pong's default -m (its ring's slot)
# the probe's own CPU option: the alphabet's -c and the older long name --cpu
CPU_WORDS = ("-c", "--cpus", "--cpu")
# the CPU of a second thread by itself: send's drain, ping's sending thread
SECOND_CPU_WORDS = {"send": ("--drain-cpu",), "ping": ("--send-cpu",)}
# ping's receiving thread by itself
FIRST_CPU_WORDS = {"ping": ("--recv-cpu",)}


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


def find_option(args, *names):
    """The last value given to any of @names (short "-c" or long "--cpus"; None
    is skipped) in @args ("-c 1", "-c1", "--cpus 1", "--cpus=1"), or None."""
    found = find_option_word(args, *names)
    return found[1] if found else None


def find_option_word(args, *names):
    """(the name as given, its value) of the last of @names in @args, or None."""
    names = [n for n in names if n]
    found = None
    for i, a in enumerate(args):
        if a == "--":
            break
        if a in names and i + 1 < len(args):
            found = (a, args[i + 1])
        for n in names:
            if n.startswith("--") and a.startswith(n + "="):
                found = (n, a[len(n) + 1:])
            elif not n.startswith("--") and a.startswith(n) and len(a) > 2 and \
                    not a.startswith("--"):
                found = (n, a[2:])
    return found


def cpu_words(probe):
    """The words that give @probe's (first) CPU: the alphabet's and the old letter
    the program still reads as -c (OLD_LETTERS)."""
    old = tuple(o for o, new in OLD_LETTERS.get(probe, {}).items() if new == "-c")
    return CPU_WORDS + FIRST_CPU_WORDS.get(probe, ()) + old


def second_cpu_words(probe):
    """The words that give the CPU of @probe's second thread by itself."""
    old = tuple(o for o, new in OLD_LETTERS.get(probe, {}).items()
                if new in SECOND_CPU_WORDS.get(probe, ()))
    return SECOND_CPU_WORDS.get(probe, ()) + old


def own_cpus(probe, args):
    """(word, [first CPU text, second CPU text or None]) of the probe's own CPU
    options in @args ([None, None] and word None when none is given): -c
    FIRST[,SECOND] or the words of one thread each."""
    first = find_option_word(args, *cpu_words(probe))
    texts = [None, None]
    if first:
        head, _, tail = first[1].partition(",") if first[0] in CPU_WORDS and \
            probe in SECOND_CPU_WORDS else (first[1], "", "")
        texts = [head, tail or None]
    second = find_option(args, *second_cpu_words(probe))
    if second is not None:
        texts[1] = second
    return (first[0] if first else None), texts


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
    if p.partner and find_option(args, None, "--streams") is not None:
        # the other end would listen on one stream, the probe send on several
        raise UsageError("--streams: jtr run measures one stream of %s; for several, run "
                         "jtr %s --streams N and jtr %s --streams N yourself"
                         % (probe, p.partner, probe))
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
    word, (given, second) = own_cpus(probe, args)
    if cpus and given is not None:
        raise UsageError("-c %s and %s %s both say where %s runs; give one"
                         % (format_cpulist(cpus), word, given, probe))
    if cpus and len(cpus) != 1:
        raise UsageError("-c %s: %s measures one CPU; give one" % (format_cpulist(cpus), probe))
    if given is not None and given.strip() == "-1":
        raise UsageError("%s -1: jtr run pins every measuring thread (the tracer follows "
                         "them); give a CPU or leave %s out" % (word, word))
    cpu = cpus[0] if cpus else (_cpu(given, word) if given is not None else default_cpu())
    p.args = args
    if probe == "null":
        if given is None:
            p.args += ["-c", str(cpu)]
        p.sides = {"null": [cpu]}
    elif probe == "send":
        plan_send(p, cpu, given, second)
    elif probe == "ping":
        mine = plan_ping(p, cpu, given, second)
        peer = partner_cpu if partner_cpu is not None else other_cpu(set(mine))
        p.partner_args = transport_args(args) + ["-c", str(peer)]
        length = find_option(args, "-m", "--len")
        kind = find_option(args, "-T", "--transport") or "udp"
        if kind == "shm" and length is not None and length.isdigit() and \
                int(length) > SHM_SLOT:
            p.partner_args += ["-m", length]
        p.partner_args += fifo_args(args)
        p.sides = {"ping": mine, "pong": [peer]}
    else:   # pub: the subscriber measures the latency
        if given is None:
            p.args += ["-c", str(cpu)]
        peer = partner_cpu if partner_cpu is not None else other_cpu({cpu})
        # the subscriber checks every payload: a run whose messages changed on
        # the way is not a valid measurement (results/validity.py)
        p.partner_args = transport_args(args) + ["--verify", "-c", str(peer)] + fifo_args(args)
        kind = find_option(args, "-T", "--transport") or "udp"
        p.wait_ready = kind in DATAGRAM_TRANSPORTS
        p.measured_by = P.BY_TOOL[probe].measured_by
        p.sides = {"pub": [cpu], "sub": [peer]}
    if p.partner and p.sides[p.partner] == p.sides[probe][:1] and len(online_cpus()) > 1:
        p.notices.append("%s and %s share CPU %d" % (probe, p.partner, p.sides[probe][0]))
    return p


def plan_send(p, cpu, given, drain):
    """send's sides: the timed loops on @cpu, the drain thread on @drain (its CPU
    text or None: another CPU), given to send as -c CPU,DRAIN when jtr chose
    either."""
    if "--no-drain" in p.args:
        if given is None:
            p.args += ["-c", str(cpu)]
        p.sides = {"send": [cpu]}
        return
    d = _cpu(drain, "the drain CPU") if drain is not None else other_cpu({cpu})
    if given is None or drain is None:
        p.args += ["-c", "%d,%d" % (cpu, d)]
    p.sides = {"send": [cpu], "drain": [d]}


def plan_ping(p, cpu, given, snd):
    """ping's CPUs: the receiving thread on @cpu, the sending one on @snd (its CPU
    text, or None or -1: beside the receiving one), given to ping as -c
    RECV,SEND when jtr chose either; the ping side's CPUs."""
    if has_flag(p.args, "-1", "--one-thread"):
        if given is None:
            p.args += ["-c", str(cpu)]
        return [cpu]
    unpinned = snd is None or snd.strip() == "-1"
    s = cpu if unpinned else _cpu(snd, "the sending CPU")
    if given is None or unpinned:
        p.args += ["-c", "%d,%d" % (cpu, s)]
    if unpinned:
        p.notices.append("ping's sending thread is pinned to CPU %d beside the receiving "
                         "one (it spins the last 100 us before each send: -1 takes one "
                         "thread, -c %d,CPU another CPU)" % (s, cpu))
    return sorted({cpu, s})
