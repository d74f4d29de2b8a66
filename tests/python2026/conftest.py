"""The CLI helpers are shared with the v1 tests (tests/python/journal_cli.py, which imports no SDK)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
