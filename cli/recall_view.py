"""How `brain recall` prints: facts, then pages as `path:line  Title  (label)` with the
passage that matched; `--scores` adds each page's score, `--files` prints only the
files (for scripts; `-0` ends each with a NUL for `xargs -0`), `--md` the whole answer as Markdown."""

from __future__ import annotations

from ..indexer.embeddings.search_modes import degraded_text
from .render import _width as terminal_width, colour_on, fact_line, highlight, paint, passage, terms_of


# what a person reads for each result's `evidence` (README, "How recall finds pages")
MATCH_LABELS = {"alias_hit": "alias match", "exact_title_match": "title match",
                "high_vector_match": "close in meaning", "keyword_exact": "keyword match",
                "weak_semantic": "weak match"}


def match_label(r: dict, scores: bool = False) -> str:
    evidence = r.get("evidence")
    label = MATCH_LABELS.get(evidence, evidence or "match") if isinstance(evidence, str) else "match"
    if scores and isinstance(r.get("score"), (int, float)):
        label += f", score {r['score']:.2f}"
    return label


def show_recall(b: dict, args: dict, paths: dict | None = None, style: dict | None = None) -> None:
    style = style or {}
    paths = paths or {}
    if style.get("files") or style.get("null"):
        _recall_files(b, paths, "\0" if style.get("null") else "\n")
        return
    if style.get("md"):
        _recall_md(b, args, paths, bool(style.get("scores")))
        return
    on = colour_on()
    facts = b.get("facts", [])
    results = b.get("results")
    if facts or results is None:
        heading = "facts matching the query" if results is not None else "facts"
        print(paint(f"{heading} ({len(facts)})", "title", on) if facts else f"{heading}: none")
    terms = terms_of(str(args.get("query") or ""))
    for f in facts:
        print("  " + highlight(fact_line(f, on), terms, on))
    if results is not None:
        if facts:
            print()
        if degraded_text(b):
            print(paint(f"({degraded_text(b)})", "dim", on))
        print(paint(f"pages ({len(results)})", "title", on) if results else "pages: none match the query")
        width = terminal_width()
        for i, r in enumerate(results):
            if i:
                print()
            where = paths.get(r["slug"]) or r["slug"]
            title = r.get("title") or ""
            stale = "  (changed on disk since indexed)" if r.get("stale") else ""
            head = paint(where, "path", on)
            stem = where.rsplit(":", 1)[0].rsplit("/", 1)[-1].removesuffix(".md")
            if title and title != stem:
                head += "  " + paint(title, "title", on)
            head += "  " + paint(f"({match_label(r, bool(style.get('scores')))})", "dim", on)
            print(head + paint(stale, "dim", on))
            chunk = (r.get("chunk") or "").strip()
            for line in passage(chunk, terms, width) if chunk else []:
                print("    " + highlight(line, terms, on))
    if "budget_tokens" in b:
        print(paint(f"(budget {b['budget_used']}/{b['budget_tokens']} tokens, {b['dropped_count']} dropped)",
                    "dim", on))


def _recall_files(b: dict, paths: dict, end: str = "\n") -> None:
    """One file a line, best first, each once: `brain recall Q --files | xargs $EDITOR`;
    with `end` a NUL, `--files -0 | xargs -0` keeps names with spaces (Obsidian's) whole."""
    shown: set[str] = set()
    for r in b.get("results") or []:
        path = (paths.get(r["slug"]) or r["slug"]).rsplit(":", 1)[0]
        if path not in shown:
            shown.add(path)
            print(path, end=end)


def _recall_md(b: dict, args: dict, paths: dict, scores: bool) -> None:
    """The answer as Markdown, to paste into a note or a chat."""
    facts, results = b.get("facts", []), b.get("results")
    query = str(args.get("query") or "").strip()
    if facts or results is None:
        print("## Facts" + (f" matching “{query}”" if query and results is not None else ""))
        print()
        for f in facts:
            when = (f.get("valid_from") or f.get("created_at") or "")[:10]
            print(f"- {one_line_md(f['fact'])} (#{f['id']}" + (f", {when}" if when else "")
                  + (f", from {f['provenance']}" if f.get("provenance") else "") + ")")
        if not facts:
            print("- none")
    if results is not None:
        if facts or results is None:
            print()
        print("## Pages" + (f" matching “{query}”" if query else ""))
        for r in results:
            print()
            print(f"- **{one_line_md(r.get('title') or r['slug'])}** — `{paths.get(r['slug']) or r['slug']}` "
                  f"({match_label(r, scores)})")
            for line in (r.get("chunk") or "").strip().splitlines():
                print(f"  > {line}".rstrip())
        if not results:
            print()
            print("- none")


def one_line_md(text: str) -> str:
    return " ".join(str(text).split())
