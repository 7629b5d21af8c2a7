"""The one place the page tables' visibility rule is written as SQL.

Every read of the pages store (store.py) and page search (search.py) asks
this module what a viewer may not see, so the rule `visibility != 'private'`
exists once (docs/architecture.md, "Stores"; docs/protocol.md §4.8).
"""

from __future__ import annotations

from ..vault.visibility import PRIVATE, Viewer


def hide_private(viewer: Viewer, column: str = "visibility") -> str:
    """An `AND …` condition that drops pages the viewer may not see ("" for the owner)."""
    return "" if viewer.sees_private else f" AND {column} != '{PRIVATE}'"
