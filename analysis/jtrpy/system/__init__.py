# SPDX-License-Identifier: GPL-2.0-only
"""system - this machine: its CPUs and tasks (/proc, /sys), jtr's own file
locations, and the one way files are written (atomically)."""
