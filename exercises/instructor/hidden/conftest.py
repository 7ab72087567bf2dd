"""The hidden tests import the project's modules from its root and the graded tests' helpers
(expect.py, the stand-ins of test_ex04_grpo.py) from exercises/tests, wherever they are run from."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path[:0] = [ROOT, os.path.join(ROOT, "exercises", "tests")]
