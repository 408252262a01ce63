# SPDX-License-Identifier: GPL-2.0-only
"""cli.main: dispatch, exit statuses, `jtr help CMD`."""
import importlib
import sys

import jtrpy.cli.main as M
from jtrpy import __version__
from jtrpy.cli.main import COMMANDS, main
from jtrpy.cli.parser import OutputPath


def test_usage_errors_name_the_command(capsys):
    assert main(["nope"]) == 2
    assert capsys.readouterr().err == "jtr: unknown command 'nope'; run 'jtr --help' for the list\n"
    assert main(["compare", "--frob"]) == 2
    assert capsys.readouterr().err == ("jtr compare: unknown option '--frob'; see "
                                      "'jtr compare --help'\n")
    assert main([]) == 2 and "commands:" in capsys.readouterr().err


def test_version(capsys):
    assert main(["version"]) == 0 and main(["--version"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["jtr %s" % __version__] * 2 and __version__ != "unknown"


def test_help_cmd_is_cmd_help(capsys):
    for name, _, where in COMMANDS:
        if where in (None, "exec") or name == "trace":      # C programs: their own help
            continue
        assert main(["help", name]) == 0
        via_help = capsys.readouterr().out
        assert main([name, "--help"]) == 0
        assert capsys.readouterr().out == via_help
        assert via_help.startswith("usage: jtr %s" % name), name
        assert "\noptions:\n" in via_help and "\nexamples:\n" in via_help, name
    assert main(["help", "nope"]) == 2
    assert "unknown command 'nope'" in capsys.readouterr().err
    assert main(["help"]) == 0 and "commands:" in capsys.readouterr().out


def test_every_command_is_listed(capsys):
    main(["--help"])
    out = capsys.readouterr().out
    for name, summary, _ in COMMANDS:
        assert "  %s" % name in out and summary in out


def test_every_commands_output_is_the_one_option(capsys):
    """-o of every Python command is cli/parser.py's add_output: '' is refused
    before anything runs, in the C programs' words (jtr ab's -o goes through
    new_results_dir, which refuses it too: results/test_result.py)."""
    checked = []
    for name, _, where in COMMANDS:
        if where in (None, "exec") or name in ("ab", "trace"):
            continue
        parser = importlib.import_module("jtrpy.commands." + where).make_parser("jtr " + name)
        outs = [a for a in parser._actions if "-o" in a.option_strings]
        if not outs:
            continue
        assert isinstance(outs[0].type, OutputPath), name
        kind = "file" if outs[0].metavar == "FILE" else "folder"
        assert main([name, "-o", "", "x"]) == 2, name
        err = capsys.readouterr().err
        assert err.startswith("jtr %s: -o '': give a %s name, e.g. -o " % (name, kind)), err
        assert err.count("\n") == 1
        checked.append(name)
    assert checked == ["run", "compare", "maxrate", "duplex", "watch", "advise", "import",
                       "report", "fleet", "suite"]
    for opt in ("--hlog", "--prom"):
        assert main(["export", opt, "", "x"]) == 2
        assert capsys.readouterr().err.startswith("jtr export: %s '': give a file name" % opt)


def test_a_signal_is_acknowledged_while_stderr_is_busy_writing(capfd, monkeypatch):
    """A stop signal that comes while sys.stderr is in the middle of a write (the
    first signal's acknowledgement, or any message) is still said, on fd 2,
    without a traceback."""
    from jtrpy.cli import main

    class Busy:
        def write(self, text):
            raise RuntimeError("reentrant call inside <_io.BufferedWriter name='<stderr>'>")

        def flush(self):
            raise RuntimeError("reentrant call")

    monkeypatch.setattr(sys, "stderr", Busy())
    main.acknowledge("jtr run: stopping\n")
    assert capfd.readouterr().err == "jtr run: stopping\n"


def test_a_write_error_names_the_results_folder_not_its_hidden_draft(capsys, monkeypatch):
    """A file of a results folder being written is in .NAME.partial-PID, removed
    when the write fails: the error names NAME/file, where the user will look."""
    def full(_):
        raise OSError(28, "No space left on device", "/tmp/d/.r.partial-2731/summary.txt")
    monkeypatch.setattr(M, "run_command", lambda name, args: full(args))
    assert M.main(["run", "-d", "1s"]) == M.EXIT_FAILED
    assert capsys.readouterr().err.splitlines()[-1] == \
        "jtr run: error: cannot write /tmp/d/r/summary.txt: No space left on device"
    assert M.final_name(".r.partial-5/x") == "r/x"
    assert M.final_name("/a/.b.partial-x/y") == "/a/.b.partial-x/y"     # not a pid
