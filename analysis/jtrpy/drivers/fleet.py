# SPDX-License-Identifier: GPL-2.0-only
"""jtr fleet's job: the hosts' results found and loaded, each host held against
the others of its probe (results/fleet.py), -o's page (render/fleet.py) written
atomically; the command prints the document it is shown, as JSON or as
render/fleet.py's table."""
from ..errors import UsageError
from ..render import fleet as render
from ..results.fleet import fleet
from ..system.files import check_writable, write_output


def fleet_job(folders, rule, accept_invalid=False, output=None, show=lambda doc: None):
    """jtr fleet's job: -o @output checked before anything is read, the jtr-fleet/1
    document of the results under @folders judged by @rule (a results.fleet.Rule;
    rows that are not a valid measurement judged only with @accept_invalid),
    @show(document) called, then the page written to @output (None: none); the
    document. UsageError when no folder is given, for what results/fleet.py
    refuses, and when the page cannot be written."""
    if output:
        check_writable(output, "-o", "fleet.html")
    if not folders:
        raise UsageError("give the folders of the hosts' results (DIR/HOST/... or results "
                         "folders); see 'jtr fleet --help'")
    doc = fleet(folders, rule, accept_invalid)
    show(doc)
    if output:
        try:
            write_output(output, render.page(doc))
        except OSError as e:
            raise UsageError("-o %s: cannot write: %s" % (output, e.strerror or e))
    return doc
