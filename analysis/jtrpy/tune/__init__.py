# SPDX-License-Identifier: GPL-2.0-only
"""tune - tuned-format profiles: plan, apply, verify, revert (jtr tune)."""
