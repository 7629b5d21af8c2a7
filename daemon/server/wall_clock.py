"""The clock both engines' verbs read (daemon/stores/engine.py, Clock)."""

from __future__ import annotations

import datetime as _dt

from ...indexer.vault.timestamps import utcnow


class WallClock:
    """"Now" is the system's clock, in UTC."""

    def now(self) -> _dt.datetime:
        return utcnow()
