# SPDX-License-Identifier: GPL-2.0-only
"""drivers - orchestrating the C programs: the main job (tracer beside the
probe, then attribution), the suite, the maximum-rate search, the A/B tuning
experiment. They start programs, handle their signals and hand results on."""
