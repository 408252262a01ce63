# SPDX-License-Identifier: GPL-2.0-only
"""commands - one module per Python subcommand, each make_parser(prog) and
run(opts), loaded by cli/main.py only when it is the one asked for; nothing
else imports them."""
