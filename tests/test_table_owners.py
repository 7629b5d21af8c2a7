"""No module reads a table it does not own (docs/architecture.md, "Layers").

The page tables belong to the page stores (indexer/pages/db.py and the
PostgreSQL schema); the floors below them — the vault as files and the
embeddings — receive rows through small contracts they declare
(vault_changes.PageRows, indexing_pass.PageTableWrites,
embeddings/chunk_source.ChunkSource) and run no SQL of their own.
"""

import ast
from pathlib import Path

from brain.daemon.postgres.indexer import PgVaultIndexer
from brain.indexer.pages.vault_index import VaultIndex
from brain.indexer.vault.indexing_pass import IndexingPass

REPO = Path(__file__).resolve().parents[1]
SQL_CALLS = {"execute", "executemany", "executescript"}
NO_TABLES = ("indexer/vault", "indexer/embeddings")


def sql_calls(source: str) -> list[int]:
    """Lines of every `x.execute(…)`-style call in a module's source."""
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS]


def test_the_lower_floors_run_no_sql():
    found = {}
    for folder in NO_TABLES:
        for f in sorted((REPO / folder).rglob("*.py")):
            lines = sql_calls(f.read_text())
            if lines:
                found[str(f.relative_to(REPO))] = lines
    assert found == {}


def test_the_checker_sees_a_query():
    assert sql_calls("def f(db):\n    return db.execute('SELECT id FROM pages')\n") == [2]
    assert sql_calls("rows = conn.executemany(q, xs)\n") == [1]
    assert sql_calls("x = chunks.chunk_hashes()\n") == []


def test_both_vault_indexers_run_the_one_pass():
    """The deciding (moves, unchanged files, stubs, slug collisions, problems) is written once."""
    for indexer in (VaultIndex, PgVaultIndexer):
        assert issubclass(indexer, IndexingPass)
        for step in ("_index_changes", "_index_file", "_colliders_freed", "_delete_row", "start_watching"):
            assert step not in vars(indexer), (indexer.__name__, step)
