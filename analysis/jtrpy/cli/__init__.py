# SPDX-License-Identifier: GPL-2.0-only
"""cli - the front end: cli/main.py dispatches `jtr COMMAND` (exec for the C
programs, a commands/ module for the rest) and owns the exit statuses;
cli/parser.py is the option layer every Python command is built on."""
