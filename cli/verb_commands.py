"""The verb commands, declared once.

Each command names the tool it calls and, flag by flag, the tool parameter the
flag fills; help, choices and limits come from the tool registry
(`daemon/protocol/tools.py`). The lean argparse parser (`verb_main.py`), the click
commands behind `--help` and shell completion (`app.py`, `click_command`) and the
error text that names flags instead of wire keys are all made from this table.
`brain serve` is declared the same way, beside its code (`daemon_cmd.SERVE`).

Lean on purpose: plain classes, and the tool registry is imported only
when help, choices or limits are asked for (`brain recall --entity X` parses
and calls without them).
"""

from __future__ import annotations

RECALL_LIMIT = 10  # a person reads ten results; MCP callers keep the protocol default


def _registry():
    from ..daemon.protocol.tools import REGISTRY

    return REGISTRY


class Opt:
    def __init__(self, names: tuple[str, ...], param: str | None, kind: str = "str", help=None,
                 required: bool = False, optional_positional: bool = False, metavar: str | None = None,
                 complete: str | None = None):
        self.names = names                  # ("--entity", "-e"), or ("QUERY",) for a positional
        self.param = param                  # the tool parameter it fills; None: the CLI's own
        self.kind = kind                    # str | int | flag
        self.help = help                    # text, a function making it, or None: the parameter's description
        self.required = required
        self.optional_positional = optional_positional
        self.metavar = metavar              # the value's name in argparse's usage line (None: its own)
        self.complete = complete            # the completion.py function its values complete with

    @property
    def positional(self) -> bool:
        return not self.names[0].startswith("-")

    @property
    def dest(self) -> str:
        return self.names[0].lstrip("-").replace("-", "_").lower()


class Command:
    def __init__(self, name: str, tool: str | None, opts: tuple[Opt, ...], summary: str = "",
                 common: bool = True):
        self.name = name                    # what a person types after `brain`
        self.tool = tool                    # the tool it calls (None: the CLI's own)
        self.opts = opts
        self.summary = summary              # "": the tool's summary
        self.common = common                # takes --json, --no-daemon and --remote

    @property
    def tooldef(self):
        return _registry().get(self.tool) if self.tool else None

    def help_of(self, opt: Opt) -> str:
        if callable(opt.help):
            return opt.help()
        if opt.help is not None:
            return opt.help
        return self.tooldef.param(opt.param).description

    def choices_of(self, opt: Opt) -> tuple[str, ...] | None:
        if opt.param not in ENUM_PARAMS or self.tooldef is None:
            return None
        return self.tooldef.param(opt.param).enum

    def flag_of(self, param: str) -> str | None:
        """The flag a person types for a wire parameter (`include_expired` → `--include-expired`)."""
        for o in self.all_opts():
            if o.param == param:
                return o.names[0] if not o.positional else o.names[0].upper()
        return None

    def all_opts(self) -> tuple[Opt, ...]:
        return self.opts + (COMMON if self.common else ())

    @property
    def help_summary(self) -> str:
        return self.summary or (self.tooldef.summary if self.tooldef else "")


def add_options(p, cmd: Command, with_help: bool = False):
    """The argparse parser `p` with the declared command's arguments and options added, in declaration order."""
    for o in cmd.all_opts():
        kw: dict = {"dest": o.dest, "help": cmd.help_of(o) if with_help else None}
        if o.positional:
            p.add_argument(o.dest, help=kw["help"], **({"nargs": "?"} if o.optional_positional else {}))
            continue
        if o.kind == "flag":
            kw["action"] = "store_true"
        else:
            kw["type"] = int if o.kind == "int" else str
            kw["required"] = o.required
            if cmd.choices_of(o):
                kw["choices"] = cmd.choices_of(o)
            if o.metavar:
                kw["metavar"] = o.metavar
        p.add_argument(*o.names, **kw)
    return p


COMMON = (
    Opt(("--json",), None, "flag", "print the exact response envelope (JSON); recall's pages also carry "
        "their vault path and line"),
    Opt(("--no-daemon",), None, "flag", "run in this process, not through the daemon"),
    Opt(("--remote",), None, "str", "call the remote brain of this name (see `brain connect --list`)"),
)

_SINCE_HUMAN = ("since when: a date (2026-06-12), an ISO time, today, yesterday, last week, last month, "
                "\"3 days ago\", \"2 weeks ago\", \"8 hours ago\"")


def _limit_help() -> str:
    p = _registry().get("recall").param("limit")
    return (f"at most N facts and N pages (1-{p.maximum}; default {RECALL_LIMIT} here, "
            f"{p.default} for MCP callers)")


def _budget(help_: str | None = None) -> Opt:
    return Opt(("--budget",), "budget_tokens", "int", help_)


def _session() -> Opt:
    return Opt(("--session",), "session_id")


def _private() -> Opt:
    return Opt(("--private",), "include_private", "flag")


COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("recall", "recall", (
        Opt(("QUERY",), "query", help="words to search the pages for (without it: facts only)",
            optional_positional=True),
        Opt(("--entity", "-e"), "entity", complete="page_slugs"),
        Opt(("--since",), "since", help=_SINCE_HUMAN + " (facts arm; not with --entity)"),
        _session(),
        Opt(("--limit", "-n"), "limit", "int", help=_limit_help),
        _budget(),
        Opt(("--grep",), "grep"),
        Opt(("--tag", "-t"), None, "str", "Only pages carrying this tag (comma-separated for several; "
            "#tag words in QUERY count too); facts are not filtered", complete="tags"),
        Opt(("--include-expired",), "include_expired", "flag"),
        Opt(("--supersessions",), "supersessions", "flag"),
        Opt(("--scores",), None, "flag", "show each page's score (1.0 = the best match) beside its label"),
        Opt(("--files",), None, "flag", "print only the matching pages' file paths, one a line (for scripts)"),
        Opt(("--null",), None, "flag", "(or -0) with --files: end each path with a NUL byte, not a newline "
            "(for `xargs -0`: names with spaces)"),
        Opt(("--md",), None, "flag", "print the answer as Markdown (facts, then pages with their passages)"),
    )),
    Command("remember", "remember", (
        Opt(("FACT",), "fact"),
        Opt(("--provenance", "-p"), "provenance", help="where the fact comes from (default at the terminal: "
            "cli:<your user name>; MCP callers always give it)"),
        Opt(("--entity", "-e"), "entity", complete="page_slugs"),
        Opt(("--kind", "-k"), "kind"),
        Opt(("--visibility",), "visibility"),
        Opt(("--ttl",), "ttl"),
        _session(),
    )),
    Command("forget", "forget", (
        Opt(("ID",), "id", help="the fact's number: what remember printed, or #id from recall"),
        Opt(("--reason",), "reason"),
    )),
    Command("entity", "entity", (Opt(("NAME",), "name", complete="page_slugs"),),
            summary="One entity's card: aliases, summary, open threads, edges, counts; exits 1 when no entity "
                    "has that name"),
    Command("context", "context_pack", (
        Opt(("ENTITIES",), "entities", help="comma-separated entities; left out: what the session-start hook "
            "injects here (hooks.standing_entities, then this git repository's project)",
            optional_positional=True),
        _budget(),
        Opt(("--since",), "since", help=_SINCE_HUMAN + " (open-thread events after it)"),
        _session(),
        _private(),
    )),
    Command("delta", "delta", (
        Opt(("--since",), "since", help=_SINCE_HUMAN),
        Opt(("--since-slug",), "since_slug"),
        Opt(("--facts-cursor",), "facts_cursor", help="the facts_cursor of the previous answer: the facts it "
            "could not show come next"),
        _session(),
        Opt(("--entities",), "entities"),
        _budget(),
        _private(),
    )),
    Command("get", "get_page", (
        Opt(("PAGE",), "slug", help="a page's slug (people/alice), its file path (people/Alice.md) or its title",
            complete="page_slugs"),
    )),
    Command("open", None, (
        Opt(("PAGE",), None, help="a page's slug (people/alice), its file path (people/Alice.md) or its title",
            complete="page_slugs"),
    ), summary="Open a page: in Obsidian when the vault is one, else in $VISUAL/$EDITOR, else print its path.", common=False),
    Command("call", None, (
        Opt(("VERB",), None, help="a tool name: recall, remember, context_pack, status, ..."),
        Opt(("ARGUMENTS",), None, help="one JSON object, e.g. '{\"entity\": \"people/me\"}'",
            optional_positional=True),
        Opt(("--no-daemon",), None, "flag", "run in this process, not through the daemon"),
        Opt(("--remote",), None, "str", "call the remote brain of this name (see `brain connect --list`)"),
    ), summary="Call any tool with JSON arguments and print the raw envelope.", common=False),
)}

# parameters with a list of allowed values (a test keeps this in step with the tool definitions)
ENUM_PARAMS = {"kind", "visibility"}

# flags that take a date a person types; the CLI sends the wire an ISO instant
# Short flags argparse cannot declare: a parser with a `-0` option reads every negative
# number as an option, and `--budget -1` would lose its value (and its clear error).
NUMBER_LIKE_FLAGS = {"recall": {"-0": "--null"}}

HUMAN_SINCE = {("recall", "since"), ("context", "since"), ("delta", "since")}
