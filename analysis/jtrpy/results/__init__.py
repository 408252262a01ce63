# SPDX-License-Identifier: GPL-2.0-only
"""results - the only code that reads and writes jtr result files: result.json
(loaded once into a Result), the outlier log, the suite index, the headline
numbers and the histograms they are computed from."""
