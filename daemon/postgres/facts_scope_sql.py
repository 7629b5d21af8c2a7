"""A `FactScope` and a `Viewer` as SQL over PostgreSQL's `facts` table: the only place they become
SQL in this backend (daemon/facts/scope_sql.py is the embedded store's twin; docs/architecture.md,
"Stores").

Clauses are constant text with `%s` placeholders; every value the caller gave
travels as a query parameter, never inside the text.
"""

from __future__ import annotations

from ...indexer.vault.timestamps import now_iso
from ...indexer.vault.visibility import Viewer
from ..stores.fact_scope import hides_private, normalize_text
from ..stores.facts import FactScope, Order

SqlArgs = list[object]

ORDER_SQL = {
    Order.NEWEST_VALID: "valid_from DESC, id DESC",
    Order.NEWEST_SAVED: "created_at DESC, id DESC",
    # PostgreSQL puts NULLs first in a descending order, SQLite last: a fact that never ends goes last
    Order.LATEST_ENDED: "COALESCE(expired_at, valid_until) DESC NULLS LAST, id DESC",
    Order.ID: "id",
    Order.ID_DESC: "id DESC",
}

# the scope fields that each narrow by one value: (field, its clause)
_ONE_VALUE = (
    ("entity", "entity_slug = %s"),
    ("kind", "kind = %s"),
    ("session", "source_session = %s"),
    ("same_text", "norm = %s"),
    ("valid_since", "valid_from >= %s"),
    ("valid_through", "valid_from <= %s"),
    ("saved_since", "created_at >= %s"),
)


def storable(value: object) -> bool:
    """Whether PostgreSQL text can hold the value: no NUL character, no lone surrogate. No stored
    fact holds such a value, so a filter by one matches nothing (the embedded store's SQLite and
    JSON log can hold both)."""
    if not isinstance(value, str):
        return True
    if "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _like(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _keyset(op: str, key: tuple[str, int | None], where: list[str], args: SqlArgs) -> None:
    ts, fid = key
    if not storable(ts):
        where.append("false")
    elif fid is None:
        where.append(f"created_at {op} %s")
        args.append(ts)
    else:
        where.append(f"(created_at, id) {op} (%s, %s)")
        args.extend([ts, fid])


def narrowing(scope: FactScope) -> tuple[list[str], SqlArgs]:
    """The clauses of what the scope is about and when, without activity and visibility."""
    where: list[str] = []
    args: SqlArgs = []
    if scope.entities_or_words is not None:
        slugs, words = ([v for v in values if storable(v)] for values in scope.entities_or_words)
        ors = []
        if slugs:
            ors.append("entity_slug = ANY(%s)")
            args.append(list(slugs))
        for word in words:
            ors.append("norm LIKE %s")   # LIKE's escape character is the backslash already
            args.append(_like(word))
        where.append("(" + " OR ".join(ors) + ")" if ors else "false")
    if scope.filed:
        where.append("entity_slug IS NOT NULL")
    for field, clause in _ONE_VALUE:
        value = getattr(scope, field)
        if value is not None and not storable(value):
            where.append("false")
        elif value is not None:
            where.append(clause)
            args.append(normalize_text(value) if field == "same_text" else value)
    if scope.saved_after is not None:
        _keyset(">", scope.saved_after, where, args)
    if scope.saved_before is not None:
        _keyset("<", scope.saved_before, where, args)
    if scope.replacing_only:
        where.append("superseded_by IS NOT NULL")
    if scope.ended_since is not None and not storable(scope.ended_since):
        where.append("false")
    elif scope.ended_since is not None:
        where.append("COALESCE(expired_at, valid_until) >= %s")
        args.append(scope.ended_since)
    if scope.grep is not None and not storable(scope.grep):
        where.append("false")
    elif scope.grep is not None:
        # `folded` is the text lower-cased by Python (facts_schema.py), as the embedded grep folds
        where.append("strpos(folded, %s) > 0")
        args.append(scope.grep.lower())
    return where, args


def visibility(viewer: Viewer) -> list[str]:
    """The visibility clause for this viewer (none for the owner)."""
    return ["visibility = 'world'"] if hides_private(viewer) else []


def active(now: str | None = None) -> tuple[list[str], SqlArgs]:
    return ["expired_at IS NULL AND (valid_until IS NULL OR valid_until > %s)"], [now or now_iso()]


def clauses(scope: FactScope, viewer: Viewer, now: str | None = None) -> tuple[list[str], SqlArgs]:
    """Every clause: what the scope narrows to, activity, and what the viewer may see."""
    where, args = narrowing(scope)
    if not scope.include_expired:
        more, values = active(now)
        where += more
        args += values
    return where + visibility(viewer), args


def where_sql(where: list[str]) -> str:
    """' WHERE a AND b' (empty without clauses), each clause in parentheses."""
    return " WHERE " + " AND ".join(f"({c})" for c in where) if where else ""
