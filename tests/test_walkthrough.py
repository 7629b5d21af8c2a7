"""docs/walkthrough.md is what its commands print: docs/walkthrough.py runs them on a copy of
sample_brain in a private HOME (keyword-only) and the check fails, with the diff, when a
change in brain's output is not in the doc. `python docs/walkthrough.py` rewrites it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_walkthrough_is_what_a_run_prints():
    r = subprocess.run([sys.executable, str(REPO / "docs" / "walkthrough.py"), "--check"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, "docs/walkthrough.md is out of date; run `python docs/walkthrough.py`:\n" + r.stdout \
        + r.stderr
