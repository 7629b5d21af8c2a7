"""The tantivy keyword index: one document per chunk, with fields of their own.

Queries are built from analyzed tokens (the same analyzer the index uses),
never by handing user text to tantivy's query parser, so any string —
`ADR-016`, `C++ (x`, `foo:bar`, an unbalanced quote — is a valid query.

Each chunk document carries its page's title, aliases, path and tags, its
own heading path and its text, each a field with its own weight: a page
named for the query ranks above a page that only mentions it, and a section
headed by the query above one that mentions it in passing. Query words next
to each other in the text (a sloppy phrase) count extra, and a query equal
to a chunk's heading matches the exact-heading key.
"""

from __future__ import annotations

import json
import logging
import math
import re
import shutil
from pathlib import Path
from typing import cast

import tantivy
from tantivy import Occur, Query

from ..page_policy.terms import BOOSTS, TEXT_ANALYZER, content_tokens, text_key

log = logging.getLogger("brain.indexer")

# 2: fields for headings and path, an exact-heading key, the body without its heading
SCHEMA_VERSION = 2
ANALYZER = "brain_en"
PHRASE_BOOSTS = {"title": 6.0, "aliases": 6.0, "headings": 8.0, "body": 2.0}
PROXIMITY_SLOP = 3          # words allowed between two query words that still count as near
PROXIMITY_BOOSTS = {"body": 1.0, "headings": 1.0}
HEADING_EXACT_BOOST = 40.0


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("chunk_id", stored=True, indexed=True, fast=True)
    sb.add_integer_field("page_id", stored=True, indexed=True, fast=True)
    for name in BOOSTS:
        sb.add_text_field(name, tokenizer_name=ANALYZER)
    sb.add_text_field("heading_key", tokenizer_name="raw")
    sb.add_text_field("type", tokenizer_name="raw")
    sb.add_text_field("vis", tokenizer_name="raw")
    return sb.build()


class KeywordIndex:
    """One tantivy index in `dir`. Writes are buffered until `commit()`."""

    def __init__(self, directory: Path, read_only: bool = False):
        self.dir = Path(directory)
        self.read_only = read_only
        self.schema = _schema()
        self.fresh = False   # True when the index had to be (re)created empty
        stamp = self.dir / "brain-schema.json"
        if not read_only:
            if self.dir.exists() and not self._stamp_ok(stamp):
                log.info("keyword index schema changed; recreating it")
                shutil.rmtree(self.dir, ignore_errors=True)
            if not self.dir.exists():
                self.fresh = True
            self.dir.mkdir(parents=True, exist_ok=True)
        self.index = tantivy.Index(self.schema, path=str(self.dir), reuse=True)
        self.index.register_tokenizer(ANALYZER, TEXT_ANALYZER)
        self._writer: tantivy.IndexWriter | None = None
        self.pending = 0
        if not read_only:
            stamp.write_text(json.dumps({"schema_version": SCHEMA_VERSION}))
            self._writer = self.index.writer(heap_size=96_000_000, num_threads=1)

    def _writing(self) -> tantivy.IndexWriter:
        if self._writer is None:
            raise ValueError("the keyword index was opened read-only")
        return self._writer

    @staticmethod
    def _stamp_ok(stamp: Path) -> bool:
        try:
            return json.loads(stamp.read_text()).get("schema_version") == SCHEMA_VERSION
        except (OSError, ValueError):
            return False

    # -- writing --------------------------------------------------------------

    def add_page(self, page_id: int, *, slug: str, title: str, aliases: list[str], tags: list[str],
                 ptype: str | None, visibility: str, chunks: list[tuple[int, str | None, str, str]]) -> None:
        """Add one document per chunk: (chunk_id, heading, heading path, text); call delete_page first
        when replacing. The heading path is the chunk's headings from the top, one per line."""
        tag_text = " ".join(tags)
        for chunk_id, heading, heading_path, text in chunks:
            doc = tantivy.Document()
            doc.add_integer("chunk_id", chunk_id)
            doc.add_integer("page_id", page_id)
            doc.add_text("path", slug)
            doc.add_text("title", title)
            for alias in aliases:   # one value each, so a phrase never runs from one alias into the next
                doc.add_text("aliases", alias)
            for h in (heading_path or heading or "").split("\n"):
                if h.strip():
                    doc.add_text("headings", h)
            key = text_key(heading)
            if key:
                doc.add_text("heading_key", key)
            if tag_text:
                doc.add_text("tags", tag_text)
            if ptype:
                doc.add_text("type", ptype)
            doc.add_text("vis", visibility)
            doc.add_text("body", text)
            self._writing().add_document(doc)
            self.pending += 1

    def delete_page(self, page_id: int) -> None:
        self._writing().delete_documents_by_term("page_id", page_id)
        self.pending += 1

    def clear(self) -> None:
        self._writing().delete_all_documents()
        self.pending += 1

    def commit(self) -> None:
        """Make buffered writes durable and visible to the next search."""
        if self._writer is None or not self.pending:
            return
        self._writer.commit()
        self.pending = 0
        self.index.reload()

    def rollback(self) -> None:
        if self._writer is not None and self.pending:
            self._writer.rollback()
            self.pending = 0

    def close(self) -> None:
        if self._writer is not None:
            try:
                self.commit()
                self._writer.wait_merging_threads()
            except Exception:  # closing must not raise; the index is a cache
                log.warning("keyword index did not close cleanly", exc_info=True)
            self._writer = None

    # -- reading --------------------------------------------------------------

    def num_docs(self) -> int:
        self.index.reload()
        return self.index.searcher().num_docs

    def build_query(self, tokens: list[str], exclude_private: bool, key: str = "") -> Query | None:
        """Should-clauses per token and field, phrase and proximity boosts, and the exact-heading key;
        None when there is nothing to find."""
        if not tokens:
            return None
        s = self.schema
        subs = []
        # a word like "the" or "who" matches nearly every chunk: it only counts
        # inside the phrase clauses, unless the query has nothing else
        terms = content_tokens(tokens)
        for tok in terms:
            for field, boost in BOOSTS.items():
                subs.append((Occur.Should, Query.boost_query(Query.term_query(s, field, tok), boost)))
        if len(tokens) > 1:
            words: list[str | tuple[int, str]] = list(tokens)   # the phrase: each word at its place
            for field, boost in PHRASE_BOOSTS.items():
                subs.append((Occur.Should, Query.boost_query(Query.phrase_query(s, field, words), boost)))
        for a, b in zip(terms, terms[1:]):
            for field, boost in PROXIMITY_BOOSTS.items():
                near = Query.phrase_query(s, field, [a, b], slop=PROXIMITY_SLOP)
                subs.append((Occur.Should, Query.boost_query(near, boost)))
        if key:
            subs.append((Occur.Should, Query.boost_query(Query.term_query(s, "heading_key", key),
                                                         HEADING_EXACT_BOOST)))
        return self._visible(Query.boolean_query(subs), exclude_private)

    def _visible(self, q: Query, exclude_private: bool) -> Query:
        if not exclude_private:
            return q
        return Query.boolean_query([(Occur.Must, q), (Occur.MustNot, Query.term_query(self.schema, "vis", "private"))])

    def heading_pages(self, key: str, limit: int, exclude_private: bool) -> list[tuple[int, int]]:
        """(chunk_id, page_id) of the chunks whose own heading equals the key, any order."""
        if not key:
            return []
        q = self._visible(Query.term_query(self.schema, "heading_key", key), exclude_private)
        return [(c, p) for _, c, p in self._run(q, limit)]

    def search(self, tokens: list[str], limit: int, exclude_private: bool, key: str = "") -> list[tuple[float, int, int]]:
        """(score, chunk_id, page_id), best first."""
        q = self.build_query(tokens, exclude_private, key)
        if q is None or limit <= 0:
            return []
        return self._run(q, limit)

    def idf(self, tokens: list[str]) -> dict[str, float]:
        """How telling each token is: ln(1 + N / (1 + chunks whose body or headings have it))."""
        searcher = self.index.searcher()
        n = max(1, searcher.num_docs)
        out = {}
        for t in tokens:
            df = max(searcher.doc_freq("body", t), searcher.doc_freq("headings", t), searcher.doc_freq("title", t))
            out[t] = math.log(1.0 + n / (1.0 + df))
        return out

    def _run(self, q: Query, limit: int) -> list[tuple[float, int, int]]:
        searcher = self.index.searcher()
        hits = searcher.search(q, limit, count=False).hits
        if not hits:
            return []
        addrs = [addr for _, addr in hits]
        # columnar reads: no stored document is decompressed
        # both are set on every document (add_page), so no value is missing
        chunk_ids = cast(list[int], searcher.fast_field_values("chunk_id", addrs))
        page_ids = cast(list[int], searcher.fast_field_values("page_id", addrs))
        return [(float(score), c, p) for (score, _), c, p in zip(hits, chunk_ids, page_ids)]
