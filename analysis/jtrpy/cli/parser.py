# SPDX-License-Identifier: GPL-2.0-only
"""parser - the option layer every Python subcommand is built on: argparse with
jtr's error lines, help layout and value grammar.

Like the C programs (lib/jtr_probe.c), a command's parser
- prints help as "usage:", the description, "options:" (-d, --duration DURATION
  with long-only options indented under the long names) and "examples:";
- refuses bad input with one line and exit status 2, naming the option, the
  value and the fix: "jtr compare: --seed x: 'x' is not a count; ...",
  "unknown option '--frob'; see 'jtr compare --help'", "option '-o' needs a value";
- reads every value with the one grammar of values.py (docs/values.md), and
  takes --opt=value as well as --opt value; no abbreviations of long options.

The option types are callables for add_argument(type=...); those of this module
name the option in their errors and may warn (a bare number in an option's
older unit), which plain type functions cannot.
"""
import argparse
import os
import re
import shlex
import sys

from .. import values
from ..errors import UsageError
from ..units import shown
from ..vocab import BACKENDS

HELP_WIDTH = 80
HELP_COLUMN = 28

# jtr's one option alphabet, the mirror of lib/jtr_opts.h (test_parity.py checks
# the two agree): in every C program and every subcommand that has one of these
# options, its letter has this long name, this kind of value and this meaning,
# and no other option takes the letter. (letter, long name, metavar, meaning)
ALPHABET = (
    ("-c", "--cpus", "LIST", "the CPUs (a cpulist; the measuring thread's first)"),
    ("-d", "--duration", "DURATION", "how long (NUMBER[UNIT])"),
    ("-r", "--rate", "RATE", "messages per second"),
    ("-n", "--count", "COUNT", "how many"),
    ("-m", "--len", "BYTES", "a message's size"),
    ("-f", "--fifo", "PRIO", "SCHED_FIFO priority"),
    ("-o", "--output", "DIR", "the results folder"),
    ("-q", "--quiet", None, "nothing on stdout but what was asked for"),
    ("-T", "--transport", "KIND", "the transport"),
    ("-P", "--addr", "ADDR", "the peer's address"),
)
ALPHABET_LONG = {short: long for short, long, _, _ in ALPHABET}

# the letters the C programs and jtr suite still take in the meaning they had
# before the alphabet, for one release, with a line on stderr ("jtr ping: -a is
# now -c (...); -a goes in the next release"): {program: {old letter: now}}
# (docs/compat.md; tests/test_alphabet.py runs each)
OLD_LETTERS = {
    "gap": {"-j": "-n"},
    "null": {"-r": "--runs", "-d": "--desc"},
    "send": {"-r": "--pairs", "-d": "--desc", "-a": "--drain-cpu"},
    "ping": {"-a": "-c", "-A": "--send-cpu"},
    "pong": {"-a": "-c"},
    "pub": {"-a": "-c"},
    "sub": {"-a": "-c", "-f": "--fast"},
    "ipc": {"-s": "-m", "-m": "--methods", "-r": "--readers"},
    "suite": {"-r": "--runs"},
    "maxrate": {"-a": "-c", "-A": "--pub-cpu"},
    "duplex": {"-a": "-c", "-A": "--pub-cpu"},
}


def shared(letter, *more):
    """The option strings of the alphabet's @letter ("-c" -> "-c", "--cpus"), then
    @more long names the command also takes (an older one)."""
    return (letter, ALPHABET_LONG[letter]) + more


def old_letter(prog, letter, now, what):
    """The line of a letter taken in its old meaning (the C programs' jtr_opt_old)."""
    print("%s: %s is now %s (%s); %s goes in the next release" % (prog, letter, now, what,
                                                                  letter), file=sys.stderr)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The C programs' layout: '-d, --duration DURATION', long-only options under
    the long names, descriptions and epilogs kept as written."""

    def __init__(self, prog):
        super().__init__(prog, max_help_position=HELP_COLUMN, width=HELP_WIDTH)

    def _format_action_invocation(self, action):
        if not action.option_strings:
            return super()._format_action_invocation(action)
        names = ", ".join(action.option_strings)
        if action.nargs != 0:
            names += " " + self._format_args(action, self._get_default_metavar_for_optional(
                action))
        if all(o.startswith("--") for o in action.option_strings):
            names = "    " + names
        return names


class OptionType:
    """A value type that knows the grammar's messages; parse() raises UsageError."""

    def parse(self, text, opt, prog):
        raise NotImplementedError

    def __call__(self, text):      # used as a plain type (defaults, tests)
        return self.parse(text, None, None)


class Duration(OptionType):
    """A duration in ns in [lo_ns, hi_ns]. @legacy_unit: the unit a bare number
    had before the one grammar ("ns", "us", "ms"): a bare non-zero number is still
    read in it, with a warning saying to write the unit."""

    def __init__(self, lo_ns=0, hi_ns=values.U64_MAX, legacy_unit=None):
        self.lo, self.hi, self.legacy = lo_ns, hi_ns, legacy_unit

    def parse(self, text, opt, prog):
        if not self.legacy:
            return values.parse_duration_ns(text, self.lo, self.hi)
        ns = values.parse_duration_ns(text, self.lo, self.hi, values.UNITS_NS[self.legacy])
        if re.fullmatch(r"\d+(\.\d+)?", text) and float(text) != 0:
            warn(prog, "%s %s: a bare number here still means %s (as before); write %s%s "
                 "\u2014 a bare duration is in seconds everywhere else in jtr, and will be "
                 "here in a later version" % (opt, text, self.legacy, text, self.legacy))
        return ns


class Count(OptionType):
    """A count in [lo, hi], or the one @word that may stand for one (jtr duplex's
    -r max), given back as is."""

    def __init__(self, lo=0, hi=values.U64_MAX, word=None):
        self.lo, self.hi, self.word = lo, hi, word

    def parse(self, text, opt, prog):
        if self.word is not None and text == self.word:
            return text
        return values.parse_count(text, self.lo, self.hi)


class CountList(OptionType):
    """A comma-separated list of at most MAX_LIST counts (values.parse_count) in
    [lo, hi]: --sizes 64,128,1K."""
    MAX_LIST = 32

    def __init__(self, lo, hi, example):
        self.lo, self.hi, self.example = lo, hi, example

    def parse(self, text, opt, prog):
        items = text.split(",")
        if not text or "" in items:
            raise UsageError("give a comma-separated list, e.g. %s" % self.example)
        if len(items) > self.MAX_LIST:
            raise UsageError("at most %d values" % self.MAX_LIST)
        return [values.parse_count(w, self.lo, self.hi) for w in items]


class Size(OptionType):
    def __init__(self, lo=0, hi=values.U64_MAX):
        self.lo, self.hi = lo, hi

    def parse(self, text, opt, prog):
        return values.parse_size(text, self.lo, self.hi)


class Percent(OptionType):
    def __init__(self, lo=0.0, hi=100.0):
        self.lo, self.hi = lo, hi

    def parse(self, text, opt, prog):
        return values.parse_percent(text, self.lo, self.hi)


class Int(OptionType):
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def parse(self, text, opt, prog):
        return values.parse_int(text, self.lo, self.hi)


class CpuList(OptionType):
    """A CPU list, every CPU in it online (sorted list of ints)."""

    def __init__(self, online=None):
        self.online = online        # a function giving the online CPUs, or None

    def parse(self, text, opt, prog):
        cpus = values.parse_cpulist(text)
        online = self.online() if self.online else None
        if online is not None:
            off = [c for c in cpus if c not in online]
            if off:
                raise UsageError("CPU %d is not online; online CPUs: %s"
                                 % (off[0], values.format_cpulist(online)))
        return cpus


class Listen(OptionType):
    """ADDR:PORT, :PORT or PORT (address 0.0.0.0; [ADDR]:PORT for IPv6): (addr, port)."""

    def parse(self, text, opt, prog):
        m = re.fullmatch(r"(?:\[([0-9A-Fa-f:.]+)\]|([^:\[\]]*)):?([0-9]{1,5})", text) \
            if ":" in text else re.fullmatch(r"()()([0-9]{1,5})", text)
        if not m or not 1 <= int(m.group(3)) <= 65535:
            raise UsageError("give ADDR:PORT, e.g. 127.0.0.1:9477, or :9477 for every "
                             "address (a port is 1 to 65535)")
        host = m.group(2) or ""
        if not re.fullmatch(r"[A-Za-z0-9.-]*", host):
            raise UsageError("'%s' is not an address: give a host name, an IPv4 address or "
                             "[IPv6] before the port, e.g. 127.0.0.1:9477" % shown(host))
        return (m.group(1) or host or "0.0.0.0", int(m.group(3)))


class Choice(OptionType):
    """One of a few words: "use ebpf, perf or auto"."""

    def __init__(self, *names):
        self.names = names

    def parse(self, text, opt, prog):
        if text not in self.names:
            raise UsageError("use %s" % words(self.names, "or"))
        return text


class OutputPath(OptionType):
    """Where a command writes: a folder (-o DIR) or a file (-o FILE, --hlog FILE);
    '' is refused, as the C programs refuse it (lib/jtr_out.c). Whether it can be
    written is checked where it is written (results/result.py for folders)."""

    def __init__(self, kind="folder", example="run1"):
        self.kind, self.example = kind, example

    def parse(self, text, opt, prog):
        if not text:
            raise UsageError("give a %s name, e.g. %s %s" % (self.kind, opt or "-o",
                                                             self.example))
        return text


class Name(OptionType):
    """A name (a quantity, ...): any word but ''."""

    def __init__(self, example):
        self.example = example

    def parse(self, text, opt, prog):
        if not text:
            raise UsageError("give a name, e.g. %s %s" % (opt, self.example))
        return text


class Words(OptionType):
    """A comma-separated list of some of @names (and @extra(word) words)."""

    def __init__(self, names, extra=None):
        self.names, self.extra = names, extra

    def parse(self, text, opt, prog):
        got = [w for w in (text or "").split(",") if w]
        bad = [w for w in got if w not in self.names and not (self.extra and self.extra(w))]
        if bad or not got:
            raise UsageError("use some of %s, comma-separated" % ",".join(self.names))
        return got


class ShellSplit(OptionType):
    """OPTS: one shell-quoted string of options, as words (use with
    action="extend" to add up several)."""

    def parse(self, text, opt, prog):
        try:
            return shlex.split(text)
        except ValueError as e:
            raise UsageError("%s; quote the options as one string, e.g. '--drop-every 7'" % e)


def words(names, last="and"):
    """'a, b and c'."""
    names = list(names)
    return names[0] if len(names) == 1 else "%s %s %s" % (", ".join(names[:-1]), last,
                                                         names[-1])


def warn(prog, text):
    """'jtr CMD: warning: text' on stderr."""
    print("%s: warning: %s" % (prog or "jtr", text), file=sys.stderr)


# the callbacks a command hands its job for the lines due while it works
# (drivers/tune.py, drivers/ab.py)

def say(line):
    """A line on stdout as a job works (it may run long: seen at once)."""
    print(line, flush=True)


def note(line):
    """A line on stderr, after what stdout holds."""
    sys.stdout.flush()
    print(line, file=sys.stderr)


class OldLetter(argparse.Action):
    """A letter taken in its old meaning: the value goes where the new option's
    does, and old_letter's line is printed (add_old_letter)."""

    def __init__(self, option_strings, dest, now=None, what=None, **kw):
        super().__init__(option_strings, dest, **kw)
        self.now, self.what = now, what

    def __call__(self, parser, namespace, values, option_string=None):
        old_letter(parser.prog, option_string, self.now, self.what)
        setattr(namespace, self.dest, values)


def add_old_letter(p, letter, now, what, **kw):
    """@letter, taken for one release as the option @now (its dest) with the line
    of old_letter; not in the help but in its notes (OLD_LETTERS lists it)."""
    p.add_argument(letter, dest=now.lstrip("-").replace("-", "_"), action=OldLetter, now=now,
                   what=what, help=argparse.SUPPRESS, **kw)


class JtrParser(argparse.ArgumentParser):
    """argparse with jtr's help layout and one-line errors (UsageError, exit 2)."""

    def __init__(self, prog, usage=None, description=None, examples=None, notes=None,
                 add_help=True):
        epilog = "\n\n".join(x.strip("\n") for x in (notes, "examples:\n" + examples.strip("\n")
                                                    if examples else None) if x)
        super().__init__(prog=prog, usage=usage, description=description, epilog=epilog or None,
                         formatter_class=HelpFormatter, allow_abbrev=False, add_help=False)
        if add_help:
            self.add_argument("-h", "--help", action="help", help="this text")

    def add_operands(self, dest, metavar, help, nargs="*"):
        """The words after the options (results, folders, a profile), listed under
        "arguments:" in the help; the command checks how many it got, to say so
        in its own words."""
        if not hasattr(self, "_operands"):
            self._operands = self.add_argument_group("arguments")
        self._operands.add_argument(dest, nargs=nargs, metavar=metavar, help=help)

    def parse_known_args(self, args=None, namespace=None):
        args = self._values_attached(sys.argv[1:] if args is None else list(args))
        # the option names as typed, for the errors (-c or --cpus)
        self._typed = {w.split("=")[0] if w.startswith("--") else w[:2] for w in args
                       if w.startswith("-")}
        return super().parse_known_args(args, namespace)

    def _values_attached(self, args):
        """An option that takes a value takes the next word, whatever it is, as
        getopt does for the C programs (`--pub '--bogus'`, `-c -1`): argparse
        would take a word starting with '-' for an option, so the two are
        joined (`--pub=--bogus`, `-c-1`) before it looks."""
        out, i = [], 0
        while i < len(args):
            a = args[i]
            act = self._option_string_actions.get(a)
            if a == "--":
                return out + args[i:]
            if act is not None and act.nargs is None and i + 1 < len(args) and \
                    args[i + 1].startswith("-") and args[i + 1] != "--":
                out.append(a + ("=" if a.startswith("--") else "") + args[i + 1])
                i += 2
                continue
            out.append(a)
            i += 1
        return out

    # the errors argparse finds, in the words of the C programs
    def error(self, message):
        raise UsageError(self.jtr_message(message))

    def jtr_message(self, message):
        see = "see '%s --help'" % self.prog
        m = re.match(r"unrecognized arguments: (.*)", message)
        if m:
            word = m.group(1).split(" ")[0]
            if word.startswith("-") and word != "-":
                return "unknown option '%s'; %s" % (word.split("=")[0], see)
            return "unexpected argument '%s'; %s" % (word, see)
        m = re.match(r"argument (\S+?)(?:/\S+)?: expected (?:one|\d+) arguments?", message)
        if m:
            return "option '%s' needs a value" % m.group(1)
        m = re.match(r"argument (?:\S+/)?(\S+): ignored explicit argument '(.*)'", message)
        if m:       # --opt=value: the long name is the one given
            return "option '%s' takes no value ('%s' given)" % (m.group(1), m.group(2))
        m = re.match(r"argument (\S+?)(?:/\S+)?: not allowed with argument (\S+?)(?:/\S+)?$",
                     message)
        if m:
            return "%s cannot go with %s; %s" % (m.group(1), m.group(2), see)
        m = re.match(r"the following arguments are required: (.*)", message)
        if m:
            return "missing %s; %s" % (m.group(1), see)
        m = re.match(r"argument (\S+?)(?:/\S+)?: invalid choice: '(.*?)' \(choose from (.*)\)",
                     message)
        if m:
            return "%s %s: use one of %s" % (m.group(1), m.group(2),
                                             m.group(3).replace("'", ""))
        return message

    def _get_value(self, action, arg_string):
        """Our option types: 'OPT VALUE: what is wrong' (the C programs' form)."""
        if isinstance(action.type, OptionType):
            typed = [o for o in action.option_strings if o in getattr(self, "_typed", ())]
            opt = (typed or action.option_strings or [action.metavar])[0]
            try:
                return action.type.parse(arg_string, opt, self.prog)
            except UsageError as e:
                raise argparse.ArgumentError(None, "%s %s: %s" % (opt, shown(arg_string) or "''",
                                                                  e))
        return super()._get_value(action, arg_string)


# --- option groups more than one command shares ------------------------------

OUTPUT_RULE = ("a new folder is created (its parent must exist); an existing one is "
               "written into, and what an earlier result left there (events.bin, "
               "attribution.txt, ...) is removed")


def add_output(p, what="results folder (default results/DATE-HOST-%(tool)s)", tool=None,
               metavar="DIR"):
    """-o, --output DIR (or FILE, with @metavar "FILE"): every command's -o, one
    type (OutputPath: '' refused); @what is its help, %(tool)s the tool's name.
    The folder itself is checked and made by results/result.py (new_results_dir,
    make_output_dir, write_result_folder), in the C programs' words."""
    kind = "file" if metavar == "FILE" else "folder"
    p.add_argument(*shared("-o"), metavar=metavar,
                   type=OutputPath(kind, "out.json" if kind == "file" else "run1"),
                   help=what % {"tool": tool})


GATE_OPTIONS = ("--max-latency", "--max-lost", "--junit")


def add_gates(p, lost=True):
    """--max-latency DUR, --max-lost PCT (where a sample is CPU time, @lost) and
    --junit FILE: the gates of jtr run and of jtr gap and jtr wake alone, judged
    by drivers/gates.py in one place; check_junit_path checks --junit's folder."""
    p.add_argument("--max-latency", metavar="DUR", type=Duration(0, 3600 * 10 ** 9),
                   help="exit 1 when a measured CPU's largest sample exceeds DUR (e.g. "
                        "100us; 0 to 1h), naming the causes of the outliers beyond it")
    if lost:
        p.add_argument("--max-lost", metavar="PCT", type=Percent(0, 100),
                       help="exit 1 when a measured CPU lost more than PCT of the time to "
                            "outliers (e.g. 0.5%%), naming the causes of that time")
    p.add_argument("--junit", metavar="FILE",
                   help="write a JUnit XML report for CI (Jenkins, GitLab, ...): a testcase "
                        "per gate per CPU, failures with the value, the limit and the causes")


def check_junit_path(path):
    """UsageError unless --junit's @path is a file name in a folder that exists
    and may be written (checked before the run, not after it)."""
    if path is None:
        return
    if not path:
        raise UsageError("--junit '': give a file name, e.g. --junit jtr-junit.xml")
    if path.endswith("/") or os.path.isdir(path):
        raise UsageError("--junit %s: a folder; give a file name in it, e.g. %s" % (
            path, os.path.join(path, "jtr-junit.xml")))
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise UsageError("--junit %s: no folder %s; create it first, or give a file in an "
                         "existing folder" % (path, folder))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError("--junit %s: cannot write in %s; give a file in a folder you may "
                         "write" % (path, folder))


def add_backend(p):
    """--backend KIND: the tracer's backend."""
    p.add_argument("--backend", metavar="KIND", type=Choice(*BACKENDS, "auto"), default="auto",
                   help="ebpf (jtr trace), perf (perf record on the same tracepoints) or "
                        "auto (default: eBPF, else perf where BPF is not available)")


def add_attribution_options(p, default_slack):
    """--slack DUR and --top N: how outliers are charged and how many are shown."""
    p.add_argument("--slack", metavar="DUR", type=Duration(0, 3600 * 10 ** 9, legacy_unit="us"),
                   help="how long before an outlier an event may start and still be charged "
                        "to it (default %s; see docs/attribution.md)" % default_slack)
    p.add_argument("--top", metavar="N", type=Count(0, 100000),
                   help="worst outliers listed with their causal chains (default 20)")
    p.add_argument("--by", metavar="WHAT", type=Choice("comm", "pid"), default="comm",
                   help="a task's cause in the table: one row per comm with how many tasks "
                        "(default: comm, 'bash (7 tasks)'), or one row per task (pid)")


def add_cross_check_options(p, attribute=False):
    """--cross-check, its --cross-check-min DUR and (jtr attribute) --sched-data."""
    p.add_argument("--cross-check", action="store_true",
                   help="compare the attribution with perf sched timehist of the same "
                        "window and CPUs: outliers charged to a task timehist does not "
                        "show, task slices timehist shows that were charged to something "
                        "else, and the totals (see docs/attribution.md)" +
                        ("; stored as \"cross_check\" in result.json. Exit status 0 when "
                         "the check ran, disagreements or not" if attribute else
                         "; records the scheduler's events with perf sched record beside "
                         "the tracer, kept as sched.data"))
    if attribute:
        p.add_argument("--sched-data", metavar="PATH",
                       help="perf sched record data to compare with (default "
                            "RESULTS_DIR/sched.data, recorded by jtr run --cross-check)")
    p.add_argument("--cross-check-min", metavar="DUR",
                   type=Duration(0, 10 ** 12, legacy_unit="us"),
                   help="shortest task slice reported as missed by the attribution "
                        "(default: the outlier threshold, at least 1us)")


def add_accept_invalid(p, what="judge"):
    """--accept-invalid: @what results that are not a valid measurement (their
    result.json validity: late sends, a threshold from a slow warm-up, lost
    messages) all the same (jtr compare, ab, fleet, advise)."""
    p.add_argument("--accept-invalid", action="store_true",
                   help="%s results that are not a valid measurement all the same (they "
                        "did not keep their schedule, their threshold came from a slow "
                        "warm-up, they lost messages; refused by default)" % what)


def add_no_tuned(p, when=""):
    """--no-tuned (dest via_tuned: None by default, False when given): the profile
    is applied by the running tuned daemon unless told (jtr ab, advise --prove)."""
    p.add_argument("--no-tuned", action="store_false", dest="via_tuned", default=None,
                   help="%sapply the profile with jtr's own applier even where the tuned "
                        "daemon runs (by default the daemon applies it, as with 'jtr tune "
                        "apply')" % when)


def add_quantity(p, mixed=False):
    """--quantity NAME: which of a result's quantities (results/quantity.py) the
    numbers are about; with @mixed also --mixed-quantities (jtr compare)."""
    p.add_argument("--quantity", metavar="NAME",
                   type=Name("rtt_from_send"),
                   help="the quantity to use, one of the result's (default: its tool's: gap, "
                        "null, the first clock source, send's send runs, ping's "
                        "rtt_from_intended, sub's latency_from_send, pub's send_call); "
                        "a result that has none of that name is refused, naming those it "
                        "has (docs/result-format.md, Quantities)")
    if mixed:
        p.add_argument("--mixed-quantities", action="store_true", dest="mixed",
                       help="compare two quantities that measure different things (a round "
                            "trip against a loop time), which is refused without it")


class SubPubCpus(OptionType):
    """-c SUB[,PUB]: the subscriber's CPU, then the publisher's: (sub, pub)."""

    def parse(self, text, opt, prog):
        words = text.split(",")
        if len(words) > 2:
            raise UsageError("give SUB or SUB,PUB: the subscriber's CPU, then the "
                             "publisher's (e.g. -c 1,0)")
        cpus = [values.parse_int(w, 0, 4095) for w in words]
        return cpus[0], (cpus[1] if len(cpus) > 1 else None)


class StoreSubPub(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        namespace.sub_cpu = values[0]
        if values[1] is not None:
            namespace.pub_cpu = values[1]


def add_sub_pub_cpus(p, sub_what, pub_what):
    """-c SUB[,PUB] (the alphabet's CPUs, the measuring side's first), --sub-cpu and
    --pub-cpu alone, and the old -a (-c) and -A (--pub-cpu) of jtr maxrate and
    jtr duplex: sub_cpu and pub_cpu."""
    p.add_argument(*shared("-c"), metavar="LIST", type=SubPubCpus(), action=StoreSubPub,
                   help="SUB[,PUB]: pin %s, then %s" % (sub_what, pub_what))
    p.add_argument("--sub-cpu", metavar="CPU", type=Count(0, 4095), help="pin %s alone"
                   % sub_what)
    p.add_argument("--pub-cpu", metavar="CPU", type=Count(0, 4095), help="pin %s alone"
                   % pub_what)
    add_old_letter(p, "-a", "--sub-cpu", "-c SUB: the subscriber's CPU", type=Count(0, 4095),
                   metavar="CPU")
    add_old_letter(p, "-A", "--pub-cpu", "the publisher's CPU", type=Count(0, 4095),
                   metavar="CPU")


def add_partner_cpus(p, online):
    """--pong-cpu CPU and --sub-cpu CPU: where the other end of ping and pub runs
    when jtr starts it (@online: the function giving the online CPUs)."""
    for opt, probe, partner in (("--pong-cpu", "ping", "pong"), ("--sub-cpu", "pub", "sub")):
        p.add_argument(opt, metavar="CPU", type=CpuList(online),
                       help="%s: the CPU of the jtr %s started beside it (default: another "
                            "CPU than %s's)" % (probe, partner, probe))
