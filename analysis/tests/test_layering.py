# SPDX-License-Identifier: GPL-2.0-only
"""The package's layers (docs/architecture.md): dependencies point one way,

    cli.main -> commands -> drivers -> render -> attribution/stats/formats/tune
             -> results/trace -> system/cli.parser -> units/values/vocab -> errors

no import cycle, no module using another's private names, no function-level
import but of the optional heavy libraries (numpy, matplotlib), matplotlib
only in render/plots.py, commands/ imported by nothing but the dispatcher
(which loads them by name, lazily), and print() called by nothing but
commands/ and cli/ (the rest hands its lines to the command's callbacks, or
returns them)."""
import ast
import os

import pytest

PKG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jtrpy")

# (module or package prefix, rank): a module may import only lower ranks, or
# modules of its own subpackage; the longest matching prefix decides
RANKS = [
    ("jtrpy", 0), ("jtrpy.errors", 0), ("jtrpy.cli", 0),
    ("jtrpy.units", 1), ("jtrpy.values", 1), ("jtrpy.vocab", 1),
    ("jtrpy.system", 2), ("jtrpy.cli.parser", 2),
    ("jtrpy.results", 3), ("jtrpy.trace", 3),
    ("jtrpy.attribution", 4), ("jtrpy.stats", 4), ("jtrpy.formats", 4), ("jtrpy.tune", 4),
    ("jtrpy.render", 5),
    ("jtrpy.drivers", 6),
    ("jtrpy.commands", 7),
    ("jtrpy.cli.main", 8),
]
HEAVY = ("numpy", "matplotlib")


def modules():
    """{module name: path} of every module of the package."""
    out = {}
    for d, _, files in os.walk(PKG):
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(d, f), os.path.dirname(PKG))[:-3]
                name = rel.replace(os.sep, ".")
                out[name[:-len(".__init__")] if name.endswith(".__init__") else name] = \
                    os.path.join(d, f)
    return out


MODULES = modules()


def rank(name):
    best = max((p for p, _ in RANKS if name == p or name.startswith(p + ".")), key=len)
    return dict(RANKS)[best]


def group(name):
    """The subpackage a module belongs to ("jtrpy.trace"), or the module itself."""
    parts = name.split(".")
    return ".".join(parts[:2])


def resolve(name, node):
    """The absolute module named by an import statement in module @name."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        pkg = name if MODULES[name].endswith("__init__.py") else name.rsplit(".", 1)[0]
        parts = pkg.split(".")
        parts = parts[:len(parts) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    out = []
    for a in node.names:
        sub = base + "." + a.name
        out.append(sub if sub in MODULES else base)
    return out


def imports(name):
    """[(imported module, imported names, lineno, at top level?)] of module @name."""
    tree = ast.parse(open(MODULES[name]).read(), MODULES[name])
    out = []

    def walk(node, top):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in resolve(name, child):
                    names = [a.name for a in child.names] if isinstance(child, ast.ImportFrom) \
                        else []
                    out.append((target, names, child.lineno, top))
            inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                    ast.Lambda))
            walk(child, inner)
    walk(tree, True)
    return out


def ours(target):
    return target == "jtrpy" or target.startswith("jtrpy.")


def test_every_module_has_a_rank():
    for name in MODULES:
        assert rank(name) is not None, name


@pytest.mark.parametrize("name", sorted(MODULES))
def test_dependencies_point_one_way(name):
    for target, _, line, _ in imports(name):
        if not ours(target):
            continue
        same = group(target) == group(name) and group(name) != "jtrpy.cli"
        assert same or rank(target) < rank(name), (
            "%s:%d imports %s (rank %d), which is not below it (rank %d)"
            % (name, line, target, rank(target), rank(name)))


def test_no_import_cycle():
    graph = {n: sorted({t for t, _, _, top in imports(n) if ours(t) and t in MODULES and top})
             for n in MODULES}
    state, stack = {}, []

    def visit(n):
        state[n] = "open"
        stack.append(n)
        for t in graph[n]:
            if state.get(t) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[n] = "done"
    for n in sorted(graph):
        if n not in state:
            visit(n)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_function_level_imports_only_for_heavy_libraries(name):
    for target, _, line, top in imports(name):
        if not top:
            assert target.split(".")[0] in HEAVY, (
                "%s:%d imports %s inside a function; import it at the top (only numpy and "
                "matplotlib, heavy and optional, are loaded when needed)" % (name, line, target))


def test_matplotlib_only_in_render_plots():
    users = {n for n in MODULES for t, _, _, _ in imports(n) if t.split(".")[0] == "matplotlib"}
    assert users == {"jtrpy.render.plots"}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_private_names_of_other_modules(name):
    tree = ast.parse(open(MODULES[name]).read())
    aliases = {}
    for target, names, line, _ in imports(name):
        if not ours(target) or target == name:
            continue
        for n in names:
            assert not (n.startswith("_") and not n.startswith("__")), (
                "%s:%d imports the private %s from %s" % (name, line, n, target))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for a, target in zip(node.names, resolve(name, node)):
                if target in MODULES and target != name:
                    aliases[a.asname or a.name] = target
        elif isinstance(node, ast.Import):
            for a in node.names:
                if ours(a.name):
                    aliases[a.asname or a.name.split(".")[0]] = a.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in aliases and node.attr.startswith("_") and \
                not node.attr.startswith("__"):
            raise AssertionError("%s:%d uses the private %s.%s" % (
                name, node.lineno, aliases[node.value.id], node.attr))


def test_commands_are_loaded_only_by_the_dispatcher():
    from jtrpy.cli.main import COMMANDS, GATED, GATES_MODULE
    for name in MODULES:
        if name.startswith("jtrpy.commands"):
            continue
        for target, _, line, _ in imports(name):
            assert not target.startswith("jtrpy.commands"), "%s:%d imports %s" % (
                name, line, target)
    listed = {"jtrpy.commands." + where for _, _, where in COMMANDS
              if where not in (None, "exec")}
    # jtr gap and jtr wake given a gate: the front end runs them and judges
    listed |= {"jtrpy.commands." + GATES_MODULE} if GATED else set()
    present = {n for n in MODULES if n.startswith("jtrpy.commands.")}
    assert listed == present
    import importlib
    for n in present:
        m = importlib.import_module(n)
        assert callable(m.make_parser) and callable(m.run), n


# what a page must be given, not fetch or compute: the loaders of results, outlier
# logs and suites, and the comparison's statistics (drivers/report.py does them)
NOT_IN_RENDER = {"jtrpy.results.result": {"load_result", "make_output_dir"},
                 "jtrpy.results.outliers": {"read_outliers"},
                 "jtrpy.results.suite": {"load_suite", "item_folder"},
                 "jtrpy.stats.compare": {"compare"}}


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith("jtrpy.render")))
def test_render_reads_no_file_and_runs_no_statistic(name):
    for target, names, line, _ in imports(name):
        used = NOT_IN_RENDER.get(target, set()) & set(names)
        assert not used, ("%s:%d imports %s from %s: a page is given what it shows "
                          "(drivers/report.py)" % (name, line, ", ".join(sorted(used)), target))


# commands that parse, call their one driver and print (and what else they may
# import: their options' limits and the text of what they print)
ONE_DRIVER = {"report": {"jtrpy.formats.legacy"},
              "compare": {"jtrpy.errors", "jtrpy.render.compare", "jtrpy.stats.compare",
                          "jtrpy.units"},
              "ls": {"jtrpy.render.ls"},
              "export": {"jtrpy.errors", "jtrpy.formats.prom"},
              "attribute": {"jtrpy.attribution.attribute", "jtrpy.units"},
              "advise": {"jtrpy.errors", "jtrpy.render.advise", "jtrpy.system.paths"},
              "maxrate": {"jtrpy.errors", "jtrpy.render.maxrate", "jtrpy.vocab"},
              # -c is checked against the online CPUs as it is parsed; the categories
              # in --help; its lines
              "watch": {"jtrpy.errors", "jtrpy.render.watch", "jtrpy.system.cpus",
                        "jtrpy.trace.causes"},
              "tune": {"jtrpy.errors", "jtrpy.render.tune"},
              # the probe's metadata says which gates it has; the hint's duration
              "probe": {"jtrpy.errors", "jtrpy.render.gates", "jtrpy.results.probes",
                        "jtrpy.values"},
              # the figures the rule judges, its defaults and the document's format in
              # the options and their help, the rule (Rule) they make; the table
              "fleet": {"jtrpy.render.fleet", "jtrpy.results.fleet"},
              # the units --unit takes
              "import_": {"jtrpy.errors", "jtrpy.formats.imports"},
              # the lines of the log it is handed
              "trace": {"jtrpy.errors", "jtrpy.render.trace"},
              # the kinds -T takes, and those --delay goes with
              "duplex": {"jtrpy.errors", "jtrpy.vocab"},
              # the probes it runs, the other end each starts and the gates each has;
              # -c, --pong-cpu and --sub-cpu checked against the online CPUs as they
              # are parsed; --slack's default in --help
              "run": {"jtrpy.attribution.attribute", "jtrpy.errors", "jtrpy.render.gates",
                      "jtrpy.render.runs", "jtrpy.results.probes", "jtrpy.system.cpus",
                      "jtrpy.units"},
              # the probes it takes after '--'; --pong-cpu and --sub-cpu checked
              # against the online CPUs as they are parsed
              # and jtr run app's options (-- app ...), checked as jtr run checks them
              "ab": {"jtrpy.errors", "jtrpy.results.probes", "jtrpy.system.cpus",
                     "jtrpy.commands.run"},
              # -c checked against the online CPUs as it is parsed; the transports
              # --transports and --only take
              "suite": {"jtrpy.render.suite", "jtrpy.system.cpus", "jtrpy.vocab"}}
# a command whose job is another command's driver: jtr gap/wake given a gate run
# as jtr run's probes do, alone (drivers/run.py's probe_job); jtr run's probes and
# jtr run app, which builds on drivers/run.py's parts (drivers/app.py)
DRIVER_OF = {"probe": {"run"}, "run": {"run", "app"}}


@pytest.mark.parametrize("command", sorted(ONE_DRIVER))
def test_commands_parse_call_one_driver_and_print(command):
    used = {t for t, _, _, _ in imports("jtrpy.commands." + command) if ours(t)}
    drivers = {t for t in used if t.startswith("jtrpy.drivers")}
    assert drivers == {"jtrpy.drivers." + d for d in DRIVER_OF.get(command, {command})}, drivers
    assert used - drivers <= {"jtrpy.cli.parser", "jtrpy.cli.progress"} | ONE_DRIVER[command], \
        used - drivers
    for target, names, line, _ in imports("jtrpy.commands." + command):
        assert not NOT_IN_RENDER.get(target, set()) & set(names), (
            "commands/%s.py:%d loads or computes (%s): its driver's work" % (command, line,
                                                                            target))


# the modules that print: the commands and the front end (cli/main.py; cli/parser.py:
# its warnings, and say and note, the callbacks commands hand their jobs;
# cli/progress.py: the status line a command makes on its stderr); below them a
# line is handed to the command's callbacks or returned, and the command chooses
# its stream (a stream a job writes to, as jtr export's standard output, is
# handed down too)
PRINTERS = ("jtrpy.commands", "jtrpy.cli")


def writes(tree):
    """The lines of @tree's print() calls and of its references to sys.stdout and
    sys.stderr."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "print":
            out.add(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr in ("stdout", "stderr") and \
                isinstance(node.value, ast.Name) and node.value.id == "sys":
            out.add(node.lineno)
    return sorted(out)


def test_writes_finds_print_and_the_streams():
    tree = ast.parse("import sys\nprint(1)\nsys.stdout.write('x')\nf(sys.stderr)\n"
                     "s.stdout\nsubprocess.run(a, stdout=PIPE)\n")
    assert writes(tree) == [2, 3, 4]


@pytest.mark.parametrize("name", sorted(n for n in MODULES if not any(
    n == p or n.startswith(p + ".") for p in PRINTERS)))
def test_only_the_commands_print(name):
    lines = writes(ast.parse(open(MODULES[name]).read(), MODULES[name]))
    assert not lines, ("%s writes to a stream of its own choosing (print(), sys.stdout or "
                       "sys.stderr at %s): hand the line to the command's callback, or "
                       "return it" % (name, ", ".join("%s:%d" % (name, n) for n in lines)))
