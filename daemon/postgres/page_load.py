"""Pages and their chunks written into the PostgreSQL tables (schema.py), in one transaction.

Each chunk's keyword document carries the same fields the tantivy arm
indexes (indexer/pages/keyword.py, BOOSTS), folded into PostgreSQL's four
weights: title and aliases A, headings B, path and tags C, body D; the
search ranks them with weights in the same proportions (page_search.py).

Text is cut into words the way tantivy's simple tokenizer cuts it (at every
character that is not a letter or digit) before PostgreSQL sees it: its own
parser keeps `package.json`, `people/alice` or an e-mail address as one
token, which a query for `json` or `alice` would never match.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

import psycopg

from ...indexer.page_policy.terms import text_key
from ...indexer.vault.slugs import normalize_alias

_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)


def words(text: str | None) -> str:
    """`text` with every run of non-letters and non-digits made one space."""
    return _NOT_WORD.sub(" ", text or "").strip()


def vector_text(vec: Sequence[float] | None) -> str | None:
    """pgvector's text form, '[0.1,0.2,…]'; None stays NULL (not embedded yet)."""
    if vec is None:
        return None
    return "[" + ",".join(f"{float(x):.7g}" for x in vec) + "]"


# each chunk's raw fields, copied in bulk, then made into rows with their weighted document
_STAGE = """
CREATE TEMP TABLE chunk_stage (
    page_slug TEXT, ord INTEGER, heading TEXT, heading_path TEXT, heading_key TEXT, text TEXT, hash TEXT,
    names TEXT, headings TEXT, place TEXT, body TEXT, embedding vector
) ON COMMIT DROP
"""
# a staged chunk's weighted keyword document (columns names, headings, place, body of stage `s`)
STAGED_DOCUMENT = """setweight(to_tsvector('english', s.names), 'A') || setweight(to_tsvector('english', s.headings), 'B')
       || setweight(to_tsvector('english', s.place), 'C') || setweight(to_tsvector('english', s.body), 'D')"""
_FROM_STAGE = f"""
INSERT INTO chunks (page_id, ord, heading, heading_path, heading_key, text, hash, document, embedding)
SELECT p.id, s.ord, s.heading, s.heading_path, s.heading_key, s.text, s.hash, {STAGED_DOCUMENT}, s.embedding
FROM chunk_stage s JOIN pages p ON p.slug = s.page_slug
"""


def load_pages(conn: psycopg.Connection, pages: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Write `pages` (each replacing any page of the same slug), with their aliases and chunks.

    A page: {"slug", "path", "title", "visibility", "updated_at", "indexed_at", and optionally
    "type", "summary", "lead", "tags": [...], "aliases": [...], "frontmatter": {...},
    "mtime_ns", "size", "content_hash", "chunks": [{"ord", "heading", "heading_path",
    "text", "hash", "vector": 384 floats or None}]}. Returns {"pages": n, "chunks": n}.
    """
    pages = list(pages)
    n_chunks = 0
    with conn.transaction():
        slugs = [p["slug"] for p in pages]
        conn.execute("DELETE FROM pages WHERE slug = ANY(%s)", (slugs,))
        with conn.cursor().copy("COPY pages (slug, path, title, title_key, tail, type, visibility, summary, lead, "
                                "tags, frontmatter, updated_at, mtime_ns, size, content_hash, indexed_at) "
                                "FROM STDIN") as copy:
            for p in pages:
                copy.write_row((p["slug"], p["path"], p["title"], " ".join(p["title"].lower().split()),
                                p["slug"].rsplit("/", 1)[-1], p.get("type"), p.get("visibility") or "private",
                                p.get("summary"), p.get("lead") or "", json.dumps(p.get("tags") or []),
                                json.dumps(p.get("frontmatter") or {}), p["updated_at"], p.get("mtime_ns", 0),
                                p.get("size", 0), p.get("content_hash", ""), p["indexed_at"]))
        ids: dict[str, int] = dict(conn.execute("SELECT slug, id FROM pages WHERE slug = ANY(%s)", (slugs,)).fetchall())
        with conn.cursor().copy("COPY aliases (alias, page_id, display) FROM STDIN") as copy:
            for p in pages:
                seen = set()
                for alias in p.get("aliases") or []:
                    key = normalize_alias(alias)
                    if key and key not in seen:
                        seen.add(key)
                        copy.write_row((key, ids[p["slug"]], alias))
        conn.execute(_STAGE)
        with conn.cursor().copy("COPY chunk_stage FROM STDIN") as copy:
            for p in pages:
                names = words("\n".join([p["title"], *(p.get("aliases") or [])]))
                place = words(" ".join([p["slug"], *(p.get("tags") or [])]))
                for c in p.get("chunks") or []:
                    heading_path = c.get("heading_path") or ""
                    copy.write_row((p["slug"], c["ord"], c.get("heading"), heading_path, text_key(c.get("heading")),
                                    c["text"], c["hash"], names, words(heading_path or c.get("heading")), place,
                                    words(c["text"]), vector_text(c.get("vector"))))
                    n_chunks += 1
        conn.execute(_FROM_STAGE)
    return {"pages": len(pages), "chunks": n_chunks}


def delete_pages(conn: psycopg.Connection, slugs: Sequence[str]) -> int:
    """Remove pages by slug (their chunks, aliases and links go with them); how many went."""
    with conn.transaction():
        return conn.execute("DELETE FROM pages WHERE slug = ANY(%s)", (list(slugs),)).rowcount
