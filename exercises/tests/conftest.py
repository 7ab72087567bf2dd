"""The graded tests import the project's flat modules from its root, as tests/ does."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
