"""What the chunk vectors read of the chunks a page store keeps.

The chunks table belongs to the page store (indexer/pages/db.py), not to the
vectors: the vectors ask this small contract for what they need and never
read another package's tables. The embedded store answers it with
indexer/pages/chunk_rows.py.
"""

from __future__ import annotations

from typing import Protocol


class ChunkSource(Protocol):
    def chunk_hashes(self) -> dict[int, str]:
        """Every chunk id → its content hash."""
        ...

    def chunks_carrying(self, hashes: list[str]) -> list[tuple[int, str, int, int]]:
        """(chunk id, hash, page id, ord) of every chunk carrying one of `hashes`, by chunk id."""
        ...

    def chunk_texts(self, hashes: list[str]) -> list[tuple[str, str, str]]:
        """(hash, heading, text) once per hash of `hashes` still carried by a chunk."""
        ...

    def hashes_by_page(self) -> list[tuple[int, str]]:
        """(page id, hash) of every chunk, in page id and chunk order."""
        ...

    def page_orders(self) -> tuple[list[int], list[int], list[int]]:
        """Page ids three ways (build_order.py): most recently modified, most linked to (distinct
        pages linking in), most recently returned by a search (only those ever returned)."""
        ...

    def close(self) -> None:
        ...
