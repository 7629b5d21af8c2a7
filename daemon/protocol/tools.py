"""Every tool this server offers, each declared once (see `registry.py`).

The declarations below are registered in `REGISTRY` on import; tools/list,
parameter validation, dispatch, the scope check, `brain protocol --json`, the
CLI's help and the conformance runner read them from there. Property schemas
carry type, description, enum and, for `fact` alone, maxLength (other limits
are stated in prose and enforced by the handlers), and no tool declares an
outputSchema.
"""

from __future__ import annotations

from .limits import (LIST_PAGES_LIMIT_DEFAULT, LIST_PAGES_LIMIT_MAX, MAX_ENTITIES, MAX_FACT_CHARS,
                     MAX_PROVENANCE_CHARS, RECALL_LIMIT_DEFAULT, RECALL_LIMIT_MAX,
                     SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX)
from .registry import CORE, OPTIONAL, Param, ToolDef, ToolRegistry
from .surfaces import SURFACE_ORDER

KINDS = ["event", "preference", "commitment", "belief", "fact"]
VISIBILITIES = ["world", "private"]

_VERBS_PKG = __package__.rpartition(".")[0] + ".verbs"


def _handler(module: str, function: str | None = None) -> str:
    """A "module:function" reference into the verbs package (the function defaults to the module's name)."""
    return f"{_VERBS_PKG}.{module}:{function or module}"


_BRANCH = " Branch on structured fields, never on prose."

RECALL = ToolDef(
    "recall",
    "MEMORY VERB (v1): read saved facts and, with `query`, search the user's notes. "
    "Use it to look up what is known (facts about an entity, recent facts, or "
    "snippets of pages matching a question); use `entity` for one person/company/"
    "project card and `synthesize` only for answers that must combine several pages. "
    "Exactly one facts filter applies: supersessions, then entity, then session_id, "
    f"then since. `limit` caps each arm (default {RECALL_LIMIT_DEFAULT}, max {RECALL_LIMIT_MAX}). `budget_tokens` packs "
    "the answer on the server (facts first, then search results) and reports "
    "budget_used and dropped_count. Remote callers only ever see world-visible facts "
    "and pages. Without an embedding model the search arm is keyword-only and says so "
    "in `search_degraded`. Every response carries protocol_version." + _BRANCH,
    (
        Param("entity", "string", "Entity name or slug (e.g. \"people/alice-example\"); returns facts about it, newest first."),
        Param("query", "string", "Free-text question; adds `results[]` from a search over the user's pages."),
        Param("budget_tokens", "number", "Server-side token budget (chars/4); facts are packed first, then results."),
        Param("since", "string", "ISO 8601 date/datetime or a relative form like \"8 hours ago\"; filters the facts arm."),
        Param("session_id", "string", "Return the facts captured in this session."),
        Param("include_expired", "boolean", "Include expired and forgotten facts (default false)."),
        Param("supersessions", "boolean", "Return only the supersession audit log (facts replaced by newer ones)."),
        Param("limit", "number", "Per-arm cap on facts and on search results; "
              f"default {RECALL_LIMIT_DEFAULT}, max {RECALL_LIMIT_MAX}.",
              default=RECALL_LIMIT_DEFAULT, maximum=RECALL_LIMIT_MAX),
        Param("grep", "string", "Case-insensitive substring filter on fact text."),
        Param("include_pending", "boolean", "Also report pending_consolidation_count."),
    ),
    {"title": "recall (memory read)", "readOnlyHint": True},
    "Read facts; with a query, search the pages too.",
    handler=_handler("recall"), surface="verbs", verb=CORE, reads_pages=True,
)

REMEMBER = ToolDef(
    "remember",
    "MEMORY VERB (v1): save ONE fact with mandatory attribution. Set `entity` whenever "
    "the fact is about a specific person, company or project — entity-scoped recall "
    "will not find unattributed facts. `provenance` says where the fact came from "
    f"(free text, at most {MAX_PROVENANCE_CHARS} characters, e.g. \"conversation 2026-06-12\"). `ttl` is "
    "a shorthand duration (\"30d\", \"12h\", \"45m\") or an absolute ISO 8601 instant; "
    "ISO 8601 durations such as P30D are rejected with the rewrite. Facts are "
    "world-visible (every agent connected to this brain) unless visibility is "
    "\"private\". Branch on `status` (inserted | duplicate | superseded), never on "
    "`status_text`; on a duplicate `id` is the existing fact's id. For bulk "
    "extraction from a transcript, call it once per fact." + _BRANCH,
    (
        Param("fact", "string", f"One claim, in a sentence (at most {MAX_FACT_CHARS} characters).", required=True,
              max_length=MAX_FACT_CHARS, advertise_max=True),
        Param("provenance", "string", f"Where this came from (required, at most {MAX_PROVENANCE_CHARS} characters).", required=True),
        Param("ttl", "string", "Expiry: \"30d\" / \"12h\" / \"45m\" shorthand or an absolute ISO 8601 timestamp. Omit for never."),
        Param("entity", "string", "The person/company/project the fact is about, by name or slug."),
        Param("kind", "string", "What sort of claim this is (default fact).", enum=tuple(KINDS)),
        Param("visibility", "string", "world (default, readable by every connected agent) or private (local CLI only).", enum=tuple(VISIBILITIES)),
        Param("session_id", "string", "The agent session saving it; recall by session_id finds it again."),
    ),
    {"title": "remember (memory write)", "idempotentHint": True},
    "Save one fact, with who or what said it.",
    handler=_handler("remember"), writes=True, surface="verbs", verb=CORE,
)

ENTITY = ToolDef(
    "entity",
    "MEMORY VERB (v1): one card for a known person, company or project — title, "
    "aliases, summary, open threads, typed edges, backlink and fact counts. Zero "
    "LLM, well under 100 ms: safe to call for every message that names an entity. "
    "Resolution: alias, then exact title or slug, then slug suffix; ties go to the "
    "most recently touched page and runners-up come back in `suggestions`. A miss is "
    "not an error: `found` is false and `suggestions` lists near misses with a "
    "create_safety hint." + _BRANCH,
    (
        Param("name", "string", "Free-text name, alias or slug (\"Alice Example\", \"people/alice-example\").", required=True),
    ),
    {"title": "entity (card lookup, zero LLM)", "readOnlyHint": True},
    "Show one entity card: aliases, summary, open threads, edges, counts.",
    handler=_handler("entity"), surface="verbs", verb=CORE, reads_pages=True,
)

SYNTHESIZE = ToolDef(
    "synthesize",
    "[EXPENSIVE / SLOW — calls an LLM, takes seconds to minutes, costs money] "
    "Answer a question that needs evidence combined across several pages: gathers "
    "pages and facts, has an LLM compose an answer citing its sources, and reports "
    "gaps and the cost. Prefer `recall` or `entity` for lookups. With no LLM "
    "configured it returns the `unavailable` error with the fix, never a made-up "
    "answer; when the LLM fails but pages were found, `synthesis_status` is "
    "extractive_fallback and the answer quotes only those pages." + _BRANCH,
    (
        Param("question", "string", "The question to answer.", required=True),
        Param("since", "string", "Only gather pages dated at or after this ISO date/datetime."),
        Param("until", "string", "Only gather pages dated at or before this ISO date/datetime."),
    ),
    {"title": "synthesize (slow, costly — LLM-backed)", "readOnlyHint": True},
    "Answer a question from several pages with an LLM (slow, costs money).",
    handler=_handler("synthesize"), surface="verbs", verb=CORE, reads_pages=True, slow=True,
)

FORGET = ToolDef(
    "forget",
    "MEMORY VERB (v1): expire a fact by its id (the `id` from remember, or "
    "`facts[].fact_id` from recall — never a page slug). The fact is kept in the "
    "audit trail, not deleted. Idempotent: forgetting an already expired fact "
    "succeeds with `expired: false`; an unknown id is `not_found`." + _BRANCH,
    (
        Param("id", "string", "The fact id, as a string (e.g. \"42\").", required=True),
        Param("reason", "string", "Why, for the audit trail (default \"forgotten\")."),
    ),
    {"title": "forget (expire a fact)", "destructiveHint": True, "idempotentHint": True},
    "Expire a fact (it stays in the facts log as an audit record).",
    handler=_handler("forget"), writes=True, surface="verbs", verb=CORE,
)

CONTEXT_PACK = ToolDef(
    "context_pack",
    "MEMORY VERB (v1): one budget-packed bundle for a set of standing entities — their "
    "cards, their open threads and the hot facts — plus `text`, a rendered block ready "
    "to inject. Call it at session start and right after compaction. Zero LLM. At "
    f"most {MAX_ENTITIES} entities (comma-separated). World-visible data only unless a trusted "
    "local caller passes include_private." + _BRANCH,
    (
        Param("entities", "string", f"Comma-separated entity names or slugs; at most {MAX_ENTITIES} are used.", required=True),
        Param("budget_tokens", "number", "Server-side token budget: cards first, then facts."),
        Param("since", "string", "ISO 8601 instant; top-level open threads are limited to events after it."),
        Param("session_id", "string", "Selects this session's facts as hot memory."),
        Param("include_private", "boolean", "Include private facts; honoured only for trusted local callers."),
    ),
    {"title": "context_pack (boundary bundle)", "readOnlyHint": True},
    "Print the context pack a session-start hook injects.",
    handler=_handler("context_pack"), surface="verbs", verb=OPTIONAL, reads_pages=True,
)

DELTA = ToolDef(
    "delta",
    "MEMORY VERB (v1): what changed since a cursor — pages updated (oldest first, 50 a "
    "call), facts recorded (newest first, 50 a call), and open-thread events — for "
    "periodic wakes. Pass `since`, or a `session_id` whose stored cursor advances past "
    "what each call delivered. Nothing is dropped: when a cap or budget cuts a list, "
    "`has_more` is true and the rest comes on the next call with the same session_id; "
    "stateless callers pass back next_cursor.since and next_cursor.slug for pages and "
    "facts_cursor for facts. World-visible data only unless a trusted local caller "
    "passes include_private." + _BRANCH,
    (
        Param("since", "string", "ISO 8601 cursor; optional when session_id carries one."),
        Param("since_slug", "string", "Keyset resume: pass back next_cursor.slug together with next_cursor.since."),
        Param("entities", "string", f"Comma-separated entities whose thread updates to include (at most {MAX_ENTITIES})."),
        Param("budget_tokens", "number", "Server-side token budget: pages first, then facts."),
        Param("session_id", "string", "Per-session cursor: the first call establishes it, each call advances it."),
        Param("include_private", "boolean", "Include private facts; honoured only for trusted local callers."),
        Param("facts_cursor", "string", "Facts resume: pass back the previous answer's facts_cursor; the facts "
              "it has not delivered come next, newest first."),
    ),
    {"title": "delta (what changed since)", "readOnlyHint": True},
    "What changed since a cursor: pages, facts, open-thread events.",
    handler=_handler("delta"), surface="verbs", verb=OPTIONAL, reads_pages=True,
)

PUT_PAGE = ToolDef(
    "put_page",
    "Write a Markdown page into the vault at `<slug>.md` (atomic: temp file + rename) "
    "and index it before returning. Pass `expected_hash` (from get_page) to refuse "
    "overwriting a page that changed since you read it.",
    (
        Param("slug", "string", "Page slug, e.g. \"people/alice-example\" (no `..`, no leading `/`).", required=True),
        Param("content", "string", "The whole Markdown document, frontmatter included.", required=True,
              max_length=0),
        Param("expected_hash", "string", "sha256 of the content you read; the write is refused if the file differs."),
    ),
    {"title": "put_page (write a page)", "destructiveHint": True, "idempotentHint": True},
    handler=_handler("pages", "put_page"), writes=True, surface="starter", reads_pages=True,
)

GET_PAGE = ToolDef(
    "get_page",
    "Read one page of the vault by slug: its Markdown content, frontmatter and hash.",
    (Param("slug", "string", "Page slug, e.g. \"people/alice-example\".", required=True),),
    {"title": "get_page (read a page)", "readOnlyHint": True},
    "Print one page of the vault.",
    handler=_handler("pages", "get_page"), surface="starter", reads_pages=True,
)

LIST_PAGES = ToolDef(
    "list_pages",
    "List pages of the vault, optionally under a slug prefix, most recently updated first.",
    (
        Param("prefix", "string", "Only slugs starting with this, e.g. \"people/\"."),
        Param("limit", "number", f"Maximum pages to return (default {LIST_PAGES_LIMIT_DEFAULT}, "
              f"max {LIST_PAGES_LIMIT_MAX}).", default=LIST_PAGES_LIMIT_DEFAULT, maximum=LIST_PAGES_LIMIT_MAX),
    ),
    {"title": "list_pages", "readOnlyHint": True},
    handler=_handler("pages", "list_pages"), surface="starter", reads_pages=True,
)

WHOAMI = ToolDef(
    "whoami",
    "Describe the caller as this server sees it: transport, trust lane, surface, write access.",
    (),
    {"title": "whoami", "readOnlyHint": True},
    handler=_handler("info", "whoami"), surface="starter",
)

STATUS = ToolDef(
    "status",
    "Report the brain's state: vault, page/chunk/fact counts, last sync, embedding model state.",
    (),
    {"title": "status", "readOnlyHint": True},
    handler=_handler("info", "status"), surface="starter",
)

REQUEST_TOOLS = ToolDef(
    "request_tools",
    "Narrow the set of tools this client sees, for itself: ask for the `verbs` surface (the seven "
    "memory verbs) or `starter` (verbs plus page tools) when fewer tools serve the task better. "
    "It can only narrow, never widen: the server's owner gives a client more "
    "(`brain auth rescope-client`). Applies to HTTP clients from their next request (tools/list "
    "shows the new set); a stdio connection's surface is fixed when it starts.",
    (Param("surface", "string", "The surface to narrow to.", required=True, enum=SURFACE_ORDER),),
    {"title": "request_tools (narrow my tool list)", "idempotentHint": True},
    handler=_handler("info", "request_tools"), surface="starter",
)


SEARCH = ToolDef(
    "search",
    "Search the user's pages (keyword, plus vectors when the model is loaded) and return "
    "ranked page hits with the best matching chunk. Same engine as recall's query arm, "
    "without the facts arm.",
    (
        Param("query", "string", "What to look for.", required=True),
        Param("limit", "number", f"Maximum hits (default {SEARCH_LIMIT_DEFAULT}, max {SEARCH_LIMIT_MAX}).",
              default=SEARCH_LIMIT_DEFAULT, maximum=SEARCH_LIMIT_MAX),
    ),
    {"title": "search (pages)", "readOnlyHint": True},
    handler=_handler("pages", "search"), reads_pages=True,
)

GET_BACKLINKS = ToolDef(
    "get_backlinks",
    "List the pages that link to a page, with the link type and context.",
    (Param("slug", "string", "Page slug whose backlinks to list.", required=True),),
    {"title": "get_backlinks", "readOnlyHint": True},
    handler=_handler("pages", "get_backlinks"), reads_pages=True,
)

REGISTRY = ToolRegistry()
for _tool in (RECALL, REMEMBER, ENTITY, SYNTHESIZE, FORGET, CONTEXT_PACK, DELTA,
              PUT_PAGE, GET_PAGE, LIST_PAGES, WHOAMI, STATUS, REQUEST_TOOLS, SEARCH, GET_BACKLINKS):
    REGISTRY.register(_tool)

# the seven MEMORY_VERBS v1 verbs, in the protocol's order
VERBS: tuple[ToolDef, ...] = tuple(REGISTRY.verbs())
VERB_NAMES: tuple[str, ...] = tuple(t.name for t in VERBS)

# every registered tool by name (a live view: a tool registered later shows here too)
ALL_TOOLS = REGISTRY.by_name

surface_tools = REGISTRY.on_surface
