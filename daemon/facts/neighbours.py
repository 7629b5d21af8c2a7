"""A fact's neighbours in the facts cache: the walks of `stores/fact_neighbours.py` (what a
neighbour is, docs/architecture.md "Facts ranking") along this store's SQLite indexes."""

from __future__ import annotations

from ..stores.fact_neighbours import WINDOW, walk
from .rows import Cache, marks

# the facts saved just after (or before) one, in its conversation: by session_id when it has one
# (steps along facts_session), else by provenance among the facts without (along facts_thread)
_STEP = "SELECT id, entity_slug, created_at FROM facts WHERE {same} AND (created_at, id) {way} (?, ?) " \
        "ORDER BY created_at {order}, id {order} LIMIT ?"
_BY_SESSION = "source_session = ?"
_BY_SOURCE = "source = ? AND source_session IS ?"
_STEPS = {(by_session, way): _STEP.format(same=_BY_SESSION if by_session else _BY_SOURCE, way=way, order=order)
          for by_session in (True, False) for way, order in (("<", "DESC"), (">", "ASC"))}


def neighbours(store: Cache, ids: list[int], window: int | None = None) -> dict[int, list[tuple[int, int]]]:
    """fact id -> (neighbour id, how many turns away) for the facts saved up to `window` turns
    before and after it (fact_neighbours.walk)."""
    window = WINDOW if window is None else window
    if not ids:
        return {}
    out: dict[int, list[tuple[int, int]]] = {}
    with store.lock:
        rows = store.db.execute(f"SELECT id, source, source_session, created_at FROM facts "
                                f"WHERE id IN ({marks(ids)}) AND entity_slug IS NULL", ids).fetchall()
        for fid, source, session, created in rows:
            same = (session,) if session else (source, session)
            for way in ("<", ">"):
                steps = store.db.execute(_STEPS[bool(session), way], (*same, created, fid, window)).fetchall()
                for nid, d in walk(created, steps):
                    out.setdefault(fid, []).append((nid, d))
    return out
