"""Who may see a private page or fact: the one question every store read answers itself.

A page or fact is private when its visibility says so (docs/protocol.md §4.8;
what cannot be parsed is private too, decided where it is read). Every read
method of every store takes a `Viewer` and filters inside the store, so no
caller above a store ever writes the rule as SQL (docs/architecture.md,
"Stores").
"""

from __future__ import annotations

from dataclasses import dataclass

PRIVATE = "private"


@dataclass(frozen=True)
class Viewer:
    """Whoever a read is for. `sees_private` is granted only explicitly."""

    sees_private: bool = False

    @classmethod
    def world(cls) -> "Viewer":
        return cls(sees_private=False)

    @classmethod
    def owner(cls) -> "Viewer":
        return cls(sees_private=True)

    def may_see(self, visibility: str | None) -> bool:
        return self.sees_private or visibility != PRIVATE
