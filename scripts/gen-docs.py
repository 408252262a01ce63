#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""gen-docs - jtr's man pages and its bash and zsh completion, made from the
commands' own help at build time, so they say what --help says:

  scripts/gen-docs.py man DIR [--bin DIR] [--prefix PREFIX]
        jtr.1 and jtr-COMMAND.1 for every command (like git and perf)
  scripts/gen-docs.py completion DIR [--bin DIR]
        DIR/jtr (bash) and DIR/_jtr (zsh)

The commands are those of analysis/jtrpy/cli/main.py's COMMANDS table: a
Python command's help comes from its parser (make_parser), a C program's from
`BIN/jtr-NAME --help` (build/bin by default). Both print one layout
(cli/parser.py HelpFormatter): "usage:", the description, headed sections
("options:", "transport:", ...) of entries ("  -d, --duration DURATION  text"),
notes and "examples:"; this script reads that layout once for both. The C
programs are pages of their own commands (jtr-gap(1) is `jtr gap`, which runs
PREFIX/libexec/jtr/jtr-gap): they get no second page under the program's name.
"""
import argparse
import contextlib
import datetime
import io
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "analysis"))

from jtrpy import __version__  # noqa: E402
from jtrpy.cli import main as jtr_main  # noqa: E402
from jtrpy.cli.parser import Choice, CpuList, Words  # noqa: E402
from jtrpy.drivers.plan import PROBES  # noqa: E402

HEADING = re.compile(r"^([A-Za-z][A-Za-z ]{0,30}):$")
# a metavar: DURATION, N, A.B.C.D (upper case, digits, _ . -)
METAVAR = re.compile(r"^[A-Z][A-Z0-9_.-]*(\[,[A-Z0-9_.-]+\.\.\.\])?$")
OPTION = re.compile(r"^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*,?$")
# an option whose value is optional and comes after '=': --legacy-output[=STYLE]
OPTIONAL_VALUE = re.compile(r"^(--[A-Za-z0-9][A-Za-z0-9-]*)\[=([A-Z][A-Z_]*)\],?$")
# commands whose line goes on to a probe and its options: jtr run [PROBE] takes
# gap's when no probe is named, jtr ab takes them after "-- PROBE"
FORWARDS = {"run": "gap", "ab": None}
# what an option's value is, by its metavar, for completion: a folder or a file
DIR_METAVARS = {"DIR"}
FILE_METAVARS = {"FILE", "PATH", "LOG", "RESULT", "RESULTS_DIR"}
# values that are CPUs: completed with the online CPUs
CPU_METAVARS = {"CPU", "CPU[,CPU...]"}
CPU_LIST_OPTIONS = {"-c", "--cpus"}
# the operands that are a tuning profile's name: completed with `jtr tune list`'s
PROFILE_OPERANDS = {"tune apply": "profile", "ab": "profile"}
ENVIRONMENT = [
    ("JTR_LIBEXEC", "the folder of the measuring programs (jtr-gap, jtr-trace, ...), "
                    "instead of PREFIX/libexec/jtr"),
    ("JTR_PROFILE_DIRS", "colon-separated folders searched for tuning profiles "
                         "(NAME/tuned.conf), instead of jtr's own and tuned's"),
    ("JTR_STATE_DIR", "where jtr tune keeps its snapshot and the active profile's name "
                      "(default /run/jtr)"),
    ("JTR_TUNED_VERSION", "the tuned version whose folders jtr uses (2.23 and later: "
                          "/usr/lib/tuned/profiles, /etc/tuned/profiles; earlier: "
                          "/usr/lib/tuned, /etc/tuned), instead of the installed tuned's "
                          "(tuned-adm --version)"),
]


# --------------------------------------------------------------- reading help

class Entry:
    """One item of a help section: "  -d, --duration DURATION  text" (an option),
    "  PROFILE  text" (an operand) or "    apply  text" (an action)."""

    def __init__(self, head, text):
        self.head, self.text = head, text
        self.options = []           # [(option, metavar or None)]
        names = []
        for tok in head.split():
            opt = OPTIONAL_VALUE.match(tok)
            if opt:             # no value to complete after a space: an option alone
                names.append(opt.group(1))
            elif OPTION.match(tok):
                names.append(tok.rstrip(","))
            elif METAVAR.match(tok) and names:
                self.options += [(n, tok) for n in names]
                names = []
        self.options += [(n, None) for n in names]


class Help:
    """A command's --help text read into usage lines, description and sections."""

    def __init__(self, text):
        lines = text.rstrip("\n").split("\n")
        self.usage = []
        while lines and (lines[0].startswith("usage: ") or
                         (self.usage and lines[0].startswith("       "))):
            self.usage.append(lines.pop(0)[7:])
        self.sections = [(None, [])]        # (heading, [("para", text) | ("pre", lines)
        in_list = False                     # | ("entry", Entry)])
        prev_blank = True
        entry = None
        for line in lines:
            items = self.sections[-1][1]
            stripped = line.strip()
            indent = len(line) - len(line.lstrip(" "))
            if not stripped:
                prev_blank, entry = True, None
                continue
            m = HEADING.match(line)
            if m and prev_blank:
                self.sections.append((m.group(1), []))
                in_list, entry, prev_blank = True, None, False
                continue
            if indent == 0:
                if items and items[-1][0] == "para" and not prev_blank:
                    items[-1] = ("para", items[-1][1] + " " + stripped)
                else:
                    items.append(("para", stripped))
                in_list, entry = False, None
            elif entry is not None and indent > 8:
                entry.text = (entry.text + " " + stripped).strip()
            elif in_list and self.sections[-1][0] != "examples" and indent <= 6 and \
                    not (indent == 2 and stripped == "ACTION"):
                parts = re.split(r"\s{2,}", stripped, maxsplit=1)
                head, rest = parts[0], parts[1] if len(parts) > 1 else ""
                if head.startswith("-") and not rest:
                    # "-i, --drain-interval DUR how often": one space before the text
                    toks = head.split()
                    n = 0
                    while n < len(toks) and (OPTION.match(toks[n]) or
                                             (n and METAVAR.match(toks[n]))):
                        n += 1
                    head, rest = " ".join(toks[:n]), " ".join(toks[n:])
                entry = Entry(head, rest.strip())
                items.append(("entry", entry))
            else:
                if items and items[-1][0] == "pre" and not prev_blank:
                    items[-1][1].append(line)
                else:
                    items.append(("pre", [line]))
                entry = None
            prev_blank = False

    def entries(self, heading=None):
        return [it[1] for h, items in self.sections if heading in (None, h)
                for it in items if it[0] == "entry"]

    def options(self):
        """{option: metavar or None} of every option entry."""
        return {o: m for e in self.entries() for o, m in e.options}

    def actions(self):
        return [e.head for e in self.entries("actions")]


class Command:
    """A command of the COMMANDS table: its help, its actions' (jtr tune apply)
    and its other forms' (jtr trace --print)."""

    def __init__(self, name, summary, help_, actions=(), extra=(), parsers=None):
        self.name, self.summary, self.help = name, summary, help_
        self.actions = list(actions)        # [(action, Help)]
        self.extra = list(extra)            # [(title, Help)]
        self.parsers = parsers or {}        # {key: its argparse parser} (Python commands)

    def options(self):
        out = dict(self.help.options())
        for _, h in self.extra:
            out.update(h.options())
        return out


def parser_help(parser, args=()):
    """What @parser prints for `args --help`."""
    if not args:
        return parser.format_help()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            parser.parse_args(list(args) + ["--help"])
        except SystemExit:
            pass
    return buf.getvalue()


def program_help(bindir, name):
    """`BIN/jtr-NAME --help`; None when jtr-trace was not built (no clang, ...)."""
    path = os.path.join(bindir, "jtr-" + name)
    if name == "trace" and not os.path.exists(path):
        return None
    try:
        p = subprocess.run([path, "--help"], stdout=subprocess.PIPE, text=True, timeout=30)
    except OSError as e:
        sys.exit("gen-docs: %s: %s (build it first: make all)" % (path, e.strerror))
    if p.returncode != 0:
        sys.exit("gen-docs: %s --help failed (exit %d)" % (path, p.returncode))
    return p.stdout


def commands(bindir):
    """[Command] of every command jtr has, in the table's order."""
    out = []
    for name, summary, where in jtr_main.COMMANDS:
        if where is None:               # help, version: in jtr(1)
            continue
        if where == "exec":
            out.append(Command(name, summary, Help(program_help(bindir, name))))
            continue
        module = __import__("jtrpy.commands." + where, fromlist=["make_parser"])
        parser = module.make_parser("jtr " + name)
        h = Help(parser_help(parser))
        tracer = program_help(bindir, name) if name == "trace" else None
        if tracer:                      # the C tracer, and --print in Python
            out.append(Command(name, summary, Help(tracer), extra=[("jtr trace --print", h)],
                               parsers={name: parser}))
            continue
        subs = {a: p for g in parser._actions if isinstance(g, argparse._SubParsersAction)
                for a, p in g.choices.items()}
        out.append(Command(name, summary, h,
                           actions=[(a, Help(parser_help(parser, [a]))) for a in h.actions()],
                           parsers=dict({name: parser}, **{"%s %s" % (name, a): p
                                                          for a, p in subs.items()})))
    return out


# --------------------------------------------------------------- man pages

GLYPHS = {"\u2014": r"\(em", "\u2013": r"\(en", "\u2212": r"\-", "\u00b5": r"\(mc",
          "\u03bc": r"\(*m", "\u00d7": r"\(mu", "\u2265": r"\(>=", "\u2264": r"\(<=",
          "\u2026": "...", "\u2192": r"\(->", "\u2248": r"\(~~", "\u00b1": r"\(+-",
          "\u2018": r"\(oq", "\u2019": r"\(cq", "\u201c": r"\(lq", "\u201d": r"\(rq"}


def esc(text, literal=False):
    """@text for roff: backslashes, non-ASCII characters as glyph names, and with
    @literal (commands, options) '-' as the minus sign one can paste."""
    text = text.replace("\\", "\\e")
    if literal:
        text = text.replace("-", "\\-")
    out = "".join(GLYPHS.get(c, c) if ord(c) < 128 or c in GLYPHS else "\\[u%04X]" % ord(c)
                  for c in text)
    if not literal:     # a long list with no space ("a,b,c,d,...") may break after a comma
        out = re.sub(r",(?=\S)", ",\\:", out)
    return "\\&" + out if out[:1] in (".", "'") else out


def invocation(head):
    """'-d, --duration DURATION' with the options bold and the metavars italic."""
    out = []
    for tok in head.split():
        comma = "," if tok.endswith(",") else ""
        word = tok.rstrip(",")
        if OPTION.match(tok) or not METAVAR.match(word):
            out.append("\\fB%s\\fR%s" % (esc(word, True), comma))
        else:
            out.append("\\fI%s\\fR%s" % (esc(word, True), comma))
    return " ".join(out)


def synopsis(help_):
    out = [".nf"]
    for u in help_.usage:
        words = u.split(" ")
        n = 1
        while n < len(words) and re.fullmatch(r"[a-z][a-z-]*", words[n]):
            n += 1              # the command's words: "jtr tune apply"
        out.append(("\\fB%s\\fR %s" % (esc(" ".join(words[:n]), True),
                                       esc(" ".join(words[n:]), True))).rstrip())
    return out + [".fi"]


def section_body(items, command_pages=()):
    out = []
    for kind, item in items:
        if kind == "para":
            out += [".PP", esc(item)]
        elif kind == "pre":
            width = min(len(x) - len(x.lstrip()) for x in item)
            out += [".PP", ".RS 4", ".nf"] + [esc(x[width:], True) for x in item] + [".fi", ".RE"]
        elif item.head in command_pages:
            out += [".TP", "\\fBjtr\\-%s\\fR(1)" % esc(item.head, True), esc(item.text)]
        else:
            out += [".TP", invocation(item.head)] + ([esc(item.text)] if item.text else [])
    return out


def page_sections(help_, level=".SH", command_pages=()):
    out = []
    for heading, items in help_.sections:
        if heading is None:
            out += [level, "DESCRIPTION"] if level == ".SH" and items else []
            out += section_body(items)
            continue
        title = heading.upper() if level == ".SH" else heading[0].upper() + heading[1:]
        out += ['%s "%s"' % (level, esc(title))] + section_body(items, command_pages)
    return out


def page_header(name, date):
    return ['.\\" generated by scripts/gen-docs.py from the commands\' --help; do not edit',
            '.TH "%s" 1 "%s" "jtr %s" "jtr manual"' % (esc(name.upper(), True), date,
                                                      esc(__version__)),
            ".SH NAME"]


# EXIT STATUS: what every command returns (analysis/jtrpy/errors.py, the C
# programs' lib/jtr_probe.h), and what status 1 means for each besides a failure
EXIT_ZERO = "done"
EXIT_FAILED = ("something failed that was not the input: a program jtr runs, a file it "
               "cannot write, a kernel setting it cannot change (the line on stderr says "
               "what)")
EXIT_USAGE = ("bad usage or input: an unknown option, a value out of range, a missing or "
              "unreadable result; nothing was done, and one line on stderr names the value "
              "and the fix")
EXIT_INTERRUPTED = ("stopped by Ctrl-C, SIGTERM or SIGHUP: what was measured is kept, "
                    "marked partial")
EXIT_ONE = {
    "tune": "verify: the machine drifted from the applied profile (each difference listed); "
            "revert: a setting could not be restored; install-profiles: a profile of the "
            "same name was left as it was",
    "fleet": "with --fail-on-flagged, a host was flagged",
    "suite": "an item of the suite failed",
}
EXIT_130 = {
    "tune": "stopped by Ctrl-C, SIGTERM or SIGHUP: apply undoes what it changed",
}
# SEE ALSO beyond jtr(1): the pages of the tools each command stands beside
SEE_ALSO = {
    "run": ["jtr-attribute(1)", "jtr-trace(1)", "jtr-gap(1)", "jtr-wake(1)", "jtr-compare(1)",
            "oslat(8)", "cyclictest(8)", "rtla(1)", "perf(1)"],
    "attribute": ["jtr-run(1)", "jtr-trace(1)", "perf(1)", "rtla(1)"],
    "compare": ["jtr-run(1)", "jtr-ab(1)", "jtr-report(1)"],
    "trace": ["jtr-run(1)", "jtr-attribute(1)", "perf(1)", "rtla(1)"],
    "null": ["jtr-gap(1)", "jtr-run(1)", "oslat(8)"],
    "gap": ["jtr-run(1)", "jtr-null(1)", "oslat(8)", "rtla(1)"],
    "clock": ["jtr-gap(1)", "perf(1)"],
    "wake": ["jtr-run(1)", "cyclictest(8)", "rtla(1)"],
    "ping": ["jtr-pong(1)", "jtr-maxrate(1)", "jtr-run(1)", "sockperf(1)"],
    "pong": ["jtr-ping(1)", "sockperf(1)"],
    "pub": ["jtr-sub(1)", "jtr-duplex(1)", "jtr-maxrate(1)", "sockperf(1)"],
    "sub": ["jtr-pub(1)", "jtr-duplex(1)", "sockperf(1)"],
    "send": ["jtr-pub(1)", "jtr-run(1)", "sockperf(1)"],
    "ipc": ["jtr-pub(1)", "jtr-sub(1)", "sockperf(1)"],
    "maxrate": ["jtr-ping(1)", "jtr-pub(1)", "jtr-sub(1)", "sockperf(1)"],
    "duplex": ["jtr-pub(1)", "jtr-sub(1)", "sockperf(1)"],
    "tune": ["jtr-ab(1)", "jtr-advise(1)", "tuned-adm(8)"],
    "watch": ["jtr-trace(1)", "jtr-run(1)", "perf(1)"],
    "ab": ["jtr-tune(1)", "jtr-compare(1)", "jtr-advise(1)", "tuned-adm(8)"],
    "advise": ["jtr-tune(1)", "jtr-ab(1)", "jtr-run(1)", "tuned-adm(8)"],
    "ls": ["jtr-run(1)", "jtr-report(1)"],
    "export": ["jtr-import(1)", "jtr-run(1)"],
    "import": ["jtr-export(1)", "jtr-compare(1)", "oslat(8)", "cyclictest(8)"],
    "report": ["jtr-run(1)", "jtr-compare(1)"],
    "fleet": ["jtr-run(1)", "jtr-compare(1)", "jtr-watch(1)"],
    "suite": ["jtr-run(1)", "jtr-null(1)", "jtr-clock(1)", "jtr-gap(1)", "jtr-send(1)"],
}


def gate_options(cmd):
    """The limits whose help says they make the exit status 1 (--max-latency, ...)."""
    out = []
    for h in [cmd.help] + [x for _, x in cmd.extra] + [x for _, x in cmd.actions]:
        for e in h.entries():
            if re.search(r"\bexit (status )?1\b", e.text) and e.options and \
                    e.options[-1][0].startswith("--max-") and e.options[-1][0] not in out:
                out.append(e.options[-1][0])
    return out


def exit_status(cmd=None):
    """The EXIT STATUS section: 0, 1, 2 and 130, in the user's words."""
    one = EXIT_FAILED
    if cmd is not None:
        gates = gate_options(cmd)
        extra = [EXIT_ONE[cmd.name]] if cmd.name in EXIT_ONE else []
        if gates:
            extra.insert(0, "a gate failed: %s exceeded (the results are written all the "
                            "same)" % " or ".join(gates))
        if extra:
            one = "; ".join(extra) + "; or " + EXIT_FAILED
    else:
        one = ("a gate or threshold failed (--max-latency, --max-lost, "
               "--fail-on-flagged), tune verify found drift, or " + EXIT_FAILED)
    rows = [("0", EXIT_ZERO), ("1", one), ("2", EXIT_USAGE),
            ("130", EXIT_130.get(cmd.name, EXIT_INTERRUPTED) if cmd else EXIT_INTERRUPTED)]
    out = ['.SH "EXIT STATUS"']
    for code, what in rows:
        out += [".TP", "\\fB%s\\fR" % code, esc(what)]
    return out


def see_also(pages):
    """SEE ALSO: 'name(section)' words, bold names, one a line."""
    out = [".SH \"SEE ALSO\""]
    refs = []
    for ref in pages:
        name, sec = re.match(r"(.*)\((\d)\)$", ref).groups()
        refs.append("\\fB%s\\fR(%s)" % (esc(name, True), sec))
    return out + [",\n".join(refs)]


def command_page(cmd, date):
    name = "jtr-" + cmd.name
    out = page_header(name, date)
    out += ["%s \\- %s" % (esc(name, True), esc(cmd.summary)), ".SH SYNOPSIS"]
    out += synopsis(cmd.help)
    out += page_sections(cmd.help)
    for title, h in cmd.extra + [("jtr %s %s" % (cmd.name, a), h) for a, h in cmd.actions]:
        out += ['.SH "%s"' % esc(title.upper(), True)] + synopsis(h)
        out += page_sections(h, level=".SS")
    out += exit_status(cmd)
    out += see_also(["jtr(1)"] + SEE_ALSO.get(cmd.name, []))
    return "\n".join(out) + "\n"


def main_page(cmds, date, prefix):
    h = Help(jtr_main.usage())
    out = page_header("jtr", date)
    out += ["jtr \\- measure a CPU's jitter and say which kernel event caused each outlier",
            ".SH SYNOPSIS"] + synopsis(h)
    out += page_sections(h, command_pages={c.name for c in cmds})
    out += exit_status()
    out += [".SH ENVIRONMENT"]
    for var, what in ENVIRONMENT:
        out += [".TP", "\\fB%s\\fR" % esc(var, True), esc(what)]
    files = [
        (prefix + "/libexec/jtr/jtr-*", "the measuring programs and the tracer"),
        (prefix + "/lib/jtr/jtrpy", "the Python front end"),
        (prefix + "/share/jtr/tuning-profiles", "jtr's tuning profiles, as jtr tune reads "
                                                "them, and the jtr-variables.conf template"),
        ("/usr/lib/tuned/profiles/jtr-*" if prefix == "/usr" else "/etc/tuned/profiles/jtr-*",
         "the profiles where tuned 2.23 and later finds them (" + (
             "linked there on install; " if prefix == "/usr" else
             "copied there by jtr tune install-profiles; ") + "before 2.23: " + (
             "/usr/lib/tuned/jtr-*)" if prefix == "/usr" else "/etc/tuned/jtr-*)")),
        ("/etc/tuned/jtr-variables.conf", "isolated_cores for tuned-adm's jtr-isolate and "
                                          "jtr-realtime"),
        (prefix + "/share/jtr/bpftrace", "bpftrace scripts for a quick look at one CPU"),
        (prefix + "/share/jtr/schemas", "JSON schemas of the result and comparison files"),
        (prefix + "/share/doc/jtr", "the documentation"),
        ("/run/jtr", "jtr tune's snapshot and the active profile's name"),
    ]
    out += [".SH FILES"]
    for path, what in files:
        out += [".TP", "\\fI%s\\fR" % esc(path, True), esc(what)]
    out += see_also(["jtr-%s(1)" % c.name for c in cmds] + [
        "cyclictest(8)", "oslat(8)", "rtla(1)", "tuned-adm(8)", "perf(1)", "sockperf(1)"])
    return "\n".join(out) + "\n"


WRITTEN = set()         # the files this run wrote


def write(path, text):
    """@path whole or not at all: a temporary file of this process renamed over it,
    so that a make install reading the folder while another make writes it again
    (the tests run several in one tree) never finds a file missing or half written."""
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    WRITTEN.add(os.path.basename(path))


def gen_man(cmds, outdir, prefix):
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    day = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc).date() if epoch \
        else datetime.date.today()
    date = day.isoformat()
    write(os.path.join(outdir, "jtr.1"), main_page(cmds, date, prefix))
    for c in cmds:
        write(os.path.join(outdir, "jtr-%s.1" % c.name), command_page(c, date))


# --------------------------------------------------------------- completion

def value_kind(metavar, option=None, text="", action=None):
    """What completes an option's value, as the completion scripts read it: dir,
    file, cpu (the online CPUs), one=A,B,C (one of these words), some=A,B,C (a
    comma-separated list of them), or word (anything: nothing is offered). From
    the option's parser where it has one (@action), else from its help @text:
    "shm, tcp, udp or unix (default udp)" offers those words."""
    if action is not None:
        t = action.type
        if isinstance(t, Choice):
            return "one=" + ",".join(t.names)
        if isinstance(t, Words):
            return "some=" + ",".join(t.names)
        if action.choices:
            return "one=" + ",".join(map(str, action.choices))
        if isinstance(t, CpuList):
            return "cpu"
    if metavar in DIR_METAVARS:
        return "dir"
    if metavar in FILE_METAVARS:
        return "file"
    if metavar in CPU_METAVARS or (metavar == "LIST" and option in CPU_LIST_OPTIONS):
        return "cpu"
    words = help_words(text)
    if words:
        return ("some=" if metavar == "LIST" else "one=") + ",".join(words)
    return "word"


def help_words(text):
    """The words an option's help begins with when it lists its values: "a, b or
    c", "a (default), b or c", "a, b, or all"; [] for any other help."""
    plain = re.sub(r"\([^()]*\)", "", text or "")
    m = re.match(r"\s*([a-z][a-z0-9_-]*(?:\s*,\s*[a-z][a-z0-9_-]*)*),?\s+or\s+"
                 r"([a-z][a-z0-9_-]*)(?=$|[\s:;.,])", plain)
    if not m:
        return []
    return [w.strip() for w in m.group(1).split(",")] + [m.group(2)]


def option_actions(parser):
    """{option string: argparse action} of @parser."""
    return {o: a for a in (parser._actions if parser else []) for o in a.option_strings}


def completion_keys(cmds):
    """[(key, {option: metavar}, [(option, first words of its help)], {option: value
    kind}, operand kind or None)] of every command and action: 'run', 'tune apply'."""
    out = []
    for c in cmds:
        helps = [(c.name, [c.help] + [x for _, x in c.extra])] + [
            ("%s %s" % (c.name, a), [h]) for a, h in c.actions]
        for key, hs in helps:
            acts = option_actions(c.parsers.get(key))
            entries = [e for h in hs for e in h.entries()]
            described, kinds = [], {}
            for e in entries:
                for o, m in e.options:
                    if (o, e.text) not in described:
                        described.append((o, e.text))
                    if m:
                        kinds.setdefault(o, value_kind(m, o, e.text, acts.get(o)))
            opts = {}
            for h in hs:
                opts.update(h.options())
            out.append((key, opts, described, kinds, PROFILE_OPERANDS.get(key)))
    return out


def first_words(text, n=60):
    text = re.split(r";\s|\s\(", text, maxsplit=1)[0].strip(" ;,:")
    return text if len(text) <= n else text[:n - 3].rsplit(" ", 1)[0] + "..."


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def fill(template, **fields):
    """@template with each @NAME@ replaced by fields[NAME]."""
    return re.sub(r"@([a-z]+)@", lambda m: fields[m.group(1)], template)


def kinds_text(kinds, operand):
    return " ".join(["%s:%s" % (o, k) for o, k in kinds.items()] +
                    (["@:" + operand] if operand else []))


def bash_completion(cmds):
    keys = completion_keys(cmds)
    opts = "\n".join("        %s) echo %s ;;" % (sh_quote(k), sh_quote(" ".join(o)))
                     for k, o, _, _, _ in keys)
    values = "\n".join("        %s) echo %s ;;" % (sh_quote(k), sh_quote(kinds_text(kinds, op)))
                       for k, _, _, kinds, op in keys)
    actions = "\n".join("        %s) echo %s ;;" % (c.name, sh_quote(" ".join(
        a for a, _ in c.actions))) for c in cmds if c.actions)
    return fill(BASH, version=__version__, commands=" ".join(c.name for c in cmds),
                       opts=opts, values=values, actions=actions, probes=" ".join(PROBES),
                       forwards=" ".join("%s:%s" % (c, p or "") for c, p in FORWARDS.items()))


def zsh_completion(cmds):
    keys = completion_keys(cmds)

    def zq(s):
        return sh_quote(s.replace("\\", "\\\\").replace(":", "\\:"))
    described = []
    for k, _, desc, _, _ in keys:
        pairs = " ".join(zq(o) if not d else sh_quote(
            o + ":" + first_words(d).replace("\\", "\\\\").replace(":", "\\:"))
            for o, d in desc)
        described.append("        %s) reply=(%s) ;;" % (sh_quote(k), pairs))
    values = "\n".join("        %s) echo %s ;;" % (sh_quote(k), sh_quote(kinds_text(kinds, op)))
                       for k, _, _, kinds, op in keys)
    actions = "\n".join("        %s) reply=(%s) ;;" % (c.name, " ".join(
        sh_quote(a + ":" + first_words(e.text)) for a, e in zip(
            [x for x, _ in c.actions], c.help.entries("actions")))) for c in cmds if c.actions)
    cmd_list = " ".join(sh_quote(c.name + ":" + first_words(c.summary, 70)) for c in cmds)
    return fill(ZSH, version=__version__, commands=cmd_list + " " + " ".join(
        sh_quote("%s:%s" % (name, first_words(desc))) for name, desc, where in
        jtr_main.COMMANDS if where is None),
        opts="\n".join(described), values=values, actions=actions,
        probes=" ".join(PROBES),
        forwards=" ".join("%s:%s" % (c, p or "") for c, p in FORWARDS.items()))


BASH = r"""# bash completion for jtr @version@: the commands, each command's options (and
# the probe's, after jtr run PROBE or jtr ab ... -- PROBE), files for operands.
# Generated by scripts/gen-docs.py from the commands' --help; do not edit.

_jtr_commands='@commands@'
_jtr_probes='@probes@'
# the commands whose line goes on to a probe, with the probe when none is named
_jtr_forwards='@forwards@'

# _jtr_opts KEY: the options of a command ("run") or of an action ("tune apply")
_jtr_opts() {
    case $1 in
@opts@
    esac
}

# _jtr_values KEY: the options of KEY that take a value, as OPTION:KIND (dir, file,
# cpu: the online CPUs, one=A,B: one of these words, some=A,B: a comma-separated
# list of them, word: a value nothing completes), and @:profile when KEY's operand
# is a tuning profile's name
_jtr_values() {
    case $1 in
@values@
    esac
}

# _jtr_actions COMMAND: the actions of a command that has them (jtr tune ACTION)
_jtr_actions() {
    case $1 in
@actions@
    esac
}

# _jtr_cpus: the online CPUs, as /sys/devices/system/cpu/online lists them
_jtr_cpus() {
    local r a b out="" IFS=,
    for r in $(cat /sys/devices/system/cpu/online 2>/dev/null); do
        a=${r%-*} b=${r#*-}
        for ((; a <= b; a++)); do out="$out $a"; done
    done
    IFS=" "
    echo $out
}

# _jtr_profiles: the tuning profiles jtr has (jtr tune list's names)
_jtr_profiles() {
    local name rest
    "${COMP_WORDS[0]}" tune list 2>/dev/null | while read -r name rest; do echo "$name"; done
}

# _jtr_offer WORDS [list]: COMPREPLY from WORDS; with list, the word being
# completed is a comma-separated list and its last item is completed
_jtr_offer() {
    local head=""
    [ -n "$2" ] && [[ $cur == *,* ]] && head=${cur%,*},
    COMPREPLY=($(compgen -P "$head" -W "$1" -- "${cur#"$head"}"))
}

_jtr() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    local cmd=${COMP_WORDS[1]} key actions opts values probe="" i w kind="" after=""
    local operand="" nops=0
    COMPREPLY=()
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$_jtr_commands help version -h --help --version" -- "$cur"))
        return 0
    fi
    case $cmd in
        help)
            [ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "$_jtr_commands" -- "$cur"))
            return 0 ;;
        version|-*) return 0 ;;
    esac
    key=$cmd
    actions=$(_jtr_actions "$cmd")
    if [ -n "$actions" ]; then
        if [ "$COMP_CWORD" -eq 2 ]; then
            COMPREPLY=($(compgen -W "$actions -h --help" -- "$cur"))
            return 0
        fi
        key="$cmd ${COMP_WORDS[2]}"
    fi
    opts=$(_jtr_opts "$key")
    values=$(_jtr_values "$key")
    for w in $_jtr_forwards; do
        if [ "${w%%:*}" = "$cmd" ]; then
            probe=${w#*:}
            for ((i = 2; i < COMP_CWORD; i++)); do
                [ "${COMP_WORDS[i]}" = "--" ] && after=1
                case " $_jtr_probes " in
                    *" ${COMP_WORDS[i]} "*) probe=${COMP_WORDS[i]}; break ;;
                esac
            done
            if [ -n "$probe" ]; then
                opts="$opts $(_jtr_opts "$probe")"
                values="$values $(_jtr_values "$probe")"
            fi
            if [[ $cur != -* ]] && { [ "$cmd" = run ] && [ "$COMP_CWORD" -eq 2 ] ||
                    [ "$prev" = "--" ]; }; then
                COMPREPLY=($(compgen -W "$_jtr_probes" -- "$cur"))
                return 0
            fi
        fi
    done
    for w in $values; do
        [ "${w%%:*}" = "$prev" ] && kind=${w#*:}
        [ "${w%%:*}" = "@" ] && operand=${w#*:}
    done
    case $kind in
        dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); return 0 ;;
        file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
        cpu) _jtr_offer "$(_jtr_cpus)" list; return 0 ;;
        one=*) w=${kind#one=}; _jtr_offer "${w//,/ }"; return 0 ;;
        some=*) w=${kind#some=}; _jtr_offer "${w//,/ }" list; return 0 ;;
        word) return 0 ;;
    esac
    if [[ $cur == -* ]]; then
        # an option the command and its probe share (jtr run's -c) once
        COMPREPLY=($(compgen -W "$(printf '%s\n' $opts | sort -u)" -- "$cur"))
        return 0
    fi
    if [ "$operand" = profile ] && [ -z "$after" ]; then
        # the profile is the first operand: count the words before it that are
        # neither an option nor an option's value
        for ((i = ${#key} > ${#cmd} ? 3 : 2; i < COMP_CWORD; i++)); do
            w=${COMP_WORDS[i]}
            if [[ $w == -* ]]; then
                [[ $w != *=* && " $values " == *" $w:"* ]] && i=$((i + 1))
            else
                nops=$((nops + 1))
            fi
        done
        if [ "$nops" -eq 0 ]; then
            COMPREPLY=($(compgen -W "$(_jtr_profiles)" -- "$cur"))
            return 0
        fi
    fi
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -f -- "$cur"))
    return 0
}
complete -F _jtr jtr
"""

ZSH = r"""#compdef jtr
# zsh completion for jtr @version@: the commands, each command's options (and the
# probe's, after jtr run PROBE or jtr ab ... -- PROBE), files for operands.
# Generated by scripts/gen-docs.py from the commands' --help; do not edit.

_jtr_probes=(@probes@)
_jtr_forwards=(@forwards@)

# _jtr_opts KEY: the options of a command ("run") or action ("tune apply") in reply,
# as OPTION:DESCRIPTION
_jtr_opts() {
    case $1 in
@opts@
        *) reply=() ;;
    esac
}

# _jtr_values KEY: the options that take a value, as OPTION:KIND (dir, file, cpu,
# one=A,B, some=A,B, word), and @:profile when KEY's operand is a profile's name
_jtr_values() {
    case $1 in
@values@
    esac
}

_jtr_actions() {
    case $1 in
@actions@
        *) reply=() ;;
    esac
}

# _jtr_cpus: the online CPUs in reply
_jtr_cpus() {
    local r
    reply=()
    for r in ${(s:,:)"$(</sys/devices/system/cpu/online)"}; do
        reply+=({${r%-*}..${r#*-}})
    done 2>/dev/null
}

# _jtr_offer LIST WORD...: the words; with LIST "list", for the last item of a
# comma-separated list
_jtr_offer() {
    local list=$1
    local -a offer
    shift
    offer=("$@")
    if [[ $list == list && $PREFIX == *,* ]]; then
        compset -P '*,'
    fi
    compadd -a offer
}

_jtr() {
    local -a cmds opts reply seen
    local cmd key probe="" w kind="" values i operand="" nops=0 after=""
    cmds=(@commands@)
    if (( CURRENT == 2 )); then
        _describe -t commands 'jtr command' cmds
        return
    fi
    cmd=$words[2]
    case $cmd in
        help)
            (( CURRENT == 3 )) && _describe -t commands 'jtr command' cmds
            return ;;
        version|-*) return ;;
    esac
    key=$cmd
    _jtr_actions $cmd
    if (( $#reply )); then
        if (( CURRENT == 3 )); then
            _describe -t actions 'action' reply
            return
        fi
        key="$cmd $words[3]"
    fi
    _jtr_opts $key
    opts=("${reply[@]}")
    values=$(_jtr_values $key)
    for w in $_jtr_forwards; do
        if [[ ${w%%:*} == $cmd ]]; then
            probe=${w#*:}
            for (( i = 3; i < CURRENT; i++ )); do
                [[ $words[i] == -- ]] && after=1
                if (( ${_jtr_probes[(Ie)$words[i]]} )); then
                    probe=$words[i]
                    break
                fi
            done
            if [[ -n $probe ]]; then
                _jtr_opts $probe
                opts+=("${reply[@]}")
                values="$values $(_jtr_values $probe)"
            fi
            if [[ $PREFIX != -* ]] && { [[ $cmd == run ]] && (( CURRENT == 3 )) ||
                    [[ $words[CURRENT-1] == -- ]] }; then
                compadd -a _jtr_probes
                return
            fi
        fi
    done
    for w in ${=values}; do
        [[ ${w%%:*} == $words[CURRENT-1] ]] && kind=${w#*:}
        [[ ${w%%:*} == @ ]] && operand=${w#*:}
    done
    case $kind in
        dir) _files -/; return ;;
        file) _files; return ;;
        cpu) _jtr_cpus; _jtr_offer list $reply; return ;;
        one=*) _jtr_offer one ${(s:,:)kind#one=}; return ;;
        some=*) _jtr_offer list ${(s:,:)kind#some=}; return ;;
        word) _message 'value'; return ;;
    esac
    if [[ $PREFIX == -* ]]; then
        # an option the command and its probe share (jtr run's -c) once
        reply=()
        for w in $opts; do
            (( ${seen[(Ie)${w%%:*}]} )) && continue
            seen+=(${w%%:*})
            reply+=($w)
        done
        _describe -t options 'option' reply
        return
    fi
    if [[ $operand == profile && -z $after ]]; then
        for (( i = ${#key} > ${#cmd} ? 4 : 3; i < CURRENT; i++ )); do
            if [[ $words[i] == -* ]]; then
                [[ $words[i] != *=* && " $values " == *" $words[i]:"* ]] && (( i++ ))
            else
                (( nops++ ))
            fi
        done
        if (( nops == 0 )); then
            reply=(${(f)"$($words[1] tune list 2>/dev/null | cut -d' ' -f1)"})
            compadd -a reply
            return
        fi
    fi
    _files
}

_jtr "$@"
"""


def main(argv=None):
    ap = argparse.ArgumentParser(prog="gen-docs.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("man", "completion"))
    ap.add_argument("outdir")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                    help="the folder of the built jtr-* programs (default build/bin)")
    ap.add_argument("--prefix", default="/usr/local",
                    help="the PREFIX of the install, for the FILES of jtr(1)")
    opts = ap.parse_args(argv)
    os.makedirs(opts.outdir, exist_ok=True)
    cmds = commands(opts.bin)
    if opts.what == "man":
        gen_man(cmds, opts.outdir, opts.prefix.rstrip("/") or "/")
    else:
        write(os.path.join(opts.outdir, "jtr"), bash_completion(cmds))
        write(os.path.join(opts.outdir, "_jtr"), zsh_completion(cmds))
    # what an earlier run wrote and this one did not (a command since removed): gone,
    # without emptying the folder first (another make may be installing from it)
    for name in os.listdir(opts.outdir):
        if name not in WRITTEN and ".tmp." not in name:
            os.remove(os.path.join(opts.outdir, name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
