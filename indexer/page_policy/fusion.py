"""One page score from the keyword arm, the chunk vectors and the page cards.

Each arm ranks pages; a page earns `weight / (RANK_K + rank)` from each list
it is in (reciprocal-rank fusion, with a small K so the first places count
most). The keyword arm's weight is the share of the query (idf-weighted) its
best chunk on that page holds: a keyword hit on two words of a twelve-word
question is weak evidence, while the same page found by meaning is not. Two
terms keep what ranks alone lose: how far the keyword leader is ahead of the
rest, and how close in meaning the best chunk is. A long question (more
than KEYWORD_WORDS telling words) weighs the keyword list less, by
KEYWORD_WORDS / its words: BM25 over a dozen words finds pages that share
two or three of them (a title word, "package", "version"), while the
vectors read the sentence whole. The weights were chosen on
bench/eval_pages.py's tuning sets (npm-tune, the sample_brain questions and
headings), never on the reported set.
"""

from __future__ import annotations

from collections.abc import Sequence

RANK_K = 3                 # reciprocal-rank constant: small, so a first place stands out
DEPTH = 40                 # places of each list that count
KEYWORD_RANK = 2.0         # the keyword list's weight at full query coverage
CHUNK_RANK = 1.0           # the nearest-chunk list's weight
CARD_RANK = 0.75           # the nearest-card list's weight
KEYWORD_LEAD = 0.4         # keyword score as a share of the best, times coverage squared
COSINE = 0.5               # the best chunk's cosine above COSINE_FLOOR
COSINE_FLOOR = 0.3
KEYWORD_WORDS = 6          # telling query words up to which the keyword list keeps its full weight


def fuse(keyword: Sequence[tuple[int, int, float]], cover: dict[int, float], chunks: Sequence[tuple[int, int, float]],
         cards: Sequence[tuple[int, int, float]], words: int = 1) -> dict[int, float]:
    """page id → fused score. `keyword`: [(page, chunk, score)] best first; `cover`: page →
    coverage of its keyword chunk (a page left out counts as the leader's); `chunks`, `cards`:
    [(page, chunk, cosine)] best first, one per page; `words`: the query's telling words."""
    fused: dict[int, float] = {}
    if not (chunks or cards):   # keyword only: the keyword scores as they stand
        best = keyword[0][2] if keyword else 1.0
        return {pid: score / (best or 1.0) for pid, _, score in keyword}
    if keyword:
        best = keyword[0][2] or 1.0
        lead_cover = cover.get(keyword[0][0], 1.0)
        weight = min(1.0, KEYWORD_WORDS / max(1, words))
        for rank, (pid, _, score) in enumerate(keyword[:DEPTH]):
            c = cover.get(pid, lead_cover)
            fused[pid] = weight * (KEYWORD_RANK * c / (RANK_K + rank + 1) + KEYWORD_LEAD * (score / best) * c * c)
    for weight, hits in ((CHUNK_RANK, chunks), (CARD_RANK, cards)):
        for rank, (pid, _, _) in enumerate(hits[:DEPTH]):
            fused[pid] = fused.get(pid, 0.0) + weight / (RANK_K + rank + 1)
    for pid, _, cos in chunks:
        fused[pid] = fused.get(pid, 0.0) + COSINE * max(0.0, cos - COSINE_FLOOR)
    return fused
