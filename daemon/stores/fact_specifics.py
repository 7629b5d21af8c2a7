"""Whether two near-identical facts differ in a specific: a number, a date or a name.

An embedding scores "dentist appointment on 2026-12-10" and "… on
2026-12-17" as the same sentence (cosine 0.998), yet they are two
appointments. So supersession and the duplicate answer, which decide by
cosine, never merge two facts whose words differ in a specific
(docs/protocol.md §3.2, "Specifics").
"""

from __future__ import annotations

import re
from collections import Counter

# a word, keeping dates, times, amounts and versions whole: 2026-12-10, 9:15, 4.5, v2
_TOKEN = re.compile(r"\w+(?:[./:,-]\w+)*")

_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred thousand million billion dozen half once twice first second third fourth fifth sixth "
    "seventh eighth ninth tenth last next".split()
)
_DATE_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays "
    "fridays saturdays sundays january february april june july august september october "
    "november december jan feb apr jun jul aug sep sept oct nov dec today tomorrow yesterday "
    "tonight morning afternoon evening noon midnight weekend week month year quarter spring summer "
    "autumn winter am pm".split()
)


def _words(text: str) -> Counter[str]:
    return Counter(m.group().casefold() for m in _TOKEN.finditer(text))


def _capitalized(text: str) -> set[str]:
    """The words written with a capital letter (a name, or a sentence's first word)."""
    return {m.group().casefold() for m in _TOKEN.finditer(text) if m.group()[0].isupper()}


def _specific(word: str, capitalized: set[str]) -> bool:
    return (any(c.isdigit() for c in word) or word in _NUMBER_WORDS or word in _DATE_WORDS
            or word in capitalized)


def differ_in_specifics(a: str, b: str) -> bool:
    """True when a word only one of the two facts has is a number, a date or a name.

    Words either fact writes with a capital count as names, a sentence's
    first word included: a missed merge stores one fact too many, which
    recall shows beside the other, while a wrong merge hides a true fact.
    """
    wa, wb = _words(a), _words(b)
    differing = (wa - wb) + (wb - wa)
    if not differing:
        return False
    capitalized = _capitalized(a) | _capitalized(b)
    return any(_specific(w, capitalized) for w in differing)
