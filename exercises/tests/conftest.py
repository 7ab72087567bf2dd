"""The graded tests import the project's flat modules from its root, as tests/ does, and
expect.py (what a failing test prints) from this directory."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(os.path.dirname(HERE)), HERE]
