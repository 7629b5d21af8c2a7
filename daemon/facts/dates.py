"""The dates of a fact as words a keyword query can meet.

A fact is indexed with the words of its days beside its text: the ISO dates
its provenance names ("chat 2023-05-07" — when it was said, which an agent
remembering an older conversation puts there), else the day it was saved
(`valid_from`). "2023-05-07" becomes `2023 may 7 sunday`, so a
question asking about "May" or "7 May 2023" can match the facts of that day.
A question's own ISO dates, "today" and "yesterday" become the same words.
"""

from __future__ import annotations

import datetime as _dt
import re

_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _days(text) -> list[_dt.date]:
    if not isinstance(text, str):
        return []
    out = []
    for m in _ISO_DAY.finditer(text):
        try:
            out.append(_dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
        except ValueError:
            continue
    return out


def day_words(day: _dt.date) -> str:
    return f"{day.year} {MONTHS[day.month - 1]} {day.day} {WEEKDAYS[day.weekday()]}"


def date_words(valid_from, provenance) -> str:
    """The words of the fact's days: those its provenance names (when it was said), else the
    day it was saved. Never raises: a malformed date only means fewer words."""
    days: list[_dt.date] = []
    for day in _days(provenance)[:3] or _days(valid_from)[:1]:
        if day not in days:
            days.append(day)
    return " ".join(day_words(d) for d in days)


_RELATIVE_DAYS = {"today": 0, "yesterday": 1}


def query_date_words(query: str, today: _dt.date) -> str:
    """Day words for the dates a question names: ISO days, "today", "yesterday"."""
    days = _days(query)
    for word in re.findall(r"[a-z]+", query.lower()):
        if word in _RELATIVE_DAYS:
            days.append(today - _dt.timedelta(days=_RELATIVE_DAYS[word]))
    return " ".join(day_words(d) for d in days[:3])
