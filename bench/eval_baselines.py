"""Textbook baselines for the retrieval evaluation, computed on the same data.

Every ranking figure brain reports is printed beside these, from the same
run (issue: "beat the textbook"): what twenty lines of standard code reach on
the same documents and questions, with nothing of brain's ranking in them.

- `bm25`: tantivy's BM25 over each document's text, tantivy's own English
  stemming analyzer (`en_stem`), every query word optional;
- `minilm`: the bundled all-MiniLM-L6-v2 sentence vectors, cosine, exact;
- `rrf`: reciprocal-rank fusion of the two lists (k = 60, each list cut at
  100), the textbook hybrid;
- `rrf+nbr` (conversations only): the same fusion over each turn indexed
  together with the turn before and after it in the same session, the
  cheapest context a fact can carry.

`rank(docs, questions)` returns, per baseline, the ranked document ids of
every question; retrieval_eval.py scores them with the same metrics as brain.
"""

from __future__ import annotations

import re
from typing import Sequence

RRF_K = 60
DEPTH = 100
_WORD = re.compile(r"\w+", re.UNICODE)


def _query_text(question: str) -> str:
    # words only, lower-cased: no query-parser syntax survives (AND/OR/NOT, quotes, colons)
    return " ".join(w.lower() for w in _WORD.findall(question))


def bm25(doc_ids: Sequence[str], texts: Sequence[str], questions: Sequence[str], depth: int = DEPTH) -> list[list[str]]:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("n", stored=True)
    sb.add_text_field("body", stored=False, tokenizer_name="en_stem")
    index = tantivy.Index(sb.build())
    writer = index.writer()
    for i, text in enumerate(texts):
        writer.add_document(tantivy.Document(n=i, body=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    out = []
    for q in questions:
        words = _query_text(q)
        if not words:
            out.append([])
            continue
        hits = searcher.search(index.parse_query(words, ["body"]), depth).hits
        out.append([doc_ids[searcher.doc(addr)["n"][0]] for _, addr in hits])
    return out


def minilm(doc_ids: Sequence[str], texts: Sequence[str], questions: Sequence[str], depth: int = DEPTH,
           embedder=None) -> list[list[str]]:
    import numpy as np

    if embedder is None:
        from brain.indexer.embeddings.embedder import MiniLMEmbedder

        embedder = MiniLMEmbedder()
    dv = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
    qv = np.asarray(embedder.embed(list(questions)), dtype=np.float32)
    out = []
    for v in qv:
        sims = dv @ v
        top = np.argsort(-sims)[:depth]
        out.append([doc_ids[i] for i in top])
    return out


def rrf(*lists: list[str], k: int = RRF_K, depth: int = DEPTH) -> list[str]:
    score: dict[str, float] = {}
    for ranked in lists:
        for rank, doc in enumerate(ranked[:depth]):
            score[doc] = score.get(doc, 0.0) + 1.0 / (k + rank + 1)
    return sorted(score, key=lambda d: -score[d])


def with_neighbours(turns: Sequence[dict], text_of) -> list[str]:
    """Each turn's text preceded by the turn before and followed by the turn after, same session."""
    out = []
    for i, t in enumerate(turns):
        parts = []
        if i > 0 and turns[i - 1]["session_key"] == t["session_key"]:
            parts.append(text_of(turns[i - 1]))
        parts.append(text_of(t))
        if i + 1 < len(turns) and turns[i + 1]["session_key"] == t["session_key"]:
            parts.append(text_of(turns[i + 1]))
        out.append("\n".join(parts))
    return out


def rank_all(doc_ids: Sequence[str], texts: Sequence[str], questions: Sequence[str],
             neighbour_texts: Sequence[str] | None = None, embedder=None) -> dict[str, list[list[str]]]:
    """Every baseline's ranked ids per question (the same order as `questions`)."""
    kw = bm25(doc_ids, texts, questions)
    vec = minilm(doc_ids, texts, questions, embedder=embedder)
    out = {"bm25": kw, "minilm": vec, "rrf": [rrf(a, b) for a, b in zip(kw, vec)]}
    if neighbour_texts is not None:
        kw_n = bm25(doc_ids, neighbour_texts, questions)
        vec_n = minilm(doc_ids, neighbour_texts, questions, embedder=embedder)
        out["rrf+nbr"] = [rrf(a, b) for a, b in zip(kw_n, vec_n)]
    return out


# -- pages ---------------------------------------------------------------------------------------

_HEADING_LINE = re.compile(r"^[ ]{0,3}#{1,6}[ \t]")


def page_chunks(vault, slug_of) -> tuple[list[str], list[str]]:
    """Every page of `vault` cut at its headings: (the page slug of each chunk, the chunk's text).

    The textbook way to index long documents: a passage per section, the page's
    file name on each, frontmatter left out, nothing else.
    """
    from pathlib import Path

    slugs, texts = [], []
    for path in sorted(Path(vault).rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        if lines and lines[0].strip() == "---":
            for i in range(1, len(lines)):
                if lines[i].strip() in ("---", "..."):
                    lines = lines[i + 1:]
                    break
        name = path.stem.replace("-", " ")
        section: list[str] = []
        for line in lines + ["# end"]:
            if _HEADING_LINE.match(line) and section:
                body = "\n".join(section).strip()
                if body:
                    slugs.append(slug_of(rel))
                    texts.append(f"{name}\n{body}")
                section = []
            section.append(line)
    return slugs, texts


def first_per_page(ranked_chunks: list[str]) -> list[str]:
    seen: set[str] = set()
    return [s for s in ranked_chunks if not (s in seen or seen.add(s))]


def rank_pages(vault, questions: Sequence[str], slug_of, embedder=None) -> dict[str, list[list[str]]]:
    """Each baseline's pages per question: chunks ranked, then each page at its best chunk."""
    slugs, texts = page_chunks(vault, slug_of)
    # chunk ids must be unique for the fusion; the page is recovered from the prefix
    ids = [f"{s}#{i}" for i, s in enumerate(slugs)]
    ranked = rank_all(ids, texts, questions, embedder=embedder)
    return {name: [first_per_page([c.rsplit("#", 1)[0] for c in lst]) for lst in lists]
            for name, lists in ranked.items()}
