"""ttl and since parsing (docs/protocol.md §4.1, §4.2).

ISO 8601 instants and dates, the few human date forms that JS `Date.parse`
accepts and callers actually send, and the duration shorthand ("30d", "12h",
"45m", "8 hours ago"). ISO 8601 *durations* are a trap callers fall into; they
are recognised so the error can show the shorthand rewrite.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import email.utils
import re

from ...indexer.vault.timestamps import iso, utcnow
from .errors import InvalidParams

_UNITS = {
    "s": 1, "sec": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
}
_UNIT_ALT = "|".join(sorted(_UNITS, key=len, reverse=True))
_SHORTHAND = re.compile(rf"^(\d+)\s*({_UNIT_ALT})$", re.IGNORECASE)
_AGO = re.compile(rf"^(\d+)\s*({_UNIT_ALT})(\s+ago)?$", re.IGNORECASE)
# a bare "2026" stays unparseable: as a ttl or since it is more likely a count than a year
_YEAR_MONTH = re.compile(r"^([0-9]{4})-([0-9]{2})$")
_ISO_DURATION = re.compile(r"^P(\d+[YMWD])*(T(\d+[HMS])+)?$", re.IGNORECASE)

_HUMAN_FORMATS = (
    "%B %d, %Y %H:%M:%S",
    "%B %d, %Y %H:%M",
    "%B %d, %Y",
    "%b %d, %Y %H:%M:%S",
    "%b %d, %Y",
    "%d %B %Y",
    "%d %b %Y",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%d %H:%M",
)

ACCEPTED_FORMS = (
    'an ISO 8601 date or datetime such as "2026-06-12" or '
    '"2026-06-12T09:30:00Z", or a date like "June 12, 2026"'
)


def parse_date(text: str) -> _dt.datetime | None:
    """Parse an absolute date/datetime; zone-less values are taken as UTC."""
    t = text.strip()
    if not t:
        return None
    candidate = t[:-1] + "+00:00" if t[-1] in "Zz" else t
    try:
        ts = _dt.datetime.fromisoformat(candidate)
    except ValueError:
        ts = None
    m = _YEAR_MONTH.match(t) if ts is None else None
    if m:  # ISO "2026-06": JS Date.parse takes it as UTC midnight of the first day
        try:
            ts = _dt.datetime(int(m.group(1)), int(m.group(2)), 1)
        except ValueError:
            return None
    if ts is None:
        try:
            ts = email.utils.parsedate_to_datetime(t)
        except (TypeError, ValueError, IndexError):
            ts = None
    if ts is None:
        # "January 1, 2000 00:00:00 GMT": drop a trailing zone name we know
        stripped = re.sub(r"\s+(GMT|UTC|Z)$", "", t, flags=re.IGNORECASE)
        for fmt in _HUMAN_FORMATS:
            try:
                ts = _dt.datetime.strptime(stripped, fmt)
                break
            except ValueError:
                continue
    if ts is None:
        return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=_dt.timezone.utc)
    try:
        return ts.astimezone(_dt.timezone.utc)
    except OverflowError:  # "0001-01-01T00:00:00+01:00" is before year 1 in UTC
        return None


def parse_ttl(value: str | None, now: _dt.datetime | None = None) -> str | None:
    """The instant a fact stops being valid, as ISO, or None for never."""
    if value is None:
        return None
    t = value.strip()
    if not t:
        return None
    now = now or utcnow()
    if len(t) > 1 and t[0] in "Pp" and (t[1].isdigit() or t[1] in "Tt") and _ISO_DURATION.match(t):
        short = re.sub(r"^PT?", "", t, flags=re.IGNORECASE).lower()
        raise InvalidParams(
            f"ttl {value!r} is an ISO 8601 duration, which remember does not accept.",
            f'Use the shorthand instead: ttl "{short}" (seconds s, minutes m, hours h, '
            'days d), or an absolute ISO 8601 timestamp such as "2026-12-31T00:00:00Z".',
        )
    m = _SHORTHAND.match(t)
    if m:
        until = _shift(now, int(m.group(1)) * _UNITS[m.group(2).lower()])
        if until is None:
            raise InvalidParams(
                f"ttl {value!r} reaches past the year 9999.",
                'Use a shorter duration such as "3650d", or omit ttl for a fact that never expires.',
            )
        return iso(until)
    ts = parse_date(t)
    if ts is None:
        raise InvalidParams(
            f"Cannot parse ttl {value!r}.",
            'Give a duration shorthand like "30d", "12h", "45m" or "90s" (weeks, months '
            'and years are not units: write "7d" for a week), or an absolute ISO 8601 '
            'timestamp like "2026-12-31T00:00:00Z". Omit ttl for a fact that never expires.',
        )
    return iso(ts)


def parse_since_lenient(value: str, now: _dt.datetime | None = None) -> _dt.datetime | None:
    """recall's since: a date, or "30m" / "8 hours ago"; None when unparseable."""
    ts = parse_date(value)
    if ts is not None:
        return ts
    m = _AGO.match(value.strip())
    if m:
        # before year 1 is as unparseable as nonsense: an empty arm
        return _shift(now or utcnow(), -int(m.group(1)) * _UNITS[m.group(2).lower()])
    return None


def _shift(ts: _dt.datetime, seconds: int) -> _dt.datetime | None:
    """ts + seconds, or None when that leaves the calendar (years 1..9999)."""
    try:
        return ts + _dt.timedelta(seconds=seconds)
    except OverflowError:
        return None


def parse_since_strict(value: str | None, param: str = "since") -> _dt.datetime | None:
    """context_pack / delta since: absent → None, unparseable → invalid_params."""
    if value is None or not value.strip():
        return None
    ts = parse_date(value)
    if ts is None:
        raise InvalidParams(
            f"{param} is not a parseable timestamp: {value[:80]!r}.",
            f"Pass {param} as {ACCEPTED_FORMS}; relative phrases are not accepted here.",
        )
    return ts


# -- what a person types after --since -----------------------------------------
# The wire keeps §4.2's forms (docs/protocol.md §4.2); the CLI turns these into
# an ISO instant before it calls, so an agent and a person mean the same thing.

_HUMAN_UNITS = {**_UNITS, "w": 7 * 86400, "wk": 7 * 86400, "week": 7 * 86400, "weeks": 7 * 86400}
_MONTHS = ("month", "months", "mo")
_YEARS = ("year", "years", "y", "yr")
_HUMAN_ALT = "|".join(sorted([*_HUMAN_UNITS, *_MONTHS, *_YEARS], key=len, reverse=True))
_HUMAN_AGO = re.compile(rf"^(?:(\d+|an?|one)\s*({_HUMAN_ALT})\s+ago|(\d+)\s*({_HUMAN_ALT})|last\s+(\d+)\s*({_HUMAN_ALT}))$",
                        re.IGNORECASE)
_LAST = re.compile(rf"^(?:last|past|this)\s+({_HUMAN_ALT})$", re.IGNORECASE)

HUMAN_SINCE_FORMS = ('a date like 2026-06-12, an ISO time, today, yesterday, last week, last month, '
                     '"3 days ago", "2 weeks ago", "8 hours ago" or "30m"')


def _months_back(now: _dt.datetime, n: int) -> _dt.datetime | None:
    """The same day and time n calendar months earlier (clamped to the month's last day)."""
    y, m = divmod(now.year * 12 + now.month - 1 - n, 12)
    if y < 1:
        return None
    return now.replace(year=y, month=m + 1, day=min(now.day, calendar.monthrange(y, m + 1)[1]))


def _back(now: _dt.datetime, n: int, unit: str) -> _dt.datetime | None:
    u = unit.lower()
    if u in _MONTHS:
        return _months_back(now, n)
    if u in _YEARS:
        return _months_back(now, 12 * n)
    return _shift(now, -n * _HUMAN_UNITS[u])


def _local_midnight(now: _dt.datetime, days_back: int) -> _dt.datetime:
    """Midnight of the person's own day (local time), days_back days ago, in UTC."""
    local = now.astimezone()
    start = local.replace(hour=0, minute=0, second=0, microsecond=0) - _dt.timedelta(days=days_back)
    return start.astimezone(_dt.timezone.utc)


def parse_since_human(value: str, now: _dt.datetime | None = None) -> _dt.datetime | None:
    """--since as people type it: everything recall accepts, plus today, yesterday,
    last week/month/year, "2 weeks ago", "a month ago", "last 3 days"; None otherwise."""
    now = now or utcnow()
    t = " ".join(value.strip().split())
    word = t.lower()
    if word in ("today", "now"):
        return now if word == "now" else _local_midnight(now, 0)
    if word == "yesterday":
        return _local_midnight(now, 1)
    m = _LAST.match(t)
    if m:
        return _back(now, 1, m.group(1))
    m = _HUMAN_AGO.match(t)
    if m:
        count, unit = next((c, u) for c, u in (m.group(1, 2), m.group(3, 4), m.group(5, 6)) if u)
        n = 1 if count.lower() in ("a", "an", "one") else int(count)
        return _back(now, n, unit)
    return parse_date(t)


def parse_iso(text: str) -> _dt.datetime:
    """Parse a timestamp this server wrote (or any ISO 8601 form) as UTC."""
    t = text.strip()
    if t.endswith("Z") or t.endswith("z"):
        t = t[:-1] + "+00:00"
    ts = _dt.datetime.fromisoformat(t)
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=_dt.timezone.utc)
    return ts.astimezone(_dt.timezone.utc)
