"""jtr's Python side: the front end, result loading, and (in later versions)
attribution, comparison and reports."""

__version__ = "0.1.0"
