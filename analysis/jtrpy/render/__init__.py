# SPDX-License-Identifier: GPL-2.0-only
"""render - results as text tables, HTML pages and plots for people (plots.py
is the only matplotlib user). Data in, text or bytes out."""
