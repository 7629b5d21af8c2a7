"""`brain recall --tag TAG` and `#tag` words in the query: page hits kept to pages carrying the tag.

recall has no tag parameter on the wire (docs/protocol.md §3.1), and other
clients must see recall unchanged, so the filter is the CLI's: it sends the
query without its `#tag` words, asks for more pages than it shows, keeps the
pages whose tags (read from this machine's page index) include every tag
asked — a nested tag counts for its parent, `#project` keeps a page tagged
`project/ledger` — and cuts the list back to the limit. Facts carry no tags;
the facts arm is left as it is.
"""

from __future__ import annotations

import re

ASK_FOR = 100   # pages asked of the daemon before filtering (recall's per-arm maximum)
# an Obsidian tag: after a space or at the start, not only digits (#12 is an issue number, not a tag)
_TAG_WORD = re.compile(r"(?<!\S)#([\w/-]*[^\W\d][\w/-]*)")


def tag_key(tag: str) -> str:
    return tag.strip().lstrip("#").strip("/").casefold()


def split_query(query: str | None, given: str | None) -> tuple[str, list[str]]:
    """(the query without its #tag words, every tag asked: --tag's comma-separated list, then the
    query's #tag words), each tag once."""
    tags: list[str] = []
    for t in [*(given or "").split(","), *_TAG_WORD.findall(query or "")]:
        key = tag_key(t)
        if key and key not in tags:
            tags.append(key)
    rest = " ".join(_TAG_WORD.sub(" ", query or "").split())
    return rest, tags


def carries(page_tags, wanted: str) -> bool:
    keys = {tag_key(t) for t in page_tags or ()}
    return wanted in keys or any(k.startswith(wanted + "/") for k in keys)


def keep_tagged(body: dict, tags: list[str], tags_of, limit: int) -> None:
    """Drop from `body["results"]` the pages not carrying every tag (`tags_of`: slugs → {slug: tags}),
    then keep `limit` of them; the facts arm, asked for as many, is cut back to `limit` too."""
    if isinstance(body.get("facts"), list) and len(body["facts"]) > limit:
        body["facts"] = body["facts"][:limit]
        body["total"] = len(body["facts"])
    results = body.get("results")
    if not results:
        return
    have = tags_of([r["slug"] for r in results])
    body["results"] = [r for r in results if all(carries(have.get(r["slug"]), t) for t in tags)][:limit]
