"""tune - tuned-format profiles: plan, apply, verify, revert (jtr tune)."""
