"""What changed on disk, for the PostgreSQL vault indexer (indexer.py).

The same reading of the disk as indexer/vault/vault_changes.py `disk_state`
(the whole vault walked, or only the paths, folders and moves an event
names), with the page rows fetched from the PostgreSQL tables instead of
SQLite: events only say where to look; this says what is there now.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ...indexer.vault.atomic_files import sweep_temp_files
from ...indexer.vault.scan import CONFLICT_FIX, FileStat, IgnoreRules, Problem, classify, outside_link, scan_vault, \
    stat_page
from .pages_write import PgPageTables, Row

log = logging.getLogger("brain.indexer.postgres")


Problems = tuple[list[tuple[str, list[Problem]]], list[tuple[str, Problem | None]]]


def disk_state(vault: Path, rules: IgnoreRules, tables: PgPageTables, paths: set[str], dirs: set[str],
               moves: list[tuple[str, str]], full: bool
               ) -> tuple[dict[str, FileStat], set[str], dict[str, Row], Problems]:
    """(present files, gone paths, their page rows, (scan problems, file problems));
    `full` walks the whole vault (and sweeps temp files a crashed write left behind)."""
    present: dict[str, FileStat] = {}
    gone: set[str] = set()
    scan_problems: list[tuple[str, list[Problem]]] = []
    if full:
        res = scan_vault(vault, rules=rules)
        if res.temp_files:
            swept = sweep_temp_files(vault, res.temp_files)
            if swept:
                log.info("removed %d temp file(s) a crashed write left behind: %s", len(swept), ", ".join(swept[:5]))
        rows = tables.manifest()
        present = res.files
        gone = set(rows) - set(present)
        scan_problems.append(("", res.problems))
        stale = tables.problem_paths() - set(present)
        return present, gone, rows, (scan_problems, [(p, None) for p in stale])
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
        problem = Problem(rel, "conflict_copy", CONFLICT_FIX) if kind == "conflict" and st is not None else None
        if kind == "page" and problem is None and os.path.lexists(vault / rel):
            problem = outside_link(vault, rel)
        file_problems.append((rel, problem))
    return present, gone, tables.rows_at(sorted(set(present) | gone)), (scan_problems, file_problems)
