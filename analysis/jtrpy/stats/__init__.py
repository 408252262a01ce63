"""stats - jtr compare: two sides of results, bootstrap confidence intervals,
per-cause deltas and a verdict. Data in, data out."""
