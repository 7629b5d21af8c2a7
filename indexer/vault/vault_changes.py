"""What changed on disk, for the vault indexers (indexing_pass.py and its two backends).

Events only say *where* to look: `disk_state` re-reads the disk state of the
paths, folders and moves a change names (or scans the whole vault) and
fetches the page rows they had from the page store (`PageRows`, which each
backend answers from the tables it owns); `pair_renames` matches a new file
to the page it was moved from (the watcher's moves first, then the same
bytes), so a moved page keeps its id.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from .atomic_files import sweep_temp_files
from .scan import CONFLICT_FIX, FileStat, IgnoreRules, Problem, classify, outside_link, read_page, scan_vault, \
    stat_page
from .frontmatter import MAX_FRONTMATTER_BYTES, split_frontmatter
from .vault_files import content_hash

log = logging.getLogger("brain.indexer")


class PageRow(Protocol):
    """A page's row as a store hands it to the indexer: id, path, slug, tail, mtime_ns, size,
    content_hash, and `stable_id` (its frontmatter `id`) when the store keeps one."""

    def __getitem__(self, key: str, /) -> Any: ...


class PageRows(Protocol):
    """What the indexer reads of the page tables (each backend's own queries)."""

    def manifest(self) -> Mapping[str, PageRow]:
        """path → row of every page."""
        ...

    def rows_at(self, paths: list[str]) -> Mapping[str, PageRow]:
        """path → row of the pages at these paths."""
        ...

    def paths_under(self, folder: str) -> list[str]:
        """The paths of the pages inside `folder` (vault-relative, no trailing slash)."""
        ...

    def problem_paths(self) -> set[str]:
        """Every path with a problem recorded."""
        ...


Read = tuple[bytes | None, str | None, Problem | None]   # scan.read_page
Problems = tuple[list[tuple[str, list[Problem]]], list[tuple[str, Problem | None]]]
DiskState = tuple[dict[str, FileStat], set[str], dict[str, PageRow], Problems]


def disk_state(vault: Path, rules: IgnoreRules, tables: PageRows, paths: set[str], dirs: set[str],
               moves: list[tuple[str, str]], full: bool) -> DiskState:
    """(present files, gone paths, their page rows, (scan problems, file problems)) for the paths
    (and folders, and both ends of moves) a change names; `full` scans the whole vault (and sweeps
    the temp files a crashed write left behind)."""
    present: dict[str, FileStat] = {}
    gone: set[str] = set()
    scan_problems: list[tuple[str, list[Problem]]] = []
    if full:
        res = scan_vault(vault, rules=rules)
        if res.temp_files:
            swept = sweep_temp_files(vault, res.temp_files)
            if swept:
                log.info("removed %d temp file(s) a crashed write left behind: %s", len(swept), ", ".join(swept[:5]))
        every = dict(tables.manifest())
        present = res.files
        gone = set(every) - set(present)
        scan_problems.append(("", res.problems))
        stale = tables.problem_paths() - set(present)
        return present, gone, every, (scan_problems, [(p, None) for p in stale])
    candidates = set(paths)
    for src, dst in moves:
        candidates.update((src, dst))
    for d in dirs:
        d = d.strip("/")
        if not d:
            continue
        res = scan_vault(vault, under=d, rules=rules)
        present.update(res.files)
        scan_problems.append((d, res.problems))
        candidates.update(tables.paths_under(d))
    file_problems: list[tuple[str, Problem | None]] = []
    for rel in candidates:
        if rel in present:
            continue
        kind = classify(rel, rules)
        st = stat_page(vault, rel) if kind != "ignored" else None
        if kind == "page" and st is not None:
            present[rel] = st
            continue
        gone.add(rel)
        conflict = kind == "conflict" and st is not None
        problem = Problem(rel, "conflict_copy", CONFLICT_FIX) if conflict else None
        if kind == "page" and problem is None and os.path.lexists(vault / rel):
            problem = outside_link(vault, rel)
        file_problems.append((rel, problem))
    rows: dict[str, PageRow] = {}
    for part in _parts(sorted(set(present) | gone)):
        rows.update(tables.rows_at(part))
    return present, gone, rows, (scan_problems, file_problems)


def _stable_id(raw: bytes | None) -> str | None:
    """The frontmatter `id` of a page's bytes, as text; None when it has none."""
    if raw is None or b"id:" not in raw[:MAX_FRONTMATTER_BYTES]:
        return None
    fm = split_frontmatter(raw[:MAX_FRONTMATTER_BYTES + 8192].decode("utf-8", "replace"))
    value = fm.data.get("id") if fm.error is None else None
    return str(value) if isinstance(value, (str, int)) and str(value).strip() else None


def row_stable_id(row: PageRow) -> str | None:
    """A page row's frontmatter `id`, when the store's rows carry one."""
    try:
        value = row["stable_id"]
    except (KeyError, IndexError):
        return None
    return None if value is None else str(value)


def pair_renames(vault: Path, present: dict[str, FileStat], gone_rows: dict[str, PageRow],
                 rows: dict[str, PageRow], moves: list[tuple[str, str]], reads: dict[str, Read]
                 ) -> dict[str, PageRow]:
    """New file → the row of the page it was moved from: the watcher's moves first, then the same
    bytes, then the same frontmatter `id` (a page renamed and edited at once; docs/architecture.md,
    "Entity identity")."""
    pairs: dict[str, PageRow] = {}
    new_files = [rel for rel in present if rel not in rows]
    if not gone_rows or not new_files:
        return pairs
    for src, dst in moves:
        if src in gone_rows and dst in present and dst not in rows and dst not in pairs:
            pairs[dst] = gone_rows.pop(src)
    by_hash = {row["content_hash"]: src for src, row in gone_rows.items() if row["content_hash"]}
    for rel in new_files:
        if not by_hash:
            break
        if rel in pairs:
            continue
        got = read_page(vault, rel, present[rel].size)
        reads[rel] = got
        if got[0] is not None:
            moved_from = by_hash.pop(content_hash(got[0]), None)
            if moved_from is not None:
                pairs[rel] = gone_rows.pop(moved_from)
    by_id: dict[str, list[str]] = {}
    for src, row in gone_rows.items():
        sid = row_stable_id(row)
        if sid is not None:
            by_id.setdefault(sid, []).append(src)
    for rel in new_files:
        if not by_id:
            break
        if rel in pairs:
            continue
        got = reads.get(rel) or read_page(vault, rel, present[rel].size)
        reads[rel] = got
        sid = _stable_id(got[0])
        srcs = by_id.get(sid) if sid is not None else None
        if srcs and len(srcs) == 1 and srcs[0] in gone_rows:   # an id two gone pages shared names neither
            pairs[rel] = gone_rows.pop(srcs.pop())
    return pairs


def scan_kinds_paths(scan_problems: list[tuple[str, list[Problem]]]) -> set[str]:
    """The paths a walk reported a problem for (its own rows for them stand)."""
    return {p.path for _, probs in scan_problems for p in probs}


def _parts(seq: list[str], n: int = 900) -> Iterator[list[str]]:   # bound on SQL variables per statement
    for i in range(0, len(seq), n):
        yield seq[i:i + n]
