"""What the page indexers record about files they could not index, alike on both backends.

The embedded tables (indexer/pages/table_writes.py) and the PostgreSQL ones
(daemon/postgres/pages_write.py) keep the same problem rows, so `brain doctor`
reads the same lines from either.
"""

from __future__ import annotations

from ..vault.slugs import path_to_slug

# problems found by walking the folders, not by reading one file: a walk of a folder replaces them
SCAN_KINDS = ("conflict_copy", "symlink_loop", "symlink_outside", "unreadable_folder")


def collision_echo(path: str) -> str:
    """The problem line on the indexed file when `path` shares its slug and is left out."""
    return f"{path} has the same slug {path_to_slug(path)!r} and is not indexed; rename one of them"
