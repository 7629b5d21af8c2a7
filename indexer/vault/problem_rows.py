"""What the vault pass records about files it could not index, alike on both backends.

The pass (indexing_pass.py) decides which problems a file leaves; the
embedded tables (indexer/pages/table_writes.py) and the PostgreSQL ones
(daemon/postgres/pages_write.py) keep them by the same rules (`ProblemRows`),
so `brain doctor` reads the same lines from either; each backend runs the
four statements in its own SQL.
"""

from __future__ import annotations

from .scan import Problem
from .slugs import path_to_slug

# problems found by walking the folders, not by reading one file: a walk of a folder replaces them
SCAN_KINDS = ("conflict_copy", "symlink_loop", "symlink_outside", "unreadable_folder")


def collision_echo(path: str) -> str:
    """The problem line on the indexed file when `path` shares its slug and is left out."""
    return f"{path} has the same slug {path_to_slug(path)!r} and is not indexed; rename one of them"


class ProblemRows:
    """The problem rows of an indexer's tables, over four statements its backend runs."""

    _problem_paths: set[str] | None = None   # paths with a problem row, loaded on first need

    def problem_paths(self) -> set[str]:
        """Every path that has a problem row."""
        raise NotImplementedError

    def _delete_problems(self, path: str, echo: str) -> None:
        """Delete the rows of `path`, and the slug-collision line `echo` another file carries about it."""
        raise NotImplementedError

    def _insert_problem(self, p: Problem) -> None:
        raise NotImplementedError

    def _delete_scan_problems(self, kinds: tuple[str, ...], under: str) -> None:
        """Delete the rows of these kinds at `under` or below it (everywhere for "")."""
        raise NotImplementedError

    def clear_problems(self, path: str) -> None:
        if self._problem_paths is None:
            self._problem_paths = self.problem_paths()
        if path in self._problem_paths:   # most files have none: skip the deletes
            # the indexed file of a slug collision carries a line naming this one: it goes too
            self._delete_problems(path, collision_echo(path))
            self._problem_paths.discard(path)

    def add_problem(self, p: Problem) -> None:
        self._insert_problem(p)
        if self._problem_paths is not None:
            self._problem_paths.add(p.path)

    def replace_scan_problems(self, problems: list[Problem], under: str = "") -> None:
        """Swap the walk-level problems (conflict copies, link loops) found under a folder."""
        self._problem_paths = None
        self._delete_scan_problems(SCAN_KINDS, under)
        for p in problems:
            if p.kind in SCAN_KINDS:
                self.add_problem(p)
