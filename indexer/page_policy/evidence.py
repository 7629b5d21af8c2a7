"""How sure a search result is: its `evidence` and `create_safety` (docs/protocol.md §4.6).

Strongest first:
  alias_hit          the query is one of the page's declared aliases
  exact_title_match  the query is the page's title, or its words stand in
                     the title in order
  high_vector_match  the query and the shown passage mean nearly the same
                     (cosine ≥ HIGH_VECTOR)
  keyword_exact      the query is one of the page's headings; or a keyword
                     hit that scores within SHARE of the best result and
                     holds at least COVERAGE of the query's telling words
                     (idf-weighted: "billing" counts, "who" and "the" do not)
                     in its title, aliases, heading path or passage; when
                     the vectors took part, meaning must agree too: the
                     page's nearest chunk or card is among the first AGREE
                     pages by meaning; keyword-only, the page must lead every
                     other by LEAD (pages tied on the query's words do not
                     say which one is meant)
  weak_semantic      anything else: related, not shown to be the answer
COVERAGE and SHARE come from bench/eval_pages.py --evidence: the values at
which no right first hit of the page questions is labelled weak, in either
mode, while most runners-up that are wrong are (see the README). AGREE
comes from the same figures on npm-tune: a keyword hit that the vectors
place far down was, as the first answer, wrong about as often as right
(a question that shares "package" and "version" with a page is not about
it): keyword_exact first answers there went from 13 right and 15 wrong to
13 right and 5 wrong. LEAD likewise, keyword-only: npm-tune 14 / 25 became
13 / 19, the sample_brain questions 78 / 11 became 76 / 6.
"""

from __future__ import annotations

from collections.abc import Container

from .terms import analyze

HIGH_VECTOR = 0.8
COVERAGE = 0.2
SHARE = 0.9
AGREE = 3
LEAD = 1.05
CREATE_SAFETY = {"alias_hit": "exists", "exact_title_match": "exists", "high_vector_match": "exists",
                 "keyword_exact": "probable", "weak_semantic": "unknown"}


def coverage(idf: dict[str, float], found: Container[str]) -> float:
    """The idf-weighted share of the query's content tokens (idf's keys) that were `found`."""
    total = sum(idf.values())
    if total <= 0:
        return 0.0
    return sum(w for t, w in idf.items() if t in found) / total


def _contiguous(needle: list[str], hay: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(hay[i:i + n] == needle for i in range(len(hay) - n + 1))


def evidence_of(*, exact: str | None, tokens: list[str], title: str, cosine: float | None,
                lexical: bool, cover: float, share: float, meaning_rank: int | None = None,
                lead: float = float("inf")) -> str:
    """`exact`: which exact arm found the page ("alias", "title", "heading") or None;
    `cover`: coverage() of the shown chunk; `share`: its fused score over the best one's;
    `meaning_rank`: the page's best place (0 first) by chunk or card vector, a large number
    when the vectors did not find it, None when they took no part (keyword-only); `lead`: its
    score over the best other page's (asked only keyword-only)."""
    if exact == "alias":
        return "alias_hit"
    if exact == "title" or _contiguous(tokens, analyze(title)):
        return "exact_title_match"
    if cosine is not None and cosine >= HIGH_VECTOR:
        return "high_vector_match"
    agrees = lead >= LEAD if meaning_rank is None else meaning_rank < AGREE
    if exact == "heading" or (lexical and cover >= COVERAGE and share >= SHARE and agrees):
        return "keyword_exact"
    return "weak_semantic"
