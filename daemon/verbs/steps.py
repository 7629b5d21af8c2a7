"""The steps several verbs take over the engine's stores and models (docs/architecture.md, "Stores").

Each is a plain function over the Engine contract, so a recall or a remember
stays on the verbs' floor: both engines (the embedded one and a front end's
over a shared store) hold only the stores, the models' state, the settings,
the clock and the LLM, and nothing here asks which one it was handed.
"""

from __future__ import annotations

import logging
from typing import Callable

from ...indexer.embeddings import search_modes as why
from ...indexer.vault.timestamps import now_iso
from ...indexer.vault.visibility import Viewer
from ..protocol.caller import Caller
from ..stores.engine import Engine
from ..stores.facts import Fact, FactScope
from ..stores.pages import SearchHit
from .entity_slugs import canonical_entity_slug

log = logging.getLogger("brain.verbs")

# remember's dedup compares a new fact with this many of its entity's newest facts (§3.2)
DEDUP_CANDIDATES = 5


def canonical_entity(engine: Engine, name: str, caller: Caller) -> str:
    """The slug facts about `name` are filed under, as `caller` may see the pages."""
    return canonical_entity_slug(name, engine.pages, caller.viewer, engine.facts)


def vectors_missing_cause(engine: Engine) -> str | None:
    """Why a page search would leave the vectors out now; None when it would use them."""
    state = engine.models.state if engine.models is not None else None
    if state == why.MODEL_OFF or not engine.setting("embeddings.enabled"):
        return why.EMBEDDINGS_OFF
    if state is None:
        return why.MODEL_NOT_LOADED
    if state == "failed":
        return why.MODEL_FAILED
    if state != "ready" or engine.embedder is None:
        return why.MODEL_LOADING
    if engine.vectors is None or not engine.vectors.ready:
        return why.VECTORS_BUILDING
    return None


def find_pages(engine: Engine, query: str, limit: int, caller: Caller,
               keyword_only: bool = False) -> tuple[list[SearchHit], str | None]:
    """Page hits for a query and, when the vectors took no part, why (a cause named in
    indexer/embeddings/search_modes.py); None when they did. `keyword_only`: leave the
    vectors out (an entity miss's near misses, docs/protocol.md §3.3)."""
    if engine.index is None:
        return [], why.INDEX_NOT_OPEN
    if keyword_only:
        return engine.pages.search(query, limit, caller.viewer)
    cause = vectors_missing_cause(engine)
    results, degraded = engine.pages.search(query, limit, caller.viewer, embedder=engine.query_embedder,
                                            vectors=engine.vectors)
    if degraded is None:
        return results, None
    return results, cause or why.VECTOR_SEARCH_FAILED


def note_retrieved(engine: Engine, slugs: list[str]) -> None:
    """Bump last_retrieved_at for pages a search returned (feeds entity tie-breaks)."""
    if not slugs:
        return
    try:
        engine.pages.note_retrieved(slugs, now_iso())
    except Exception:  # a read must not fail over a bookkeeping write
        log.debug("could not bump last_retrieved_at", exc_info=True)


def prefetch_embedding(engine: Engine, text: str, query: bool = False) -> None:
    """Start embedding the one text a call will need (a fact to dedup; with `query`, a search
    query, by the query model) on another thread, so the model runs while the call does its
    keyword work. Nothing happens without the model."""
    fact_vectors = engine.fact_vectors
    if fact_vectors is not None and text:
        (fact_vectors.prefetch_query if query else fact_vectors.prefetch)(text)


def dedup_degraded(engine: Engine) -> bool:
    """True while remember's dedup cannot compare meanings (no model yet)."""
    return engine.embedder is None


def fact_similarity(engine: Engine, entity_slug: str, text: str, viewer: Viewer,
                    worth_comparing: Callable[[list[Fact]], bool] | None = None) -> tuple[Fact, float] | None:
    """(fact, cosine) of the nearest of the entity's newest active facts the viewer may see
    (§3.2), or None without a model: a remote caller is never matched against (and so never
    learns of, or supersedes) a private fact. `worth_comparing(facts)` False: the caller's
    answer cannot depend on the cosines, so nothing is embedded (None)."""
    if engine.fact_vectors is None:
        return None
    rows = engine.facts.listed(FactScope(entity=entity_slug), viewer, DEDUP_CANDIDATES)
    if worth_comparing is not None and not worth_comparing(rows):
        return None
    return engine.fact_vectors.nearest(rows, text)


def keep_fact_vector(engine: Engine, fid: int, text: str) -> None:
    """Store a new fact's embedding, for dedup and search. On one engine of its own, after the
    call has answered (the writer thread; reads use it all the same meanwhile, and the backfill
    covers facts the process never got to). Over a shared store, at once: another front end
    may be asked about this fact next, and no "after the answer" holds for every reader."""
    fact_vectors = engine.fact_vectors
    if fact_vectors is None:
        return
    if not engine.shared_store:
        fact_vectors.store_later(fid, text)
        return
    try:
        fact_vectors.store(fid, text)
    except Exception:  # the fact is saved; its vector is made again by the backfill
        log.warning("could not store the vector of fact %s", fid, exc_info=True)
