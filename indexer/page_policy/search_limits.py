"""How far each page-search arm reaches and how its hits are re-scored.

Both page backends search with these (indexer/pages/search.py over tantivy,
daemon/postgres/page_search.py over tsvectors), so a query ranks alike on
either (docs/architecture.md, "Stores").
"""

from __future__ import annotations

MIN_VECTOR = 0.25      # below this a vector-only hit is noise (nearest is not near)
VECTOR_DEPTH = 200     # nearest vectors asked for: chunks and cards share the list
COVER_WEIGHT = 2.0     # query coverage next to a chunk's keyword share, when re-scoring
RERANK_N = 30          # chunks re-scored
MAX_EXACT = 20         # pages an exact arm may put first
