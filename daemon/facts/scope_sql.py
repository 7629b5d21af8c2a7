"""A `FactScope` and a `Viewer` as SQL over the facts cache: the only place they become SQL in
this store. The conditions are the rules both stores share (daemon/stores/fact_scope.py); this
module spells them in SQLite (docs/architecture.md, "Stores")."""

from __future__ import annotations

from ...indexer.vault.visibility import Viewer
from ..stores.fact_scope import SqlArgs, conditions
from ..stores.facts import FactScope, Order

ORDER_SQL = {
    # valid_from is never null in this store, so the order can use its index (schema.py)
    Order.NEWEST_VALID: "valid_from DESC, id DESC",
    Order.NEWEST_SAVED: "created_at DESC, id DESC",
    Order.LATEST_ENDED: "COALESCE(expired_at, valid_until) DESC, id DESC",
    Order.ID: "id",
    Order.ID_DESC: "id DESC",
}


class SqliteScope:
    """fact_scope.ScopeSql in SQLite: `?` parameters; the cache holds any value the log does."""

    mark = "?"
    never = "0"
    like = "norm LIKE ? ESCAPE '\\'"

    def holds(self, value: object) -> bool:
        return True

    def one_of(self, column: str, values: list[str]) -> tuple[str, SqlArgs]:
        return f"{column} IN ({','.join('?' * len(values))})", list(values)

    def after(self, op: str, ts: str, fid: int) -> tuple[str, SqlArgs]:
        return f"(created_at {op} ? OR (created_at = ? AND id {op} ?))", [ts, ts, fid]

    def contains(self, needle: str) -> tuple[str, SqlArgs]:
        # over every fact in scope, before the limit; Python's case folding (schema.contains_ci)
        return "contains_ci(fact, ?)", [needle]


SQLITE = SqliteScope()


def clauses(scope: FactScope, viewer: Viewer, now: str | None = None) -> tuple[list[str], SqlArgs]:
    """Every clause: what the scope narrows to, activity, and what the viewer may see."""
    return conditions(scope, viewer, SQLITE, now)
