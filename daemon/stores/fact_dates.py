"""The dates of a fact as words a keyword query can meet (both facts stores index them).

A fact is indexed with the words of its days beside its text: the ISO dates
its provenance names ("chat 2023-05-07" — when it was said, which an agent
remembering an older conversation puts there), else the day it was saved
(`valid_from`), and the days its text names relative to that day ("we
went climbing last Saturday", said on 2023-05-07, also gets Saturday
2023-05-06). "2023-05-07" becomes `2023 may 7 sunday`, so a
question asking about "May" or "7 May 2023" can match the facts of that day.
A question's own ISO dates and the days it names relative to today ("today",
"yesterday", "3 days ago", "last Saturday") become the same words.
"""

from __future__ import annotations

import datetime as _dt
import re

_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _days(text: object) -> list[_dt.date]:
    if not isinstance(text, str):
        return []
    out: list[_dt.date] = []
    for m in _ISO_DAY.finditer(text):
        try:
            out.append(_dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))))
        except ValueError:
            continue
    return out


def day_words(day: _dt.date) -> str:
    return f"{day.year} {MONTHS[day.month - 1]} {day.day} {WEEKDAYS[day.weekday()]}"


def date_words(valid_from: object, provenance: object, text: object = None) -> str:
    """The words of the fact's days: those its provenance names (when it was said), else the
    day it was saved, and the days its text names relative to the first of them ("yesterday",
    "3 days ago", "last Saturday"). Never raises: a malformed date only means fewer words."""
    days: list[_dt.date] = []
    said = _days(provenance)[:3] or _days(valid_from)[:1]
    named = _named_days(text, said[0]) if said and isinstance(text, str) else []
    for day in said + named[:3]:
        if day not in days:
            days.append(day)
    return " ".join(day_words(d) for d in days)


_RELATIVE_DAYS = {"today": 0, "yesterday": 1}
_RELATIVE = re.compile(
    r"\b(?:(?P<n>\d{1,3}|a|one|two|three|four|five|six|seven|ten) days? ago"
    r"|(?:last|past) (?P<weekday>" + "|".join(WEEKDAYS) + r")"
    r"|(?P<before>the day before yesterday))\b")
_COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "ten": 10}


def _relative_days(query: str, today: _dt.date) -> list[_dt.date]:
    """The days that "3 days ago", "last Saturday" (the latest Saturday before today) and
    "the day before yesterday" name, counted from `today`."""
    out: list[_dt.date] = []
    for m in _RELATIVE.finditer(query.lower()):
        if m.group("before"):
            out.append(today - _dt.timedelta(days=2))
        elif m.group("weekday"):
            back = (today.weekday() - WEEKDAYS.index(m.group("weekday"))) % 7 or 7
            out.append(today - _dt.timedelta(days=back))
        else:
            n = m.group("n")
            out.append(today - _dt.timedelta(days=int(n) if n.isdigit() else _COUNTS[n]))
    return out


def _named_days(text: str, today: _dt.date) -> list[_dt.date]:
    """The days `text` names relative to `today`: "today", "yesterday", "3 days ago", "last
    Saturday", "the day before yesterday"."""
    days = _relative_days(text, today)
    lowered = re.sub(r"the day before yesterday", "", text.lower())
    for word in re.findall(r"[a-z]+", lowered):
        if word in _RELATIVE_DAYS:
            days.append(today - _dt.timedelta(days=_RELATIVE_DAYS[word]))
    return days


def query_date_words(query: str, today: _dt.date) -> str:
    """Day words for the dates a question names: ISO days, "today", "yesterday", "3 days
    ago", "last Saturday", "the day before yesterday"."""
    return " ".join(day_words(d) for d in (_days(query) + _named_days(query, today))[:3])
