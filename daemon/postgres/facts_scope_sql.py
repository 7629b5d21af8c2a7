"""A `FactScope` and a `Viewer` as SQL over PostgreSQL's `facts` table: the only place they become
SQL in this backend. The conditions are the rules both stores share (daemon/stores/fact_scope.py);
this module spells them in PostgreSQL (docs/architecture.md, "Stores").

Clauses are constant text with `%s` placeholders; every value the caller gave
travels as a query parameter, never inside the text.
"""

from __future__ import annotations

from ...indexer.vault.visibility import Viewer
from ..stores.fact_scope import SqlArgs, active as active_in, conditions
from ..stores.facts import FactScope, Order

ORDER_SQL = {
    Order.NEWEST_VALID: "valid_from DESC, id DESC",
    Order.NEWEST_SAVED: "created_at DESC, id DESC",
    # PostgreSQL puts NULLs first in a descending order, SQLite last: a fact that never ends goes last
    Order.LATEST_ENDED: "COALESCE(expired_at, valid_until) DESC NULLS LAST, id DESC",
    Order.ID: "id",
    Order.ID_DESC: "id DESC",
}


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


class PgScope:
    """fact_scope.ScopeSql in PostgreSQL: `%s` parameters; a value text cannot hold matches nothing."""

    mark = "%s"
    never = "false"
    like = "norm LIKE %s"   # LIKE's escape character is the backslash already

    def holds(self, value: object) -> bool:
        return storable(value)

    def one_of(self, column: str, values: list[str]) -> tuple[str, SqlArgs]:
        return f"{column} = ANY(%s)", [list(values)]

    def after(self, op: str, ts: str, fid: int) -> tuple[str, SqlArgs]:
        return f"(created_at, id) {op} (%s, %s)", [ts, fid]

    def contains(self, needle: str) -> tuple[str, SqlArgs]:
        # `folded` is the text lower-cased by Python (facts_schema.py), as the embedded grep folds
        return "strpos(folded, %s) > 0", [needle.lower()]


POSTGRES = PgScope()


def active(now: str | None = None) -> tuple[list[str], SqlArgs]:
    return active_in(POSTGRES, now)


def clauses(scope: FactScope, viewer: Viewer, now: str | None = None) -> tuple[list[str], SqlArgs]:
    """Every clause: what the scope narrows to, activity, and what the viewer may see."""
    return conditions(scope, viewer, POSTGRES, now)
