"""A `FactScope` and a `Viewer` as SQL over the `facts` table: the only place they become SQL
(docs/architecture.md, "Stores")."""

from __future__ import annotations

from ...indexer.vault.visibility import Viewer
from ..stores.facts import FactScope, Order
from ..stores.fact_scope import hides_private, normalize_text
from .schema import scope_clauses

SqlArgs = list[str | int | float | None]

ORDER_SQL = {
    # valid_from is never null in this store, so the order can use its index (schema.py)
    Order.NEWEST_VALID: "valid_from DESC, id DESC",
    Order.NEWEST_SAVED: "created_at DESC, id DESC",
    Order.LATEST_ENDED: "COALESCE(expired_at, valid_until) DESC, id DESC",
    Order.ID: "id",
    Order.ID_DESC: "id DESC",
}


def _like(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def narrowing(scope: FactScope) -> tuple[list[str], SqlArgs]:
    """The clauses of what the scope is about and when, without activity and visibility."""
    where: list[str] = []
    args: SqlArgs = []
    if scope.entities_or_words is not None:
        slugs, words = scope.entities_or_words
        ors = [f"entity_slug IN ({','.join('?' * len(slugs))})"] if slugs else []
        args.extend(slugs)
        for word in words:
            ors.append("norm LIKE ? ESCAPE '\\'")
            args.append(_like(word))
        where.append("(" + " OR ".join(ors) + ")" if ors else "0")
    if scope.filed:
        where.append("entity_slug IS NOT NULL")
    for field, clause in _ONE_VALUE:
        value = getattr(scope, field)
        if value is not None:
            where.append(clause)
            args.append(normalize_text(value) if field == "same_text" else value)
    if scope.saved_after is not None:
        ts, fid = scope.saved_after
        if fid is None:
            where.append("created_at > ?")
            args.append(ts)
        else:
            where.append("(created_at > ? OR (created_at = ? AND id > ?))")
            args.extend([ts, ts, fid])
    if scope.saved_before is not None:
        ts, fid = scope.saved_before
        if fid is None:
            where.append("created_at < ?")
            args.append(ts)
        else:
            where.append("(created_at < ? OR (created_at = ? AND id < ?))")
            args.extend([ts, ts, fid])
    if scope.replacing_only:
        where.append("superseded_by IS NOT NULL")
    if scope.ended_since is not None:
        where.append("COALESCE(expired_at, valid_until) >= ?")
        args.append(scope.ended_since)
    if scope.grep is not None:
        # over every fact in scope, before the limit; Python's case folding (schema.contains_ci)
        where.append("contains_ci(fact, ?)")
        args.append(scope.grep)
    return where, args


# the scope fields that each narrow by one value: (field, its clause)
_ONE_VALUE = (
    ("entity", "entity_slug = ?"),
    ("kind", "kind = ?"),
    ("session", "source_session = ?"),
    ("same_text", "norm = ?"),
    ("valid_since", "valid_from >= ?"),
    ("valid_through", "valid_from <= ?"),
    ("saved_since", "created_at >= ?"),
)


def clauses(scope: FactScope, viewer: Viewer, now: str | None = None) -> tuple[list[str], SqlArgs]:
    """Every clause: what the scope narrows to, activity, and what the viewer may see."""
    where, args = narrowing(scope)
    full, params = scope_clauses(where, args, not scope.include_expired, hides_private(viewer), now)
    return full, params
