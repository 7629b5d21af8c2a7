"""The tantivy keyword index: one document per chunk.

Queries are built from analyzed tokens (the same analyzer the index uses),
never by handing user text to tantivy's query parser, so any string —
`ADR-016`, `C++ (x`, `foo:bar`, an unbalanced quote — is a valid query.
Title and alias fields carry large boosts: a page named for the query ranks
above a page that only mentions it.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import tantivy
from tantivy import Occur, Query

log = logging.getLogger("brain.indexer")

SCHEMA_VERSION = 1
ANALYZER = "brain_en"
MAX_QUERY_TOKENS = 32
BOOSTS = {"title": 6.0, "aliases": 6.0, "slug": 2.0, "tags": 1.5, "body": 1.0}
PHRASE_BOOSTS = {"title": 8.0, "aliases": 8.0, "body": 2.0}

STOPWORDS = frozenset(
    "a an and are as at be but by for from has have i if in into is it its of on or our so that the their then "
    "there these they this to was we were what when which who will with you your".split())

_analyzer = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.remove_long(40))
    .filter(tantivy.Filter.lowercase())
    .filter(tantivy.Filter.stemmer("english"))
    .build()
)


def analyze(text: str) -> list[str]:
    """The index's tokens for a text (lowercased, English-stemmed)."""
    if not text:
        return []
    return _analyzer.analyze(text)


def query_tokens(text: str) -> list[str]:
    """Distinct tokens of a query, in order, capped so no query is unbounded."""
    seen: list[str] = []
    for t in analyze(text):
        if t not in seen:
            seen.append(t)
            if len(seen) >= MAX_QUERY_TOKENS:
                break
    return seen


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("chunk_id", stored=True, indexed=True, fast=True)
    sb.add_integer_field("page_id", stored=True, indexed=True, fast=True)
    for name in ("slug", "title", "aliases", "tags", "body"):
        sb.add_text_field(name, tokenizer_name=ANALYZER)
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
        self.index.register_tokenizer(ANALYZER, _analyzer)
        self._writer = None
        self.pending = 0
        if not read_only:
            stamp.write_text(json.dumps({"schema_version": SCHEMA_VERSION}))
            self._writer = self.index.writer(heap_size=96_000_000, num_threads=1)

    @staticmethod
    def _stamp_ok(stamp: Path) -> bool:
        try:
            return json.loads(stamp.read_text()).get("schema_version") == SCHEMA_VERSION
        except (OSError, ValueError):
            return False

    # -- writing --------------------------------------------------------------

    def add_page(self, page_id: int, *, slug: str, title: str, aliases: list[str], tags: list[str],
                 ptype: str | None, visibility: str, chunks: list[tuple[int, str | None, str]]) -> None:
        """Add one document per chunk (call delete_page first when replacing)."""
        alias_text = " \n ".join(aliases)
        tag_text = " ".join(tags)
        slug_text = slug.replace("/", " ")
        for chunk_id, heading, text in chunks:
            doc = tantivy.Document()
            doc.add_integer("chunk_id", chunk_id)
            doc.add_integer("page_id", page_id)
            doc.add_text("slug", slug_text)
            doc.add_text("title", title)
            if alias_text:
                doc.add_text("aliases", alias_text)
            if tag_text:
                doc.add_text("tags", tag_text)
            if ptype:
                doc.add_text("type", ptype)
            doc.add_text("vis", visibility)
            doc.add_text("body", f"{heading}\n{text}" if heading else text)
            self._writer.add_document(doc)
            self.pending += 1

    def delete_page(self, page_id: int) -> None:
        self._writer.delete_documents_by_term("page_id", page_id)
        self.pending += 1

    def clear(self) -> None:
        self._writer.delete_all_documents()
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

    def build_query(self, tokens: list[str], exclude_private: bool) -> Query | None:
        """Should-clauses per token and field, plus phrase boosts; None when there is nothing to find."""
        if not tokens:
            return None
        s = self.schema
        subs = []
        # a word like "the" matches nearly every chunk: it only counts inside
        # the phrase clauses, unless the query has nothing else
        terms = [t for t in tokens if t not in STOPWORDS] or tokens
        for tok in terms:
            for field, boost in BOOSTS.items():
                subs.append((Occur.Should, Query.boost_query(Query.term_query(s, field, tok), boost)))
        if len(tokens) > 1:
            for field, boost in PHRASE_BOOSTS.items():
                subs.append((Occur.Should, Query.boost_query(Query.phrase_query(s, field, tokens), boost)))
        q = Query.boolean_query(subs)
        if exclude_private:
            q = Query.boolean_query([(Occur.Must, q), (Occur.MustNot, Query.term_query(s, "vis", "private"))])
        return q

    def search(self, tokens: list[str], limit: int, exclude_private: bool) -> list[tuple[float, int, int]]:
        """(score, chunk_id, page_id), best first."""
        q = self.build_query(tokens, exclude_private)
        if q is None or limit <= 0:
            return []
        searcher = self.index.searcher()
        hits = searcher.search(q, limit, count=False).hits
        if not hits:
            return []
        addrs = [addr for _, addr in hits]
        # columnar reads: no stored document is decompressed
        chunk_ids = searcher.fast_field_values("chunk_id", addrs)
        page_ids = searcher.fast_field_values("page_id", addrs)
        return [(float(score), c, p) for (score, _), c, p in zip(hits, chunk_ids, page_ids)]
