"""config.toml: the vault path, the MCP surface, LLM and hook settings.

Read by the entry points only. Keys are dotted (`llm.provider`); the file is
TOML tables, read with tomllib and written with tomlkit (which keeps the
user's comments and layout), atomically. Each setting is declared once
(`SETTINGS`): its default, its kind and range or choices, and its line in
the README; defaults, `brain config set`'s checks, completion and the README
table all come from there.
"""

from __future__ import annotations

from pathlib import Path


class Setting:
    """One setting: everything `brain config`, completion, the defaults and the README's
    Settings table know about it. `kind` picks how a typed value is checked (PARSERS).
    A plain class: the CLI's hot path imports this module, and a dataclass costs it ~2 ms."""

    __slots__ = ("key", "default", "kind", "help", "low", "high", "choices", "prefixes", "takes", "default_doc")

    def __init__(self, key: str, default: object, kind: str, help: str, *, low: int = 0, high: int = 2**31,
                 choices: tuple[str, ...] = (), prefixes: tuple[str, ...] = (), takes: str = "",
                 default_doc: str | None = None):
        self.key = key
        self.default = default
        self.kind = kind                   # text | bool | int | list | choice | url | timestamp | folder
        self.help = help                   # the README's "meaning" column
        self.low, self.high = low, high    # int: the allowed range
        self.choices = choices             # choice: the closed set of values
        self.prefixes = prefixes           # url: what the value must start with
        self.takes = takes                 # url, timestamp: "takes …" in the refusal
        self.default_doc = default_doc     # the README's default column, when not the value itself


# the documented settings, in the README's order; `brain config set` refuses others
SETTINGS: dict[str, Setting] = {s.key: s for s in (
    Setting("vault", None, "folder", "the vault folder (`brain init` sets it)"),
    Setting("mcp_surface", "full", "choice", "default surface for `brain serve`: `verbs`, `starter` or `full` "
            "(`BRAIN_MCP_FORCE_SURFACE` may only narrow it)", choices=("verbs", "starter", "full")),
    Setting("embeddings.enabled", True, "bool", "load the MiniLM model for semantic search and fact dedup"),
    Setting("llm.provider", None, "choice", "`anthropic` or `openai` (any OpenAI-compatible server) for "
            "`synthesize`", choices=("anthropic", "openai")),
    Setting("llm.model", None, "text", "model name for the provider; required with `llm.base_url`",
            default_doc="the provider's default (`claude-sonnet-4-5`, `gpt-4.1-mini`)"),
    Setting("llm.base_url", None, "url", "e.g. `http://localhost:11434/v1` for a local model",
            prefixes=("http://", "https://"), takes="an http:// or https:// URL (e.g. http://localhost:11434/v1)"),
    Setting("llm.timeout_s", 60, "int", "seconds (1–3600) before an LLM call counts as failed", low=1, high=3600),
    Setting("hooks.standing_entities", ["people/me"], "list", "comma-separated entities every session starts with"),
    Setting("hooks.budget_tokens", 1500, "int", "token budget of the injected context (at least 1)",
            low=1, high=1_000_000),
    Setting("hooks.deadline_ms", 1500, "int", "past this the hook prints nothing (at least 1)", low=1, high=600_000),
    Setting("hooks.remote", None, "text", "the remote brain (a `brain connect` name) the session-start hook asks "
            "instead of the local one"),
    Setting("http.host", "127.0.0.1", "text", "default address for `brain serve --http`"),
    Setting("http.port", 3131, "int", "default port for `brain serve --http` (1–65535)", low=1, high=65535),
    Setting("http.public_url", None, "url", "the `https://` URL agents reach `brain serve --http` at (through a "
            "TLS proxy); turns OAuth on for a non-loopback server", prefixes=("https://",),
            takes="the https:// URL agents reach this server at (e.g. https://brain.example.org/mcp)"),
    Setting("store", None, "url", "a team's shared store: `brain serve --http` and `brain index` use this PostgreSQL "
            "(with pgvector) instead of the files of this machine (docs/scaling.md)", prefixes=("postgresql://", "postgres://"),
            takes="a PostgreSQL URL such as postgresql://brain@db.example.org/brain (keep the password in ~/.pgpass)",
            default_doc="none: the embedded stores"),
    Setting("protocol_installed_at", None, "timestamp", "the start of \"time to first verb call\" in "
            "`brain protocol stats`", takes="an ISO 8601 timestamp such as 2026-06-12T09:30:00.000Z",
            default_doc="set by `brain init`"),
)}

# the same, as the tables callers read: defaults, closed sets of values, whole-number ranges
DEFAULTS: dict[str, object] = {k: s.default for k, s in SETTINGS.items()}
CHOICES: dict[str, tuple[str, ...]] = {k: s.choices for k, s in SETTINGS.items() if s.kind == "choice"}
INT_RANGES: dict[str, tuple[int, int]] = {k: (s.low, s.high) for k, s in SETTINGS.items() if s.kind == "int"}


class ConfigError(ValueError):
    """config.toml exists but cannot be read; the message names the file and the fix."""


def load(path: Path) -> dict:
    """Flatten config.toml into dotted keys; a missing file is an empty config."""
    import tomllib  # imported here: the CLI's hot path reads config on every call

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path} is not valid TOML ({e}). fix: correct that line, or delete the file "
                          "and run `brain init PATH` to write a fresh one") from None
    except OSError as e:
        raise ConfigError(f"cannot read {path} ({e.strerror}). fix: make it a readable file, or remove it "
                          "and run `brain init PATH`") from None
    flat: dict = {}

    def walk(prefix: str, node: dict) -> None:
        for k, v in node.items():
            key = f"{prefix}{k}"
            if isinstance(v, dict):
                walk(key + ".", v)
            else:
                flat[key] = v

    walk("", data)
    return flat


def get(cfg: dict, key: str):
    return cfg.get(key, DEFAULTS.get(key))


def dumps(cfg: dict, existing: str | None = None) -> str:
    """The config as TOML; given the file's current text, every comment and
    every line the user wrote for a key we keep stays as it was."""
    import tomlkit  # only writers pay for it; reads use tomllib

    try:
        doc = tomlkit.parse(existing) if existing else tomlkit.document()
    except tomlkit.exceptions.TOMLKitError:
        doc = tomlkit.document()  # unreadable: load() already refused it; write a clean file
    wanted = {k: v for k, v in cfg.items() if v is not None}

    def prune(table, prefix: str) -> None:
        for k in list(table.keys()):
            key = f"{prefix}{k}"
            value = table[k]
            if isinstance(value, dict):
                prune(value, key + ".")
                if not value:
                    del table[k]
            elif key not in wanted:
                del table[k]

    prune(doc, "")
    for key, value in sorted(wanted.items()):
        *parents, leaf = key.split(".")
        table = doc
        for part in parents:
            if part not in table or not isinstance(table[part], dict):
                table[part] = tomlkit.table()
            table = table[part]
        if table.get(leaf) != value:
            table[leaf] = list(value) if isinstance(value, tuple) else value
    return tomlkit.dumps(doc)


def save(path: Path, cfg: dict) -> None:
    from ..indexer.vault.atomic_files import write_atomic

    try:
        existing = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        existing = None
    write_atomic(path, dumps(cfg, existing).encode("utf-8"), mode=0o600)


def _shown_default(s: Setting) -> str:
    if s.default_doc is not None:
        return s.default_doc
    if s.default is None:
        return "—"
    if isinstance(s.default, bool):
        return "`true`" if s.default else "`false`"
    if isinstance(s.default, list):
        return "`" + ", ".join(s.default) + "`"
    return f"`{s.default}`"


def settings_table() -> str:
    """The README's Settings table, made from the declarations (tests/test_docs.py holds them equal)."""
    rows = ["| key | default | meaning |", "|---|---|---|"]
    rows += [f"| `{s.key}` | {_shown_default(s)} | {s.help} |" for s in SETTINGS.values()]
    return "\n".join(rows) + "\n"


def _bool(s: Setting, raw: str):
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{s.key} takes true or false, not {raw!r}")


def _int(s: Setting, raw: str):
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"{s.key} takes a whole number from {s.low} to {s.high}, not {raw!r}") from None
    if not s.low <= n <= s.high:
        raise ValueError(f"{s.key} takes a whole number from {s.low} to {s.high}, not {n}")
    return n


def _choice(s: Setting, raw: str):
    if raw.lower() not in s.choices:
        raise ValueError(f"{s.key} takes one of {', '.join(s.choices)}, not {raw!r}")
    return raw.lower()


def _url(s: Setting, raw: str):
    if not raw.startswith(s.prefixes):
        raise ValueError(f"{s.key} takes {s.takes}, not {raw!r}")
    return raw


def _timestamp(s: Setting, raw: str):
    from .protocol.timeparse import parse_iso

    try:
        parse_iso(raw)
    except (ValueError, OverflowError):
        raise ValueError(f"{s.key} takes {s.takes}, not {raw!r}") from None
    return raw


def _folder(s: Setting, raw: str):
    folder = Path(raw).expanduser().resolve()
    if not folder.is_dir():
        raise ValueError(f"{s.key} {str(folder)!r} is not a folder; `brain init PATH` registers (and creates) one")
    return str(folder)


# how a typed value of each kind is checked and converted
PARSERS = {
    "text": lambda s, raw: raw,
    "bool": _bool,
    "int": _int,
    "list": lambda s, raw: [x.strip() for x in raw.split(",") if x.strip()],
    "choice": _choice,
    "url": _url,
    "timestamp": _timestamp,
    "folder": _folder,
}


def coerce(key: str, raw: str):
    """Turn a command-line string into the setting's type.

    Raises ValueError with a message that says what the setting accepts.
    """
    raw = raw.strip()
    s = SETTINGS.get(key)
    return raw if s is None else PARSERS[s.kind](s, raw)
