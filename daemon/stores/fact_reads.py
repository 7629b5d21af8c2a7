"""The reads of the facts contract that are one select over a scope's conditions, written once for
both facts stores (docs/architecture.md, "Stores"): a store brings its `select`, the spelling of
its SQL (`fact_scope.ScopeSql`) and its orders."""

from __future__ import annotations

from typing import ClassVar

from ...indexer.vault.visibility import Viewer
from .fact_scope import ScopeSql, SqlArgs, conditions, visibility
from .facts import Fact, FactScope, Order


class ReadsByScope:
    scope_sql: ClassVar[ScopeSql]
    order_sql: ClassVar[dict[Order, str]]

    def select(self, where: list[str], args: SqlArgs, order: str, limit: int | None) -> list[Fact]:
        """Facts matching every clause, in `order` (one of `order_sql`'s), at most `limit`."""
        raise NotImplementedError

    def get(self, fid: int, viewer: Viewer) -> Fact | None:
        rows = self.select([f"id = {self.scope_sql.mark}", *visibility(viewer)], [fid], self.order_sql[Order.ID], 1)
        return rows[0] if rows else None

    def listed(self, scope: FactScope, viewer: Viewer, limit: int | None) -> list[Fact]:
        where, args = conditions(scope, viewer, self.scope_sql)
        return self.select(where, args, self.order_sql[scope.order], limit)
