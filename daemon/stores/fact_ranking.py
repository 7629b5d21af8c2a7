"""Facts ranked by what they say: the policy both facts stores rank by (docs/architecture.md, "Facts ranking").

Two arms, combined by score:

- keyword: the facts holding the query's content words and the words of the
  dates it names (`fact_dates.py`), each fact's text weighing TEXT_WEIGHT and
  its date words DATE_WEIGHT. With vectors, a word in most facts (a speaker's
  name opening every turn) is left out of it.
- vector: cosine to the fact vectors once the embedding model has loaded; with
  such a common word in the question, to the mean of the question's vector and
  that of the question without it.

A fact's own score is its cosine plus a share of its keyword score, cut down
when the fact says little (a few content words: "how's Sam" shares the
question's one rare word and would win on it). Its score is that plus a share
of its best neighbour's own score (`fact_neighbours.py`: the turns up to two
before or after it in the same conversation, the nearer lending more), so a
turn that only points at its subject ("look at this!", "Mango" two turns after
"she renamed the cat") rises with the turn that names it. A fact is returned
only when it or a neighbour matched (a keyword hit, or a cosine at or above
VECTOR_FLOOR): a query that matches nothing returns nothing.

Each store reads the arms in its own query language (`FactCandidates`), every
clause of the caller's scope and viewer applied before any limit, so a remote
caller's ranking never touches a private row; `rank_facts` runs no query of its
own: it asks for candidates and returns their order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from ...indexer.vault.timestamps import utcnow
from .fact_dates import query_date_words
from .facts import Fact

if TYPE_CHECKING:   # numpy only once a ranking runs: not on the CLI's hot path
    from .vectors import FactVectorsStore, Vector

DEPTH = 50             # candidates each arm contributes to the fusion
MAX_TERMS = 32
# cosine a vector-only hit needs: `bench/retrieval_eval.py --calibrate` (Youden's J over evidence
# turns vs. the nearest turn of unanswerable questions) said 0.55 on the project's own set; 0.4
# keeps that set's unanswerable questions as empty and finds more answers on the tune set
VECTOR_FLOOR = 0.4
TEXT_WEIGHT, DATE_WEIGHT = 1.0, 0.3
# chosen on bench/data/hard/conv_a.md (`bench/retrieval_eval.py --set hard-tune`), never on the report set
KEYWORD_SHARE = 0.3     # weight of the keyword score (relative to the best keyword hit) beside the cosine
NEIGHBOUR_SHARE = 0.5   # share of the best neighbour's score a fact adds to its own ...
DISTANCE_DECAY = 0.5    # ... times this for each turn further away (fact_neighbours.WINDOW turns at most)
SAYS_LITTLE = 5         # a fact with n < this many content words keeps n / SAYS_LITTLE of its own score
NEIGHBOUR_FLOOR = 0.15  # cosine a fact that matched nothing itself needs to come with a neighbour
COMMON_SHARE = 0.2      # a word in more than this share of the facts' text is left out of the keyword arm
COMMON_MIN_FACTS = 20   # ... once there are enough facts to say
COMMON_WINDOW = 2000    # ... counted among the latest this many facts

STOPWORDS = frozenset("""
a about after again all also am an and any are as at be been before being both but by can could did do does
doing done for from had has have having he her here hers him his how i if in into is it its itself just me
more most my no nor not now of off on once only or other our ours out over own same she should so some such
than that the their theirs them then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours s t d ll m re ve tell know
""".split())
_WORD = re.compile(r"\w+", re.UNICODE)


def content_words(query: str) -> list[str]:
    """The query's content words and the words of the dates it names, lower-cased, each once:
    letters, digits and underscores only, so no store's query language reads one as an operator."""
    words: list[str] = []
    for w in _WORD.findall(f"{query} {query_date_words(query, utcnow().date())}".lower()):
        w = w.strip("_")
        if w and w not in STOPWORDS and w not in words:
            words.append(w)
            if len(words) >= MAX_TERMS:
                break
    return words


def common_in(counts: Iterable[tuple[str, int]], total: int) -> list[str]:
    """The words held by more than COMMON_SHARE of `total` facts (the latest COMMON_WINDOW in
    scope), from (word, how many of them hold it); none while there are too few facts to say.
    A name that opens every turn of a conversation ("Tom: ...") matches half the facts: on its
    own it would rank any turn of Tom's above the one that answers (the keyword score's IDF only
    damps it; the sentence vector of a short turn is mostly the name). Each store counts among
    the facts the caller may see only, so what a remote caller gets never depends on a private
    fact; among the latest ones, so the count costs the same at any size."""
    if total < COMMON_MIN_FACTS:
        return []
    cap = common_cap(total)
    return [w for w, n in counts if n >= cap]


def common_cap(total: int) -> int:
    """How many of `total` facts a word must be in to be common."""
    return int(total * COMMON_SHARE) + 1


def keyword_words(words: list[str], common: list[str]) -> list[str]:
    """The words the keyword arm looks for: those not in `common` (all of them when every word is common)."""
    return [w for w in words if w not in common] or words


def query_vector(vectors: FactVectorsStore, query: str, common: list[str]) -> Vector:
    """The query's vector; with common words, the mean of it and the vector of the query
    without them, so a name in every turn weighs half as much in the cosine."""
    q = vectors.query_vector(query)
    if not common:
        return q
    rest = re.sub(r"\b(?:" + "|".join(map(re.escape, common)) + r")(?:'s)?\b", " ", query, flags=re.I)
    if not any(w.lower() not in STOPWORDS for w in _WORD.findall(rest)):
        return q
    import numpy as np

    mean: Vector = q + vectors.query_vector(rest)
    return mean / np.float32(np.linalg.norm(mean))


def fuse(ids: set[int], keyword: dict[int, float], cosine: dict[int, float], near: dict[int, dict[int, int]],
         floor: float, hybrid: bool, limit: int,
         weigh: Callable[[list[int]], dict[int, float]] | None = None) -> list[int]:
    """The best `limit` fact ids, best first: each fact's own score (cosine plus KEYWORD_SHARE
    of its keyword score relative to the best keyword hit; the keyword score alone without
    vectors) times its weight (`weigh(ids)`, at most 1: `little_shares`), plus NEIGHBOUR_SHARE
    × DISTANCE_DECAY ** (turns apart - 1) of its best neighbour's own score, unweighted: "what?
    to what" says little itself, but it lends what it matched to "Mango", the turn that answers
    it. A fact is returned when it matched (a keyword hit, or a cosine at or above `floor`: a
    query that matches nothing returns nothing), or when a neighbour matched and its own cosine
    is not unrelated (NEIGHBOUR_FLOOR): "look at this!" comes with the turn before it, an
    unrelated note saved next to a hit does not."""
    top = max(keyword.values(), default=0.0) or 1.0
    own: dict[int, float] = {}
    for fid in ids:
        kw = keyword.get(fid, 0.0) / top
        own[fid] = cosine.get(fid, 0.0) + KEYWORD_SHARE * kw if hybrid else kw
    matched = {fid for fid in ids if fid in keyword or cosine.get(fid, 0.0) >= floor}
    lent: dict[int, float] = {}
    for fid in ids:
        around = near.get(fid, {})
        if fid not in matched and (not hybrid or cosine.get(fid, 0.0) < NEIGHBOUR_FLOOR
                                   or not any(n in matched for n in around)):
            continue
        lent[fid] = NEIGHBOUR_SHARE * max(
            (DISTANCE_DECAY ** (d - 1) * own.get(n, 0.0) for n, d in around.items()), default=0.0)
    # a weight only lowers a score: weigh the facts best first by their unweighted score, and
    # stop once `limit` weighted scores beat every unweighted one left (the same answer as
    # weighing all of them, for the price of a few dozen)
    upper = sorted(lent, key=lambda fid: (-(own[fid] + lent[fid]), -fid))
    scores: dict[int, float] = {}
    for at in range(0, len(upper), 2 * limit):
        if len(scores) >= limit and sorted(scores.values())[-limit] > own[upper[at]] + lent[upper[at]]:
            break
        batch = upper[at:at + 2 * limit]
        weight = weigh(batch) if weigh else {}
        for fid in batch:
            scores[fid] = own[fid] * weight.get(fid, 1.0) + lent[fid]
    return sorted(scores, key=lambda fid: (-scores[fid], -fid))[:limit]


_SPEAKER = re.compile(r"^[^\W\d][\w .'-]{0,39}:\s")  # "Tom: ", "Mary-Jane O'Neil: "


def little_shares(rows: Iterable[tuple[int, str]]) -> dict[int, float]:
    """fact id -> the share of its own score a fact keeps for how little it says, from (id, text)
    rows: its content words (after a leading speaker label) over SAYS_LITTLE, for the facts with
    fewer. "how's Sam" shares the question's one rare word and, being short, wins the keyword
    arm and the cosine over the turn that answers; a turn with a few words to say is rarely the
    answer (tune set: the evidence turns have 14 words at the median, 4 % have 4 or fewer)."""
    out: dict[int, float] = {}
    for fid, text in rows:
        n = sum(1 for w in _WORD.findall(_SPEAKER.sub("", text, count=1).lower()) if w not in STOPWORDS)
        if n < SAYS_LITTLE:
            out[fid] = n / SAYS_LITTLE
    return out


class FactCandidates(Protocol):
    """What ranking reads from one facts store, for one caller's scope and viewer: every id
    it answers with is of a fact in that scope the viewer may see."""

    def common_words(self, words: list[str]) -> list[str]:
        """The words common in the latest facts in scope (`common_in`)."""
        ...

    def keyword(self, words: list[str], depth: int) -> dict[int, float]:
        """fact id -> keyword score, the best `depth` facts holding any of the words."""
        ...

    def nearest(self, qv: Vector, depth: int) -> dict[int, float]:
        """fact id -> cosine to `qv`, the best `depth` facts."""
        ...

    def cosines(self, qv: Vector, ids: set[int]) -> dict[int, float]:
        """fact id -> cosine to `qv`, for those of `ids` that have a vector."""
        ...

    def neighbours(self, ids: list[int]) -> dict[int, dict[int, int]]:
        """fact id -> {neighbour id: turns apart}, both ways (`fact_neighbours.py`); a neighbour
        may be out of scope: `in_scope` says."""
        ...

    def in_scope(self, ids: set[int]) -> set[int]:
        """Those of `ids` in scope."""
        ...

    def texts(self, ids: list[int]) -> list[tuple[int, str]]:
        """(fact id, text) of the given facts."""
        ...


def rank_facts(candidates: FactCandidates, vectors: FactVectorsStore | None, query: str, limit: int, *,
               floor: float = VECTOR_FLOOR) -> list[int]:
    """The ids of the facts most relevant to `query` among the candidates, best first, at most
    `limit`; by keyword alone without `vectors` (the model has not loaded)."""
    depth = max(DEPTH, limit)
    words = content_words(query)
    common = candidates.common_words(words)
    # without vectors the common word stays: the keyword score's IDF damps it, and it is then the only
    # thing that tells one speaker's turns from the other's (tune set: R@10 0.286 with it, 0.268 without)
    keyword = candidates.keyword(keyword_words(words, common) if vectors is not None else words, depth)
    cosine: dict[int, float] = {}
    qv = None
    if vectors is not None:
        qv = query_vector(vectors, query, common)
        cosine = candidates.nearest(qv, depth)
    found = set(keyword) | set(cosine)
    near = candidates.neighbours(sorted(found))
    # a neighbour outside the caller's scope (private, expired) lends no score; one beyond the
    # keyword arm's depth lends only its cosine
    around = candidates.in_scope({j for i in found for j in near.get(i, {})} - found)
    if qv is not None:
        cosine.update(candidates.cosines(qv, (found | around) - set(cosine)))
    return fuse(found | around, keyword, cosine, near, floor, vectors is not None, limit,
                lambda batch: little_shares(candidates.texts(batch)))


def in_rank_order(facts: Sequence[Fact], ids: list[int]) -> list[Fact]:
    """The facts in the order of `ids` (rank_facts' answer), those read back only."""
    by_id = {f.id: f for f in facts}
    return [by_id[i] for i in ids if i in by_id]
