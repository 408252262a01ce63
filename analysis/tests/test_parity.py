# SPDX-License-Identifier: GPL-2.0-only
"""One source for each vocabulary the C and Python sides share: these tests read
the C declarations and require the Python side to say the same.

- the event log: ebpf/trace.h (magic, version, record and header layout, type
  numbers) against trace/events.py;
- the transports: enum tp_kind's names in transports/ against vocab.TRANSPORTS;
- the tracer backends: what the eBPF tracer and the perf backend write as
  trace.json "backend", against vocab.BACKENDS;
- the version: the VERSION file, jtrpy.__version__ and what a built probe
  writes into result.json;
- the files of a results folder: lib/jtr_out.h's JTR_RESULT_FILES against
  results/result.py RESULT_FILES (what a new result removes of an earlier one);
- the option alphabet: lib/jtr_opts.h against cli/parser.py ALPHABET."""
import glob
import json
import os
import re
import struct
import subprocess

import pytest

from jtrpy import __version__, vocab
from jtrpy.cli.parser import ALPHABET
from jtrpy.drivers import plan
from jtrpy.results.result import DEFAULT_FILES, RESULT_FILES
from jtrpy.trace import causes, ebpf, events, perf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
C_TYPES = {"unsigned long long": "Q", "unsigned int": "I", "unsigned short": "H",
           "unsigned char": "B", "char": "s"}


def read(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)     # comments out


def c_struct(text, name):
    """The struct module format of C struct @name in @text (fields in order; a
    union is as wide as its widest member, as raw bytes)."""
    body = re.search(r"struct %s \{(.*?)\n\};" % name, text, re.S).group(1)
    body = re.sub(r"union \{(.*?)\};", lambda m: "char union[%d];" % union_size(text, m.group(1)),
                  body, flags=re.S)
    fmt = "<"
    for t, _, count in re.findall(r"((?:unsigned )?(?:long long|int|short|char))\s+(\w+)"
                                      r"(?:\[([^\]]+)\])?;", body):
        n = eval_c(text, count) if count else 1
        code = C_TYPES[t]
        if count and code in ("B", "s"):        # a byte array: raw bytes
            code = "s"
        fmt += ("%d%s" % (n, code) if n > 1 or code == "s" else code)
    return fmt


def union_size(text, body):
    sizes = []
    for t, _, count in re.findall(r"((?:unsigned )?(?:long long|int|short|char))\s+(\w+)"
                                  r"(?:\[([^\]]+)\])?;", body):
        sizes.append(struct.calcsize(C_TYPES[t].replace("s", "c")) *
                     (eval_c(text, count) if count else 1))
    return max(sizes)


def eval_c(text, expr):
    """An array size: a number, a #define, or a product of them."""
    defines = dict(re.findall(r"^#define (\w+)[ \t]+(\S+)", text, re.M))
    for k, v in defines.items():
        expr = re.sub(r"\b%s\b" % k, v, expr)
    assert re.fullmatch(r"[\d\s*]+", expr), expr
    return eval(expr)  # noqa: S307 - digits and * only, checked above


def test_event_log_layout_is_trace_h():
    h = read("ebpf", "trace.h")
    defines = dict(re.findall(r"^#define (\w+)[ \t]+(\S+)", h, re.M))
    assert defines["JTR_EV_MAGIC"].strip('"').encode() + b"\0" == events.MAGIC
    assert int(defines["JTR_EV_VERSION"]) == events.VERSION
    assert int(defines["JTR_EV_SIZE"]) == events.RECORD_SIZE
    assert int(defines["JTR_COMM_LEN"]) == events.COMM_LEN
    assert c_struct(h, "jtr_ev") == events.RECORD.format
    assert c_struct(h, "jtr_ev_header") == events.HEADER.format
    assert events.RECORD.size == events.RECORD_SIZE and events.HEADER.size == events.HEADER_SIZE
    fields = re.findall(r"\b(\w+);", re.search(r"struct jtr_ev \{(.*?)\n\};", h, re.S).group(1))
    assert [f for f in fields if f not in ("x", "str")] + ["raw"] == list(events.RECORD_FIELDS)
    offsets = {"pid": events.PID_OFFSET, "cpu": events.CPU_OFFSET, "type": events.TYPE_OFFSET,
               "a": events.A_OFFSET, "raw": events.RAW_OFFSET}
    at = 0
    for f, code in zip(events.RECORD_FIELDS, re.findall(r"\d*[A-Za-z]", events.RECORD.format[1:])):
        if f in offsets:
            assert offsets[f] == at, f
        at += struct.calcsize("<" + code)


def test_event_types_are_trace_h():
    h = read("ebpf", "trace.h")
    body = re.search(r"enum jtr_ev_type \{(.*?)\};", h, re.S).group(1)
    value, c_types = 0, {}
    for name, explicit in re.findall(r"JTR_EV_(\w+)\s*(?:=\s*(\d+))?,?", body):
        value = int(explicit) if explicit else value + 1
        c_types[name] = value
    ntypes = c_types.pop("NTYPES")
    assert c_types == {n: getattr(events, n) for n in c_types}
    assert set(events.TYPE_NAMES) == set(c_types.values()) == set(range(1, ntypes))


def test_transports_are_tp_kind():
    found = [f for f in glob.glob(os.path.join(ROOT, "transports", "**", "*.[ch]"),
                                  recursive=True)
             if re.search(r"enum tp_kind \{", open(f).read())]
    assert found, "no enum tp_kind under transports/"
    h = re.sub(r"/\*.*?\*/", "", open(found[0]).read(), flags=re.S)
    order = re.findall(r"\b(TP_[A-Z_]+)\b", re.search(r"enum tp_kind \{(.*?)\}", h, re.S)
                       .group(1))
    order = [k for k in order if k != "TP_NKINDS"]
    names = {}
    for f in glob.glob(os.path.join(ROOT, "transports", "**", "*.c"), recursive=True):
        names.update(re.findall(r"\[(TP_[A-Z_]+)\]\s*=\s*\"([\w-]+)\"", open(f).read()))
    assert tuple(names[k] for k in order) == vocab.TRANSPORTS
    assert set(vocab.DATAGRAM_TRANSPORTS) <= set(vocab.TRANSPORTS)


def test_the_event_logs_bound_is_the_tracers():
    """The readers' bound on events.bin is where the tracer stops writing."""
    m = re.search(r"^#define JTR_TRACE_LOG_MAX\t+\((\d+)ULL << (\d+)\)", read("ebpf", "trace.c"),
                  re.M)
    assert m and int(m.group(1)) << int(m.group(2)) == vocab.MAX_LOG_BYTES


def test_message_layout_is_tp_h():
    h = read("transports", "lib", "tp.h")
    assert "#define TP_FULL_LEN %du" % vocab.TP_FULL_LEN in h
    assert re.search(r"struct tp_msg \{(.*?)\};", h, re.S)
    fields = re.search(r"struct tp_msg \{(.*?)\};", h, re.S).group(1)
    sizes = {"uint16_t": 2, "uint8_t": 1, "uint32_t": 4, "uint64_t": 8, "int64_t": 8}
    assert sum(sizes[t] for t in re.findall(r"^\s*(\w+)\s+\w+;", fields, re.M)) == \
        vocab.TP_HDR_LEN


def jtr_opts():
    """{NAME: (letter, long name, argument, --help head)} of lib/jtr_opts.h's
    shared options, each read from its five defines (NAME_C, _S, _LONG, _ARG,
    _HELP), which must agree with one another."""
    h = read("lib", "jtr_opts.h")
    defs = dict(re.findall(r"^#define (JTR_\w+)\t+(.+)$", h, re.M))
    out = {}
    for name in re.findall(r"^#define JTR_(\w+)_C\t", h, re.M):
        letter = re.fullmatch(r"'(\w)'", defs["JTR_%s_C" % name]).group(1)
        short = json.loads(defs["JTR_%s_S" % name])
        long = json.loads(defs["JTR_%s_LONG" % name])
        arg = defs["JTR_%s_ARG" % name]
        head = json.loads(defs["JTR_%s_HELP" % name])
        assert short == letter + (":" if arg == "required_argument" else ""), name
        assert arg in ("required_argument", "no_argument"), name
        assert re.fullmatch(r"  -%s, --%s( [A-Z]+)?" % (letter, long), head), name
        assert (arg == "required_argument") == (" " in head.strip().split(", ")[1]), name
        out[name] = ("-" + letter, long, arg, head)
    return out


def test_the_option_alphabet_is_jtr_opts_h():
    """One letter, one long name, one kind of value: the C table and the front
    end's are the same, in the same order, and no letter or name is there twice."""
    c = [(letter, "--" + long, head.split()[-1] if arg == "required_argument" else None)
         for letter, long, arg, head in jtr_opts().values()]
    assert c == [(short, long, meta) for short, long, meta, _ in ALPHABET]
    assert len({x[0] for x in c}) == len({x[1] for x in c}) == len(c) == 10


def test_jtr_run_passes_the_transport_options_of_tp_prog_h():
    """jtr run gives the other end the probe's transport group: every option of
    TP_PROG_LONG_OPTS is passed on (a value or a flag, as C parses it) or named as
    one each end sets for itself."""
    h = open(os.path.join(ROOT, "transports", "prog", "tp_prog.h")).read()
    block = re.search(r"#define TP_PROG_LONG_OPTS(.*?)\n\n", h, re.S).group(1)
    block = re.sub(r"JTR_LONG\((\w+)\)", lambda m: '{ "%s", %s }' % jtr_opts()[m.group(1)][1:3],
                   block)      # an option of the alphabet (lib/jtr_opts.h)
    c_opts = dict(re.findall(r'\{\s*"([\w-]+)",\s*(required_argument|no_argument)', block))
    assert c_opts
    valued = {long for _, long in plan.TRANSPORT_VALUED}
    flags = {long for _, long in plan.TRANSPORT_FLAGS}
    own = set(plan.TRANSPORT_OWN)
    assert not (valued & flags or valued & own or flags & own)
    assert {"--" + n for n in c_opts} == valued | flags | own
    for n, kind in c_opts.items():
        if "--" + n in valued:
            assert kind == "required_argument", n
        if "--" + n in flags:
            assert kind == "no_argument", n


def test_backends_are_what_the_tracers_write():
    c = read("ebpf", "trace_json.c")
    written = re.findall(r'"backend"\s*,\s*"(\w+)"', c)
    assert written == [vocab.BACKENDS[0]] == [ebpf.Tracer.backend]
    assert perf.PerfTracer.backend == vocab.BACKENDS[1] == perf.BACKEND
    assert vocab.BACKEND_CHOICES == ("auto",) + vocab.BACKENDS


def test_result_files_are_jtr_out_h():
    h = read("lib", "jtr_out.h")
    body = re.search(r"#define JTR_RESULT_FILES((?:.*\\\n)*.*)", h).group(1)
    assert tuple(re.findall(r'"([^"]+)"', body)) == RESULT_FILES
    assert RESULT_FILES[0] == "result.json"     # the C side's bit 0: "this is a result"
    assert set(DEFAULT_FILES.values()) <= set(RESULT_FILES)


def test_one_version():
    with open(os.path.join(ROOT, "VERSION")) as f:
        version = f.read().strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert __version__ == version
    mk = read("Makefile")
    assert re.search(r"-DJTR_VERSION=", mk), "the Makefile passes VERSION to C with -D"
    assert "JTR_VERSION \"" not in read("lib", "jtr_probe.h"), "a second version in C"


def test_a_built_probe_writes_the_version(tmp_path):
    prog = os.path.join(ROOT, "build", "bin", "jtr-clock")
    if not os.access(prog, os.X_OK):
        pytest.skip("jtr-clock is not built (run make)")
    subprocess.run([prog, "-n", "1000", "-q", "-o", str(tmp_path / "c")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    with open(tmp_path / "c" / "result.json") as f:
        assert json.load(f)["jtr_version"] == __version__


def test_watch_categories_and_buckets_are_watch_c():
    """jtr watch's categories are trace/causes.py's WATCH: jtr_watch_cats' words,
    in the order of enum jtr_watch_cat (the state line's order, the model's,
    watch_model.h, which the kernel side runs)."""
    text, model = read("ebpf", "watch.c"), read("ebpf", "watch_model.h")
    cats = re.search(r"jtr_watch_cats\[JTR_W_NCATS\] = \{(.*?)\};", text, re.S).group(1)
    words = dict(re.findall(r'\[(JTR_W_\w+)\]\s*=\s*"([^"]+)"', cats))
    order = re.search(r"enum jtr_watch_cat \{(.*?)\};", model, re.S).group(1)
    enum = re.findall(r"\b(JTR_W_\w+)\b", order)
    assert enum[-1] == "JTR_W_NCATS"
    assert set(words) == set(enum[:-1])
    assert tuple(words[k] for k in enum[:-1]) == causes.WATCH
    assert set(causes.WATCH) <= set(causes.BY_NAME)
    assert not hasattr(vocab, "WATCH_CATEGORIES")
    assert re.search(r"jtr_watch_bounds_ns\[JTR_WATCH_BUCKETS - 1\] = JTR_WATCH_BOUNDS;", text)
    bounds = re.search(r"#define JTR_WATCH_BOUNDS \{(.*?)\}", model, re.S).group(1)
    assert tuple(int(b) for b in re.findall(r"\d+", bounds)) == vocab.WATCH_BOUNDS_NS


def test_watch_names_are_causes():
    """The fixed names watch.c gives: RT throttling's, the local timer's, the
    softirqs' (causes.py classifies the same events)."""
    h, c, m = read("ebpf", "watch.h"), read("ebpf", "watch.c"), read("ebpf", "watch_model.h")
    throttle = re.search(r'#define JTR_WATCH_THROTTLE_NAME\s+"([^"]+)"', h).group(1)
    assert throttle == "sched_rt_runtime_us"
    assert int(re.search(r"#define JTR_WATCH_RT_PRIO_END\s+(\d+)", m).group(1)) == \
        causes.RT_PRIO_END
    assert causes.vector("local_timer")[:2] == (causes.TICK, re.search(
        r'!strcmp\(k, "local_timer"\) \? "(local timer)"', c).group(1))
    softirqs = re.search(r"softirq_names\[\] = \{(.*?)\};", c, re.S).group(1)
    assert tuple(re.findall(r'"(\w+)"', softirqs)) == tuple(causes.softirq(v) for v in range(10))
    ipis = re.findall(r'!strcmp\(k, "(\w+)"\)', c)
    assert tuple(i for i in ipis if i != "local_timer") == causes.IPI_KINDS
