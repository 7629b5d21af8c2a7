"""The one timestamp format on the wire and in the tables.

`YYYY-MM-DDTHH:MM:SS.mmmZ`, as JS `toISOString` renders an instant: fixed
width, so timestamps compare correctly as strings in SQL.
"""

from __future__ import annotations

import datetime as _dt
from typing import overload


@overload
def iso(ts: _dt.datetime) -> str: ...
@overload
def iso(ts: None) -> None: ...
@overload
def iso(ts: _dt.datetime | None) -> str | None: ...


def iso(ts: _dt.datetime | None) -> str | None:
    if ts is None:
        return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=_dt.timezone.utc)
    ts = ts.astimezone(_dt.timezone.utc)
    # not strftime: glibc renders year 1 as "1", not "0001"
    return (f"{ts.year:04d}-{ts.month:02d}-{ts.day:02d}T{ts.hour:02d}:{ts.minute:02d}:{ts.second:02d}."
            f"{ts.microsecond // 1000:03d}Z")


def utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc)


def now_iso() -> str:
    return iso(utcnow())


def iso_ns(ns: int) -> str:
    """A file mtime (ns since the epoch)."""
    return iso(_dt.datetime.fromtimestamp(ns / 1e9, tz=_dt.timezone.utc))
