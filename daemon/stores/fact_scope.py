"""A `FactScope` and a `Viewer` as conditions on the `facts` table: the rules both facts stores
follow (docs/architecture.md, "Stores"). Each store's scope_sql module renders them in its own SQL.
"""

from __future__ import annotations

import re

from ...indexer.vault.visibility import Viewer


def normalize_text(text: str) -> str:
    """What makes two facts 'the same text': case and whitespace ignored."""
    return re.sub(r"\s+", " ", text).strip().lower()


def hides_private(viewer: Viewer) -> bool:
    """Whether only world facts may be read. Stricter than `Viewer.may_see`: a visibility that
    is neither "world" nor "private" (a hand-edited log) is hidden too, so privacy fails closed."""
    return not viewer.sees_private
