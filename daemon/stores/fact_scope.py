"""The `facts` table as both facts stores read it (docs/architecture.md, "Stores"): the columns a
`Fact` is read with, and a `FactScope` and a `Viewer` as conditions on it. Each store's scope_sql
module spells the conditions in its own SQL (`ScopeSql`); what they are is decided here, once.
"""

from __future__ import annotations

import re
from typing import Protocol, Sequence

from ...indexer.vault.timestamps import now_iso
from ...indexer.vault.visibility import Viewer
from .facts import FACT_ORDER, Fact, FactScope


def normalize_text(text: str) -> str:
    """What makes two facts 'the same text': case and whitespace ignored."""
    return re.sub(r"\s+", " ", text).strip().lower()


def hides_private(viewer: Viewer) -> bool:
    """Whether only world facts may be read. Stricter than `Viewer.may_see`: a visibility that
    is neither "world" nor "private" (a hand-edited log) is hidden too, so privacy fails closed."""
    return not viewer.sees_private


# the columns of a `facts` row in the order of Fact's fields
COLUMNS = ", ".join(FACT_ORDER)
SqlArgs = list[object]


def as_fact(row: Sequence[object]) -> Fact:
    """A `facts` row read with COLUMNS as a Fact (the columns are the fields, in order)."""
    return Fact(*row)  # type: ignore[arg-type]  # each column's type is the field's, as the table declares


def where_sql(where: list[str]) -> str:
    """' WHERE a AND b' (empty without clauses), each clause in parentheses."""
    return " WHERE " + " AND ".join(f"({c})" for c in where) if where else ""

# the scope fields that each narrow by one value: (field, its column and operator)
_ONE_VALUE = (
    ("entity", "entity_slug ="),
    ("kind", "kind ="),
    ("session", "source_session ="),
    ("same_text", "norm ="),
    ("valid_since", "valid_from >="),
    ("valid_through", "valid_from <="),
    ("saved_since", "created_at >="),
)


class ScopeSql(Protocol):
    """How one store's SQL spells what the scope's conditions need."""

    mark: str    # a query parameter's placeholder
    never: str   # a clause no row meets
    like: str    # `norm` holds a LIKE pattern (like_pattern's escapes)

    def holds(self, value: object) -> bool:
        """Whether the store can hold the value: a filter by one it cannot matches nothing."""
        ...

    def one_of(self, column: str, values: list[str]) -> tuple[str, SqlArgs]:
        """`column` is one of the values."""
        ...

    def after(self, op: str, ts: str, fid: int) -> tuple[str, SqlArgs]:
        """(created_at, id) is after (`op` ">") or before ("<") the keyset (ts, fid)."""
        ...

    def contains(self, needle: str) -> tuple[str, SqlArgs]:
        """The fact's text contains `needle`, case folded as Python folds it (recall's grep)."""
        ...


def like_pattern(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def narrowing(scope: FactScope, sql: ScopeSql) -> tuple[list[str], SqlArgs]:
    """The clauses of what the scope is about and when, without activity and visibility."""
    where: list[str] = []
    args: SqlArgs = []

    def add(clause: str, values: SqlArgs) -> None:
        where.append(clause)
        args.extend(values)

    if scope.entities_or_words is not None:
        slugs, words = ([v for v in values if sql.holds(v)] for values in scope.entities_or_words)
        ors: list[str] = []
        if slugs:
            clause, values = sql.one_of("entity_slug", slugs)
            ors.append(clause)
            args.extend(values)
        for word in words:
            ors.append(sql.like)
            args.append(like_pattern(word))
        where.append("(" + " OR ".join(ors) + ")" if ors else sql.never)
    if scope.filed:
        where.append("entity_slug IS NOT NULL")
    for field, column in _ONE_VALUE:
        value = getattr(scope, field)
        if value is not None:
            ok = sql.holds(value)
            add(f"{column} {sql.mark}" if ok else sql.never,
                [normalize_text(value) if field == "same_text" else value] if ok else [])
    for op, key in ((">", scope.saved_after), ("<", scope.saved_before)):
        if key is None:
            continue
        ts, fid = key
        if not sql.holds(ts):
            where.append(sql.never)
        elif fid is None:
            add(f"created_at {op} {sql.mark}", [ts])
        else:
            add(*sql.after(op, ts, fid))
    if scope.replacing_only:
        where.append("superseded_by IS NOT NULL")
    if scope.ended_since is not None:
        ok = sql.holds(scope.ended_since)
        add(f"COALESCE(expired_at, valid_until) >= {sql.mark}" if ok else sql.never, [scope.ended_since] if ok else [])
    if scope.grep is not None:
        if sql.holds(scope.grep):
            add(*sql.contains(scope.grep))
        else:
            where.append(sql.never)
    return where, args


def active(sql: ScopeSql, now: str | None = None) -> tuple[list[str], SqlArgs]:
    """The clause of the facts active at `now`: not expired, and still valid."""
    return [f"expired_at IS NULL AND (valid_until IS NULL OR valid_until > {sql.mark})"], [now or now_iso()]


def visibility(viewer: Viewer) -> list[str]:
    """The visibility clause for this viewer (none for the owner)."""
    return ["visibility = 'world'"] if hides_private(viewer) else []


def conditions(scope: FactScope, viewer: Viewer, sql: ScopeSql, now: str | None = None) -> tuple[list[str], SqlArgs]:
    """Every clause: what the scope narrows to, activity, and what the viewer may see."""
    where, args = narrowing(scope, sql)
    if not scope.include_expired:
        more, values = active(sql, now)
        where += more
        args += values
    return where + visibility(viewer), args
