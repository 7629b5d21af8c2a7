"""Query terms as both page backends read them: the analyzer, stop words, tokens, keys and field weights.

The embedded keyword index (indexer/pages/keyword.py) indexes with this
analyzer, and the PostgreSQL search (daemon/postgres/page_search.py) weighs
its fields in these proportions, so a query means the same words on both.
Nothing here holds a connection or an index.
"""

from __future__ import annotations

import re

import tantivy

MAX_QUERY_TOKENS = 32
MAX_KEY_CHARS = 200
BOOSTS = {"title": 4.0, "aliases": 4.0, "headings": 2.5, "path": 1.5, "tags": 1.5, "body": 1.0}

_STOP_WORDS = (
    "a about after all also am an and any are as at be been before being but by can could did do does doing for "
    "from had has have having he her here hers him his how i if in into is it its me my myself no not now of on "
    "or our ours she should so some than that the their them then there these they this those to too us very "
    "was we were what when where which while who whom why will with would you your yours"
).split()

TEXT_ANALYZER = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.remove_long(40))
    .filter(tantivy.Filter.lowercase())
    .filter(tantivy.Filter.stemmer("english"))
    .build()
)


def analyze(text: str) -> list[str]:
    """The index's tokens for a text (lowercased, English-stemmed)."""
    if not text:
        return []
    return TEXT_ANALYZER.analyze(text)


# the stemmer turns "was" into "wa" and "does" into "doe": compare stems with stems
STOPWORDS = frozenset(_STOP_WORDS) | frozenset(t for w in _STOP_WORDS for t in analyze(w))


def query_tokens(text: str) -> list[str]:
    """Distinct tokens of a query, in order, capped so no query is unbounded."""
    seen: list[str] = []
    for t in analyze(text):
        if t not in seen:
            seen.append(t)
            if len(seen) >= MAX_QUERY_TOKENS:
                break
    return seen


def content_tokens(tokens: list[str]) -> list[str]:
    """The tokens that say what is asked ("who", "the", "did" dropped), unless nothing else is left."""
    return [t for t in tokens if t not in STOPWORDS] or tokens


class TermFinder:
    """Which analyzed query tokens a text holds, found by word prefix ("migrat" in "migration").

    About twenty times cheaper than analyzing each text; a stem the stemmer
    ended in "i" ("compani") also matches its "y" spelling ("company").
    """

    def __init__(self, tokens: list[str]):
        self.tokens = list(tokens)
        prefixes = [re.escape(t[:-1] if len(t) > 3 and t.endswith("i") else t) for t in self.tokens]
        # one pattern per token: each search stops at its first hit
        self._each = [(t, re.compile(r"\b" + p, re.IGNORECASE)) for t, p in zip(self.tokens, prefixes)]
        self._re = re.compile(r"\b(?:" + "|".join(prefixes) + ")", re.IGNORECASE) if prefixes else None

    def found(self, text: str) -> set[str]:
        if not text:
            return set()
        return {t for t, rx in self._each if rx.search(text)}

    def any(self, text: str) -> bool:
        """Whether `text` holds any query token (one scan)."""
        return self._re is not None and self._re.search(text) is not None

    def first(self, text: str) -> int:
        """Where the first query token starts in `text` (0 when none does)."""
        m = self._re.search(text) if self._re is not None else None
        return m.start() if m else 0


def text_key(text: str | None) -> str:
    """A heading or query as one comparable key: its tokens joined ("2026-10-01 — Kickoff" → "2026 10 01 kickoff")."""
    return " ".join(analyze(text or ""))[:MAX_KEY_CHARS]


def number_forms(key: str) -> list[str]:
    """The key, then its last word in the other number: "hotkey" → hotkeys, "themes" → theme,
    "category" → categories. A one-word query names the page titled in either number."""
    if not key:
        return []
    head, _, last = key.rpartition(" ")
    head = f"{head} " if head else ""
    sibilant = last.endswith(("s", "x", "z", "ch", "sh"))
    forms = [last + "es"] if sibilant else [last + "s"]
    if last.endswith("y") and len(last) > 2 and last[-2] not in "aeiou":
        forms = [last[:-1] + "ies"]
    if last.endswith("ies") and len(last) > 4:
        forms = [last[:-3] + "y"]
    elif last.endswith("es") and last[:-2].endswith(("s", "x", "z", "ch", "sh")):
        forms = [last[:-2]]
    elif last.endswith("s") and not last.endswith(("ss", "us", "is")) and len(last) > 3:
        forms = [last[:-1]]
    out = [key]
    for f in forms:
        if head + f not in out:
            out.append(head + f)
    return out
