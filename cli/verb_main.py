"""The lean path for verb commands: parse, one call, print, exit.

The parser is made from the declarations in `verb_commands.py`. Nothing here
imports typer, torch, numpy, tantivy or the MCP SDK, so `brain recall`
answers in tens of milliseconds when the daemon is up.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import answer_view, render
from .verb_commands import COMMANDS, HUMAN_SINCE, NUMBER_LIKE_FLAGS, RECALL_LIMIT, Command, add_options

ENTITY_FACTS = 10  # facts a terminal card shows, newest first


class UsageError(Exception):
    def __init__(self, message: str, fix: str):
        super().__init__(message)
        self.fix = fix


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own wording, with our fix line
        raise UsageError(message, f"run `{self.prog} --help` for its options")


def parser_for(cmd: Command, with_help: bool = False) -> argparse.ArgumentParser:
    """The command's parser; `with_help` adds each option's help (for `--help`, not needed to parse)."""
    return add_options(_Parser(prog=f"brain {cmd.name}", add_help=False, allow_abbrev=False), cmd, with_help)


def unknown_flag(cmd: Command, argv: list[str]) -> UsageError | None:
    """A flag this command does not have, with the nearest one it does."""
    known = [n for o in cmd.all_opts() for n in o.names if n.startswith("-")] + ["--help", "-h"]
    for a in argv:
        if a == "--":
            break
        if not a.startswith("-") or a == "-" or a[1:2].isdigit():
            continue
        flag = a.split("=", 1)[0]
        if flag in known:
            continue
        import difflib

        near = difflib.get_close_matches(flag, known, n=1, cutoff=0.6)
        hint = f"did you mean {near[0]}? " if near else ""
        return UsageError(f"brain {cmd.name} has no option {flag}.",
                          f"{hint}`brain {cmd.name} --help` lists its options")
    return None


def to_args(cmd: Command, ns) -> dict:
    """The tool arguments a parsed command line fills (flags left out are absent)."""
    out = {}
    for o in cmd.all_opts():
        if o.param is None:
            continue
        v = getattr(ns, o.dest)
        if v is None or v is False:
            continue
        out[o.param] = v
    return out


def _check(cmd: Command, args: dict) -> None:
    """What a person gets wrong before anything is called, in terms of flags."""
    budget = args.get("budget_tokens")
    if budget is not None and budget <= 0:
        raise UsageError(f"--budget {budget} is not a token budget.",
                         "pass a positive number of tokens, e.g. --budget 500, or leave --budget out for no limit")
    if "limit" in args:  # only when given: the default needs no check (and no tool definitions)
        top = cmd.tooldef.param("limit").maximum
        if not 1 <= args["limit"] <= top:
            raise UsageError(f"--limit {args['limit']} is out of range.", f"pass a number from 1 to {top}")
    if (cmd.name, "since") in HUMAN_SINCE and args.get("since"):
        from ..indexer.vault.timestamps import iso
        from ..daemon.protocol.timeparse import HUMAN_SINCE_FORMS, parse_since_human

        ts = parse_since_human(args["since"])
        if ts is None:
            raise UsageError(f"--since {args['since']!r} is not a date or a time ago.", f"use {HUMAN_SINCE_FORMS}")
        args["since"] = iso(ts)  # the wire gets one unambiguous instant


def run(argv: list[str]) -> int:
    try:
        return _run(argv)
    except UsageError as e:
        render.usage_error(str(e), e.fix)
        return 2


def _run(argv: list[str]) -> int:
    cmd = COMMANDS[argv[0]]
    spelled = NUMBER_LIKE_FLAGS.get(cmd.name, {})
    argv = [argv[0], *(spelled.get(a, a) for a in argv[1:])]
    bad = unknown_flag(cmd, argv[1:])
    if bad:
        raise bad
    ns = parser_for(cmd).parse_args(argv[1:])
    if cmd.name == "call":
        return _call(ns)
    if cmd.name in ("get", "open"):
        from .page_cmds import get_page, open_page

        return get_page(ns.page, no_daemon=ns.no_daemon, json_out=ns.json) if cmd.name == "get" \
            else open_page(ns.page)
    tool = cmd.tool
    assert tool is not None, cmd.name   # the CLI's own commands (call, get, open) answered above
    args = to_args(cmd, ns)
    if cmd.name == "remember" and args.get("provenance") is None:
        args["provenance"] = terminal_provenance()
    _check(cmd, args)
    if cmd.name == "context" and not args.get("entities"):
        # the note goes beside --json's output, never into it
        print(_as_the_hook_would(args), file=sys.stderr if ns.json else sys.stdout)
    tags = None
    if cmd.name == "recall":
        args.setdefault("limit", RECALL_LIMIT)
        args, tags = _tag_filter(args, ns)
    from .route import route_or_report

    body, is_error = route_or_report(tool, args, ns.no_daemon, ns.remote)
    if body is None:
        return 1
    if tags and ns.remote:
        raise UsageError("--tag reads the tags of this machine's vault, not a remote brain's.",
                         "drop --tag, or run the recall on the machine that has the vault")
    if tags and not is_error:
        from .page_lookup import Pages
        from .recall_tags import keep_tagged
        from .route import places, vault_path

        p = places()
        keep_tagged(body, tags, Pages.of(p, vault_path(p)).tags, tags.shown)
    # `brain entity X && …`: not found is a failure a script can test (exit 1), as grep's is
    missing = cmd.name == "entity" and not is_error and not body.get("found")
    if ns.json:
        if cmd.name == "recall" and not is_error and not ns.remote:
            _with_locations(body)
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 1 if is_error or missing else 0
    if is_error:
        render.error(body, cmd)
        return 1
    seen = dict(args, _no_daemon=ns.no_daemon, _remote=ns.remote)
    extra = _lookups(cmd, body, seen)
    if cmd.name == "recall":
        extra["style"] = {"files": ns.files, "null": ns.null, "md": ns.md, "scores": ns.scores}
    answer_view.show(tool, body, args, **extra)
    return 1 if missing else 0


def terminal_provenance() -> str:
    """A fact typed at the terminal comes from the person at it: `cli:<user name>`. The protocol
    still requires provenance of every MCP caller (docs/protocol.md); this fills it in here only."""
    import getpass

    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no name for this uid (a bare container): its number still says who
        return f"cli:{os.getuid()}"


class _Tags(list):
    shown = 0   # the results a person asked for, after filtering


def _tag_filter(args: dict, ns) -> tuple[dict, _Tags | None]:
    """recall's arguments with the #tag words out of the query and room to filter (recall_tags.py)."""
    from .recall_tags import ASK_FOR, split_query

    query, wanted = split_query(args.get("query"), ns.tag)
    if not wanted:
        return args, None
    if ns.remote:
        raise UsageError("--tag and #tag words filter pages by this machine's page index, which a remote "
                         "brain's pages are not in.", "leave the tag out, or run the recall on that machine")
    tags = _Tags(wanted)
    tags.shown = args["limit"]
    # no other words: the tags themselves are what to search for (pages are indexed by their tags)
    return dict(args, query=query or " ".join(t.replace("/", " ") for t in wanted), limit=ASK_FOR), tags


def _as_the_hook_would(args: dict) -> str:
    """`brain context` alone: fill in the entities (and budget) the session-start hook
    would pass from this folder; returns the line saying where they came from."""
    import os

    from ..hooks.session_start import DEFAULT_BUDGET, choose_entities, int_setting, project_name
    from .route import load_config

    cfg = load_config()
    standing = cfg.get("hooks.standing_entities", ["people/me"])
    project = project_name(os.getcwd())
    entities = choose_entities(standing, project)
    if not entities:
        raise UsageError("no entities to show: hooks.standing_entities is empty and this folder is not in a git "
                         "repository.", "name them (`brain context people/me,projects/x`) or set them with "
                         "`brain config set hooks.standing_entities people/me`")
    args["entities"] = ",".join(entities)
    args.setdefault("budget_tokens", int_setting(cfg, "hooks.budget_tokens", DEFAULT_BUDGET))
    where = "hooks.standing_entities" + (f" and this repository ({project})" if project else "")
    shown = ", ".join(entities)
    return (f"(what the session-start hook injects here: {shown}, from {where}; "
            f"budget {args['budget_tokens']} tokens)")


def _lookups(cmd: Command, body: dict, args: dict) -> dict:
    """What the page index adds for a person: result file paths, near entity names."""
    if cmd.name == "entity" and body.get("found") and body["card"].get("active_fact_count"):
        return {"facts": _entity_facts(body["card"]["entity"]["slug"], args)}
    wants_paths = cmd.name == "recall" and body.get("results")
    wants_near = cmd.name == "entity" and not body.get("found") and \
        not render.related_suggestions(args.get("name") or "", body.get("suggestions", []))
    # a remote brain's pages are not this machine's: no local paths or names for them
    if not (wants_paths or wants_near) or args.get("_remote"):
        return {}
    from .route import NoVault, places, vault_path
    from .page_lookup import Pages

    p = places()
    try:
        pages = Pages.of(p, vault_path(p))
    except NoVault:
        return {}
    if wants_paths:
        results = body.get("results") or []
        rel = pages.paths(r["slug"] for r in results)
        return {"paths": {r["slug"]: pages.location(rel[r["slug"]], r.get("chunk")) for r in results
                          if r["slug"] in rel}}
    return {"near": pages.near(args["name"])}


def _with_locations(body: dict) -> None:
    """Each recall result gains `path` (vault-relative) and `line` (where its passage starts),
    for `jq` and editors. Only here, in the CLI's JSON: the recall verb's wire format is the
    protocol's (docs/protocol.md) and a remote caller has no use for this machine's paths."""
    results = body.get("results") or []
    if not results:
        return
    from .page_lookup import Pages
    from .route import NoVault, places, vault_path

    p = places()
    try:
        pages = Pages.of(p, vault_path(p))
    except NoVault:
        return
    rel = pages.paths(r["slug"] for r in results)
    for r in results:
        if r["slug"] in rel:
            r["path"] = rel[r["slug"]]
            r["line"] = pages.line_of(rel[r["slug"]], r.get("chunk"))


def _entity_facts(slug: str, args: dict) -> list[dict]:
    """The card counts an entity's facts; a person wants to read them: one recall call
    (the MCP card stays as the protocol shapes it)."""
    from .route import route_call

    try:
        body, is_error = route_call("recall", {"entity": slug, "limit": ENTITY_FACTS},
                                    no_daemon=args.get("_no_daemon", False), remote=args.get("_remote"))
    except Exception:  # the card is shown anyway; only its facts are missing
        return []
    return [] if is_error else body.get("facts", [])


def _call(ns) -> int:
    try:
        arguments = json.loads(ns.arguments or "{}")
    except ValueError as e:
        raise UsageError(f"the arguments are not JSON ({e}).",
                         'pass one JSON object, e.g. brain call recall \'{"entity": "people/me"}\'') from None
    if not isinstance(arguments, dict):
        raise UsageError(f"the arguments must be one JSON object, not a {type(arguments).__name__}.",
                         'wrap them in braces, e.g. brain call recall \'{"entity": "people/me"}\'')
    from .route import route_or_report

    body, is_error = route_or_report(ns.verb, arguments, ns.no_daemon, ns.remote)
    if body is None:
        return 1
    print(json.dumps(body, indent=2, ensure_ascii=False))
    return 1 if is_error else 0
