# SPDX-License-Identifier: GPL-2.0-only
"""formats - other tools' formats: HdrHistogram logs, jtr_null's text and
gnuplot files, the Prometheus textfile, oslat and cyclictest --json."""
