# SPDX-License-Identifier: GPL-2.0-only
"""trace - the kernel-event log (its layout declared once, in events.py) and
the processes that record it: the eBPF tracer, perf record, perf sched."""
