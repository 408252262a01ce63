"""The unit tests of the Python package, in folders that mirror it; they import
jtrpy from this source tree."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
