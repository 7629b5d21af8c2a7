"""`python -m brain.daemon.server --vault PATH`: the daemon process (process.py)."""

import sys

from .process import main

sys.exit(main())
