# SPDX-License-Identifier: GPL-2.0-only
"""attribution - every outlier charged to the kernel events that caused it,
and that attribution checked against perf sched timehist. Data in, data out,
no printing, no files."""
