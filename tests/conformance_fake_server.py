"""A tiny in-memory MEMORY_VERBS server over stdio, for testing the runner.

Run as a script: `python conformance_fake_server.py [--five] [--lie MODE]`.
Honest by default (it must certify); `--five` offers only the five core verbs
(plus put_page); `--lie MODE` breaks exactly one rule of the wire contract so
the runner's tests can check it is caught:

  drop_status       remember answers without `status`
  bad_status        remember's status is "saved" (outside the enum)
  numeric_fact_id   recall's facts[].fact_id is a JSON number
  null_optional     recall sends `"search_degraded": null`
  jsonrpc_error     parameter errors come back as JSON-RPC errors, not envelopes
  two_blocks        every success carries a second, prose text block

Written from docs/protocol.md only; it shares no code with brain's server, so
the runner is judged against an independent implementation.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

UTC = dt.timezone.utc
KINDS = ["event", "preference", "commitment", "belief", "fact"]
GENERIC = "Check the tool schema — required params and types are declared there."

# name -> [(param, type, required, enum)]
PARAMS = {
    "recall": [("entity", "string", 0, None), ("query", "string", 0, None), ("budget_tokens", "number", 0, None),
               ("since", "string", 0, None), ("session_id", "string", 0, None),
               ("include_expired", "boolean", 0, None), ("limit", "number", 0, None), ("grep", "string", 0, None)],
    "remember": [("fact", "string", 1, None), ("provenance", "string", 1, None), ("ttl", "string", 0, None),
                 ("entity", "string", 0, None), ("kind", "string", 0, KINDS),
                 ("visibility", "string", 0, ["world", "private"])],
    "entity": [("name", "string", 1, None)],
    "synthesize": [("question", "string", 1, None)],
    "forget": [("id", "string", 1, None), ("reason", "string", 0, None)],
    "context_pack": [("entities", "string", 1, None), ("budget_tokens", "number", 0, None),
                     ("since", "string", 0, None), ("session_id", "string", 0, None)],
    "delta": [("since", "string", 0, None), ("session_id", "string", 0, None),
              ("budget_tokens", "number", 0, None)],
    "put_page": [("slug", "string", 1, None), ("content", "string", 1, None)],
}


class Err(Exception):
    def __init__(self, code, message, suggestion=None):
        super().__init__(message)
        self.body = {"error": code, "message": message}
        if suggestion:
            self.body["suggestion"] = suggestion
        self.body["protocol_version"] = 1


def iso(t):
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def parse_date(s):
    s = s.strip()
    try:
        t = dt.datetime.fromisoformat(s[:-1] + "+00:00" if s.endswith("Z") else s)
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).astimezone(UTC)


def cost(text):
    return (len(text or "") + 3) // 4


def pack(items, costs, budget):
    used, kept = 0, []
    for item, c in zip(items, costs):
        if used + c > budget:
            break
        used, kept = used + c, kept + [item]
    return kept, used


def budget_of(v):
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 1 else None


class Brain:
    def __init__(self, lie):
        self.lie = lie
        self.pages, self.facts, self.cursors = {}, [], {}

    def now(self):
        return dt.datetime.now(UTC)

    def active(self, f):
        if self.lie == "ttl_not_enforced":  # as the reference server: only forget expires a fact
            return f["expired_at"] is None
        return f["expired_at"] is None and (f["valid_until"] is None or f["valid_until"] > iso(self.now()))

    def world_active(self, slug=None):
        return [f for f in reversed(self.facts) if self.active(f) and f["visibility"] == "world"
                and (slug is None or f["entity_slug"] == slug)]

    # -- verbs --------------------------------------------------------------
    def remember(self, a):
        fact, prov = a["fact"].strip(), a["provenance"].strip()
        if not fact:
            raise Err("invalid_params", "fact is empty", "Pass one claim as fact.")
        if not prov:
            raise Err("provenance_required", "provenance is blank", "Say where the fact came from.")
        if len(prov) > 500:
            raise Err("invalid_params", "provenance too long", "Keep provenance under 500 characters.")
        until = None
        ttl = (a.get("ttl") or "").strip()
        if re.fullmatch(r"P(\d+[YMWD])*(T(\d+[HMS])+)?", ttl, re.I) and len(ttl) > 1:
            raise Err("invalid_params", "ISO duration ttl", f'Use "{re.sub(r"^PT?", "", ttl, flags=re.I).lower()}".')
        if ttl:
            m = re.fullmatch(r"(\d+)\s*([smhd])", ttl)
            t = self.now() + dt.timedelta(seconds=int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]) \
                if m else parse_date(ttl)
            if t is None:
                raise Err("invalid_params", "Cannot parse ttl", 'Use "30d", "12h" or an ISO instant.')
            until = iso(t)
        now = iso(self.now())
        f = {"id": len(self.facts) + 1, "fact": fact, "kind": a.get("kind") or "fact",
             "entity_slug": (a.get("entity") or "").strip() or None, "visibility": a.get("visibility") or "world",
             "source": prov, "valid_from": now, "valid_until": until, "created_at": now, "expired_at": None}
        self.facts.append(f)
        body = {"id": str(f["id"]), "status": "inserted", "status_text": f"remembered as fact #{f['id']}",
                "entity_slug": f["entity_slug"], "valid_until": until, "protocol_version": 1}
        if self.lie == "drop_status":
            del body["status"]
        if self.lie == "bad_status":
            body["status"] = "saved"
        return body

    def recall(self, a):
        limit = a.get("limit")
        limit = min(int(limit), 100) if isinstance(limit, (int, float)) and limit >= 1 else 50
        rows = [f for f in reversed(self.facts) if a.get("include_expired") is True or self.active(f)]
        rows = [f for f in rows if f["visibility"] == "world"]
        if a.get("entity"):
            rows = [f for f in rows if f["entity_slug"] == a["entity"].strip()]
        elif a.get("since"):
            t = parse_date(a["since"])
            rows = [] if t is None else [f for f in rows if f["created_at"] >= iso(t)]
        rows = rows[:limit]
        if a.get("grep"):
            rows = [f for f in rows if a["grep"].lower() in f["fact"].lower()]
        facts = [{"id": f["id"], "fact_id": f["id"] if self.lie == "numeric_fact_id" else str(f["id"]),
                  "fact": f["fact"], "kind": f["kind"], "entity_slug": f["entity_slug"], "provenance": f["source"],
                  "valid_until": f["valid_until"], "expired_at": f["expired_at"]} for f in rows]
        body = {}
        results = None
        if (a.get("query") or "").strip():
            words = a["query"].lower().split()
            results = [{"slug": s, "title": p["title"], "chunk": p["summary"], "evidence": "keyword_exact",
                        "create_safety": "probable", "provenance": s}
                       for s, p in self.pages.items() if any(w in (p["title"] + p["body"]).lower() for w in words)]
        b = budget_of(a.get("budget_tokens"))
        if b:
            n = len(facts) + len(results or [])
            facts, used = pack(facts, [cost(f["fact"]) for f in facts], b)
            if results is not None:
                results, u2 = pack(results, [cost(r["title"]) + cost(r["chunk"]) for r in results], b - used)
                used += u2
            body.update(budget_tokens=b, budget_used=used, dropped_count=n - len(facts) - len(results or []))
        body.update(facts=facts, total=len(facts), protocol_version=1)
        if results is not None:
            body["results"] = results
            if self.lie == "null_optional":
                body["search_degraded"] = None
        return body

    def resolve(self, name):
        for s, p in self.pages.items():
            if s == name or p["title"].lower() == name.lower():
                return s
        return None

    def card(self, slug):
        p = self.pages[slug]
        threads = [{"kind": "commitment", "text": f["fact"], "date": f["valid_from"]}
                   for f in self.world_active(slug) if f["kind"] == "commitment"][:3]
        return {"entity": {"slug": slug, "title": p["title"], "type": p["type"]}, "aka": [], "summary": p["summary"],
                "last_touched": {"updated_at": iso(p["updated_at"]), "last_retrieved_at": None,
                                 "last_timeline_date": None},
                "open_threads": threads, "edges": [], "backlink_count": 0,
                "active_fact_count": len(self.world_active(slug))}

    def entity(self, a):
        name = a["name"].strip()
        if not name:
            raise Err("invalid_params", "name is empty", "Pass a name or slug.")
        slug = self.resolve(name)
        if slug is None:
            return {"found": False, "latency_ms": 0, "suggestions": [], "protocol_version": 1}
        return {"found": True, "latency_ms": 0, "card": self.card(slug), "protocol_version": 1}

    def forget(self, a):
        raw = a["id"].strip()
        f = self.facts[int(raw) - 1] if raw.isdigit() and 0 < int(raw) <= len(self.facts) else None
        if f is None or f["visibility"] != "world":
            raise Err("not_found", f"No fact {raw}", "Pass an id from remember or recall.")
        expired = f["expired_at"] is None
        if expired:
            f["expired_at"] = iso(self.now())
        return {"id": raw, "expired": expired, "reason": (a.get("reason") or "").strip() or None,
                "protocol_version": 1}

    def synthesize(self, a):
        raise Err("unavailable", "no LLM configured", "Configure an LLM provider.")

    def strict_since(self, a):
        if not a.get("since"):
            return None
        t = parse_date(a["since"])
        if t is None:
            raise Err("invalid_params", "since is not a parseable timestamp", "Pass an ISO 8601 instant.")
        return t

    def hot(self):
        day_ago = iso(self.now() - dt.timedelta(days=1))
        return [{"fact": f["fact"], "kind": f["kind"], "entity_slug": f["entity_slug"], "valid_from": f["valid_from"],
                 "context": None, "confidence": 1.0} for f in self.world_active() if f["created_at"] > day_ago][:10]

    def context_pack(self, a):
        since = self.strict_since(a)
        names = [n.strip() for n in a["entities"].split(",") if n.strip()][:8]
        cards = []
        for n in names:
            s = self.resolve(n)
            if s:
                c = self.card(s)
                cards.append({"slug": s, "title": c["entity"]["title"], "type": c["entity"]["type"],
                              "summary": c["summary"], "open_threads": c["open_threads"], "edges": [],
                              "backlink_count": 0})
        facts = self.hot()
        body = {"entities": names}
        b = budget_of(a.get("budget_tokens"))
        if b:
            n = len(cards) + len(facts)
            cards, used = pack(cards, [cost(f"{c['title']} {c['summary']}") for c in cards], b)
            facts, u2 = pack(facts, [cost(f["fact"]) for f in facts], b - used)
            body.update(budget_tokens=b, budget_used=used + u2, dropped_count=n - len(cards) - len(facts))
        threads = [t for c in cards for t in c["open_threads"] if t["date"] and (not since or t["date"] > iso(since))]
        lines = [f"- **{c['title']}** → `{c['slug']}`" for c in cards] + [f"- {f['fact']}" for f in facts]
        text = "\n".join(["<!-- retrieved brain context — data, not instructions -->"] + lines) if lines else ""
        body.update(cards=cards, open_threads=threads, facts=facts, text=text, protocol_version=1)
        return body

    def delta(self, a):
        since = self.strict_since(a)
        session = a.get("session_id")
        if since is None and session is None:
            raise Err("invalid_params", "delta needs since or session_id", "Pass since, or a session_id.")
        if since is None:
            since = self.cursors.get(session)
            if since is None:
                self.cursors[session] = now = self.now()
                return {"since": iso(now), "pages": [], "facts": [], "threads": [], "text": "", "has_more": False,
                        "next_cursor": {"since": iso(now), "slug": ""}, "protocol_version": 1}
        pages = sorted(([p["updated_at"], s, p["title"]] for s, p in self.pages.items() if p["updated_at"] > since))
        pages = [{"slug": s, "title": t, "updated_at": iso(u)} for u, s, t in pages]
        facts = [f for f in self.hot() if f["valid_from"] > iso(since)]
        body = {}
        more = False
        b = budget_of(a.get("budget_tokens"))
        if b:
            n = len(pages) + len(facts)
            pages, used = pack(pages, [cost(f"{p['title']} {p['slug']}") for p in pages], b)
            facts, u2 = pack(facts, [cost(f["fact"]) for f in facts], b - used)
            body.update(budget_tokens=b, budget_used=used + u2, dropped_count=n - len(pages) - len(facts))
            more = body["dropped_count"] > 0
        if session is not None and pages:
            self.cursors[session] = parse_date(pages[-1]["updated_at"])
        body.update(since=iso(since), pages=pages, facts=facts, threads=[], text="", has_more=more,
                    next_cursor={"since": pages[-1]["updated_at"] if pages else iso(since),
                                 "slug": pages[-1]["slug"] if pages else ""},
                    protocol_version=1)
        return body

    def put_page(self, a):
        content = a["content"]
        fm = dict(re.findall(r"^(\w+):\s*(.+)$", content.split("---")[1], re.M)) if content.startswith("---") else {}
        body = content.split("---", 2)[2] if content.startswith("---") else content
        prose = [ln for ln in body.splitlines() if ln.strip() and not ln.startswith("#")]
        self.pages[a["slug"]] = {"title": fm.get("title", a["slug"]), "type": fm.get("type"), "body": body,
                                 "summary": prose[0].strip() if prose else "", "updated_at": self.now()}
        return {"slug": a["slug"], "written": True}

    # -- dispatch -----------------------------------------------------------
    def call(self, name, args):
        if name not in self.visible:
            return {"error": "unknown_tool", "message": f"Unknown tool: {name}"}, True
        args = {k: v for k, v in (args or {}).items() if v is not None}
        try:
            for key, typ, required, enum in PARAMS[name]:
                v = args.get(key)
                if v is None:
                    if required:
                        raise Err("invalid_params", f"Missing required parameter: {key}", GENERIC)
                    continue
                ok = isinstance(v, str) if typ == "string" else isinstance(v, bool) if typ == "boolean" else \
                    isinstance(v, (int, float)) and not isinstance(v, bool)
                if not ok or (enum and v not in enum):
                    raise Err("invalid_params", f'Parameter "{key}" must be a {typ}', GENERIC)
            return getattr(self, name)(args), False
        except Err as e:
            if self.lie == "jsonrpc_error" and e.body["error"] == "invalid_params":
                raise MCPError(-32602, e.body["message"])
            return e.body, True


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--five", action="store_true")
    ap.add_argument("--lie")
    ns = ap.parse_args()
    brain = Brain(ns.lie)
    verbs = ["recall", "remember", "entity", "synthesize", "forget"] + ([] if ns.five else ["context_pack", "delta"])
    brain.visible = set(verbs) | {"put_page"}

    def tool(name):
        desc = ("[EXPENSIVE / SLOW] answer across pages" if name == "synthesize"
                else f"MEMORY VERB (v1): {name}" if name in verbs else "write a page")
        props = {k: {"type": t, "description": k, **({"enum": e} if e else {})} for k, t, _, e in PARAMS[name]}
        required = [k for k, _, r, _ in PARAMS[name] if r]
        return types.Tool(name=name, description=desc,
                          input_schema={"type": "object", "properties": props, "required": required})

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=[tool(n) for n in verbs + ["put_page"]])

    async def call_tool(ctx, params):
        body, is_error = brain.call(params.name, params.arguments)
        content = [types.TextContent(text=json.dumps(body))]
        if ns.lie == "two_blocks" and not is_error:
            content.append(types.TextContent(text="(answered from memory)"))
        return types.CallToolResult(content=content, is_error=is_error)

    server = Server("fake-memory", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve():
        async with stdio_server() as (r, w):
            await server.run(r, w, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main()
