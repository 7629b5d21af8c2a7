"""Page names a person types, looked up in the index without the daemon.

The pages store over the page index (`index.sqlite` in the vault's cache
folder) is opened read only: the daemon owns it, and a lookup must never
create or migrate it. With no index yet, slugs and paths are still tried
against the files themselves. The person at the terminal owns the vault, so
every read is the owner's (`Viewer.owner()`).
"""

from __future__ import annotations

import difflib
import os
import sqlite3
from pathlib import Path
from typing import Callable, TypeVar

from ..indexer.page_policy.page_types import PageName, PageRef
from ..indexer.pages.store import SqlitePagesStore
from ..indexer.vault.visibility import Viewer

OWNER = Viewer.owner()
T = TypeVar("T")


class Pages:
    def __init__(self, vault: Path, index_file: Path):
        self.vault = vault
        self.store = SqlitePagesStore.open_read_only(index_file)

    @classmethod
    def of(cls, places, vault: Path) -> "Pages":
        return cls(vault, places.cache_dir(vault) / "index.sqlite")

    def _ask(self, read: Callable[[SqlitePagesStore], T], empty: T) -> T:
        """One store read; an index missing, being replaced or unreadable answers `empty`."""
        if self.store is None:
            return empty
        try:
            return read(self.store)
        except sqlite3.Error:
            return empty

    def paths(self, slugs) -> dict[str, str]:
        """slug → vault-relative file path, for the slugs the index knows."""
        slugs = list(slugs)
        return self._ask(lambda s: s.paths(slugs, OWNER), {}) if slugs else {}

    def tags(self, slugs) -> dict[str, list[str]]:
        """slug → the page's tags (frontmatter and inline), for the slugs the index knows."""
        return {slug: self._ask(lambda s: s.tags(slug, OWNER), []) for slug in slugs}

    def resolve(self, name: str) -> tuple[str, str] | None:
        """(slug, vault-relative path) of the page `name` means: a slug, a file
        path (vault-relative, or absolute inside the vault, `.md` optional), or
        the title or alias of exactly one page (any case)."""
        text = name.strip()
        rel = text
        p = Path(text).expanduser()
        if p.is_absolute():
            try:
                rel = str(p.resolve().relative_to(self.vault))
            except ValueError:
                return None
        rel = rel.removeprefix("./")
        candidates = [rel] if rel.endswith(".md") else [rel + ".md", rel]
        for c in candidates:
            hit = self._ask(lambda s: s.page_at(c, OWNER), None)
            if hit:
                return hit.slug, hit.path
        slug = text.removesuffix(".md").lower()
        hit = self._ask(lambda s: s.page_ref(slug, OWNER), None)
        if hit:
            return hit.slug, hit.path
        named = self.titled(text, 2)
        if len(named) == 1:  # a title or alias people type, when only one page has it
            return named[0]
        for c in candidates:  # no index yet: a file is its own answer, if it is a page of this vault
            if c.endswith(".md") and self._inside(c) and (self.vault / c).is_file():
                return slug, c
        return None

    def location(self, rel: str, passage: str | None) -> str:
        """`path:line` of a passage, a path a terminal opens from here: relative to the current
        folder when the vault is inside it, else absolute; the line is where the passage starts."""
        full = self.vault / rel
        try:
            shown = str(full.relative_to(Path.cwd()))
        except ValueError:
            shown = str(full)
        return f"{shown}:{self._line_of(full, passage)}"

    def line_of(self, rel: str, passage: str | None) -> int:
        """The line of the vault-relative file `rel` where `passage` starts (1 when not found)."""
        return self._line_of(self.vault / rel, passage)

    def _line_of(self, full: Path, passage: str | None) -> int:
        first = next((ln.strip() for ln in (passage or "").splitlines() if ln.strip()), "")
        if not first or not self._inside(str(full.relative_to(self.vault))):
            return 1
        try:
            with open(full, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    if first in line:
                        return n
        except OSError:
            pass
        return 1

    def titled(self, name: str, n: int = 10) -> list[tuple[str, str]]:
        """(slug, vault-relative path) of every page (up to n) titled `name` or giving it as an
        alias, any case: the names `brain entity` resolves too (docs/architecture.md, "Entity identity")."""
        refs: list[PageRef] = self._ask(lambda s: s.titled(name, OWNER, n), [])
        out = [(r.slug, r.path) for r in refs]
        aliased: list[str] = self._ask(lambda s: s.resolve_alias(name, OWNER), [])
        for slug in aliased:
            ref = self._ask(lambda s: s.page_ref(slug, OWNER), None)
            if ref is not None and (ref.slug, ref.path) not in out:
                out.append((ref.slug, ref.path))
        return out[:n]

    def own_page(self) -> str | None:
        """The slug of the vault owner's own page: the one page with the alias `me`, else None."""
        mine: list[str] = self._ask(lambda s: s.resolve_alias("me", OWNER), [])
        return mine[0] if len(mine) == 1 else None

    def _inside(self, rel: str) -> bool:
        """The vault's own rule (README "Symlinks"): the real path stays inside the
        vault's real path and outside its dot-folders."""
        root = os.path.realpath(self.vault)
        real = os.path.realpath(os.path.join(root, rel))
        if os.path.commonpath([root, real]) != root or real == root:
            return False
        return not any(part.startswith(".") for part in Path(os.path.relpath(real, root)).parts)

    def near(self, name: str, n: int = 3) -> list[tuple[str, str]]:
        """Up to n (slug, title) pages whose name — slug without its folder, title,
        alias or file name — is close to `name` without its folder: the folder
        (`people/`) would make `people/me` look like every person's slug."""
        wanted = name.strip().lower().removesuffix(".md").rsplit("/", 1)[-1]
        if len(wanted) < 3:  # "me" is 0.67 alike "acme": too short to be misspelt
            return []
        keys: dict[str, tuple[str, str]] = {}
        names: list[PageName] = self._ask(lambda s: s.names(OWNER), [])
        for page in names:
            for k in (page.slug.rsplit("/", 1)[-1], page.title, Path(page.path).stem, page.alias):
                if k:
                    keys.setdefault(k.lower(), (page.slug, page.title))
        out: list[tuple[str, str]] = []
        for k in difflib.get_close_matches(wanted, list(keys), n=n * 3, cutoff=0.6):
            if keys[k] not in out:
                out.append(keys[k])
        return out[:n]
