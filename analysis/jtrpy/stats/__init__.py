# SPDX-License-Identifier: GPL-2.0-only
"""stats - jtr compare: two sides of results, bootstrap confidence intervals,
per-cause deltas and a verdict. Data in, data out."""
