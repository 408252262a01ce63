# SPDX-License-Identifier: GPL-2.0-only
"""jtr import's job: each file read as a result (formats/imports.py: oslat or
cyclictest --json, an HdrHistogram log) and written as a results folder with the
original beside result.json (results/result.py); the command prints a line per
folder written."""
from ..formats.imports import import_file, started_local
from ..results.result import new_results_dir, write_result_folder


def import_job(files, output=None, hlog=False, unit="ns"):
    """Import @files one by one into @output (None: results/DATE-HOST-TOOL, from
    each file's own start time and host); @hlog: each is an HdrHistogram log,
    its values in @unit. A generator: it yields (folder, result document) after
    each folder is written, and reads and writes nothing until it is iterated.
    UsageError for a file that cannot be read or a folder that cannot be
    written: the files before it are imported."""
    for f in files:
        result, copies = import_file(f, hlog=hlog, unit=unit)
        result["files"] = {"source": copies[0][0]}
        outdir = output or new_results_dir(result["tool"], when=started_local(result),
                                           host=result["host"]["hostname"])
        write_result_folder(result, outdir, copies, default=output is None)
        yield outdir, result
