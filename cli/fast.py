"""The lean path for hot verb commands: argparse, one call, print, exit.

Nothing here imports typer, torch, numpy, tantivy or the MCP SDK, so
`brain recall` answers in tens of milliseconds when the daemon is up.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import render


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="brain", add_help=False)
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp):
        sp.add_argument("--json", action="store_true", help="print the exact response envelope")
        sp.add_argument("--no-daemon", action="store_true", help="run in this process instead of the daemon")
        sp.add_argument("--remote", help="call the remote brain of this name (see `brain connect --list`)")

    r = sub.add_parser("remember")
    r.add_argument("fact")
    r.add_argument("--provenance", "-p", required=True)
    r.add_argument("--entity", "-e")
    r.add_argument("--kind", "-k")
    r.add_argument("--visibility")
    r.add_argument("--ttl")
    common(r)

    q = sub.add_parser("recall")
    q.add_argument("query", nargs="?")
    q.add_argument("--entity", "-e")
    q.add_argument("--since")
    q.add_argument("--session")
    q.add_argument("--limit", type=int)
    q.add_argument("--budget", type=int)
    q.add_argument("--grep")
    q.add_argument("--include-expired", action="store_true")
    q.add_argument("--supersessions", action="store_true")
    common(q)

    f = sub.add_parser("forget")
    f.add_argument("id")
    f.add_argument("--reason")
    common(f)

    e = sub.add_parser("entity")
    e.add_argument("name")
    common(e)

    c = sub.add_parser("context")
    c.add_argument("entities")
    c.add_argument("--budget", type=int)
    c.add_argument("--since")
    c.add_argument("--session")
    c.add_argument("--private", action="store_true")
    common(c)

    d = sub.add_parser("delta")
    d.add_argument("--since")
    d.add_argument("--since-slug")
    d.add_argument("--session")
    d.add_argument("--entities")
    d.add_argument("--budget", type=int)
    d.add_argument("--private", action="store_true")
    common(d)

    k = sub.add_parser("call")
    k.add_argument("verb")
    k.add_argument("arguments", nargs="?", default="{}")
    k.add_argument("--no-daemon", action="store_true")
    k.add_argument("--remote")
    return p


def _args_for(ns) -> tuple[str, dict]:
    def pick(**kw):
        return {k: v for k, v in kw.items() if v not in (None, False)}

    if ns.cmd == "remember":
        return "remember", pick(fact=ns.fact, provenance=ns.provenance, entity=ns.entity, kind=ns.kind,
                                visibility=ns.visibility, ttl=ns.ttl)
    if ns.cmd == "recall":
        return "recall", pick(query=ns.query, entity=ns.entity, since=ns.since, session_id=ns.session,
                              limit=ns.limit, budget_tokens=ns.budget, grep=ns.grep,
                              include_expired=ns.include_expired, supersessions=ns.supersessions)
    if ns.cmd == "forget":
        return "forget", pick(id=ns.id, reason=ns.reason)
    if ns.cmd == "entity":
        return "entity", {"name": ns.name}
    if ns.cmd == "context":
        return "context_pack", pick(entities=ns.entities, budget_tokens=ns.budget, since=ns.since,
                                    session_id=ns.session, include_private=ns.private)
    if ns.cmd == "delta":
        return "delta", pick(since=ns.since, since_slug=ns.since_slug, session_id=ns.session,
                             entities=ns.entities, budget_tokens=ns.budget, include_private=ns.private)
    raise AssertionError(ns.cmd)


def run(argv: list[str]) -> int:
    parser = _parser()
    try:
        ns = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 2)
    from .backend import NoVault, call

    if ns.cmd == "call":
        try:
            arguments = json.loads(ns.arguments)
        except ValueError as e:
            print(f"error: the arguments are not JSON ({e}).", file=sys.stderr)
            print('fix: pass one JSON object, e.g. brain call recall \'{"entity": "people/me"}\'', file=sys.stderr)
            return 2
        if not isinstance(arguments, dict):
            print("error: the arguments must be one JSON object, not a " + type(arguments).__name__ + ".", file=sys.stderr)
            print('fix: wrap them in braces, e.g. brain call recall \'{"entity": "people/me"}\'', file=sys.stderr)
            return 2
        verb, args = ns.verb, arguments
    else:
        verb, args = _args_for(ns)
        budget = getattr(ns, "budget", None)
        if budget is not None and budget <= 0:
            print(f"error: --budget {budget} is not a token budget.", file=sys.stderr)
            print("fix: pass a positive number of tokens, e.g. --budget 500, or leave --budget out for no limit.",
                  file=sys.stderr)
            return 2
        if ns.cmd == "recall" and ns.since:
            from ..daemon.timeparse import parse_since_lenient

            # the verb answers an unparseable since with no facts (by protocol);
            # a person typing it deserves to know why
            if parse_since_lenient(ns.since) is None:
                print(f"error: --since {ns.since!r} is not a date or a relative time.", file=sys.stderr)
                print('fix: use a date like 2026-06-12, or "30m", "2d", "8 hours ago".', file=sys.stderr)
                return 2
    try:
        body, is_error = call(verb, args, no_daemon=ns.no_daemon, remote=getattr(ns, "remote", None))
    except NoVault as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # the daemon or the vault is broken: say so plainly
        print(f"error: {e}", file=sys.stderr)
        return 1
    if ns.cmd == "call" or getattr(ns, "json", False):
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 1 if is_error else 0
    if is_error:
        render.error(body)
        return 1
    render.show(verb, body)
    return 0
