"""config.toml: the vault path, the MCP surface, LLM and hook settings.

Read by the entry points only. Keys are dotted (`llm.provider`); the file is
TOML tables, read with tomllib and written with tomlkit (which keeps the
user's comments and layout), atomically.
"""

from __future__ import annotations

from pathlib import Path

# documented settings and their defaults; `brain config set` refuses others
DEFAULTS: dict[str, object] = {
    "vault": None,
    "mcp_surface": "full",
    "llm.provider": None,
    "llm.model": None,
    "llm.base_url": None,
    "llm.timeout_s": 60,
    "hooks.standing_entities": ["people/me"],
    "hooks.budget_tokens": 1500,
    "hooks.deadline_ms": 1500,
    "hooks.remote": None,
    "embeddings.enabled": True,
    "http.host": "127.0.0.1",
    "http.port": 3131,
    "http.public_url": None,
    "protocol_installed_at": None,
}


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


# settings with a closed set of values, and whole numbers with their allowed range
CHOICES: dict[str, tuple[str, ...]] = {
    "mcp_surface": ("verbs", "starter", "full"),
    "llm.provider": ("anthropic", "openai"),
}
INT_RANGES: dict[str, tuple[int, int]] = {
    "llm.timeout_s": (1, 3600),
    "hooks.budget_tokens": (1, 1_000_000),
    "hooks.deadline_ms": (1, 600_000),
    "http.port": (1, 65535),
}


def coerce(key: str, raw: str):
    """Turn a command-line string into the type the setting's default has.

    Raises ValueError with a message that says what the setting accepts.
    """
    default = DEFAULTS.get(key)
    raw = raw.strip()
    if isinstance(default, bool):
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{key} takes true or false, not {raw!r}")
    if isinstance(default, int):
        low, high = INT_RANGES.get(key, (0, 2**31))
        try:
            n = int(raw)
        except ValueError:
            raise ValueError(f"{key} takes a whole number from {low} to {high}, not {raw!r}") from None
        if not low <= n <= high:
            raise ValueError(f"{key} takes a whole number from {low} to {high}, not {n}")
        return n
    if isinstance(default, list):
        return [x.strip() for x in raw.split(",") if x.strip()]
    if key in CHOICES and raw.lower() not in CHOICES[key]:
        raise ValueError(f"{key} takes one of {', '.join(CHOICES[key])}, not {raw!r}")
    if key in CHOICES:
        return raw.lower()
    if key == "llm.base_url" and not raw.startswith(("http://", "https://")):
        raise ValueError(f"llm.base_url takes an http:// or https:// URL (e.g. http://localhost:11434/v1), not {raw!r}")
    if key == "http.public_url" and not raw.startswith("https://"):
        raise ValueError(f"http.public_url takes the https:// URL agents reach this server at "
                         f"(e.g. https://brain.example.org/mcp), not {raw!r}")
    if key == "protocol_installed_at":
        from .protocol.timeparse import parse_iso

        try:
            parse_iso(raw)
        except (ValueError, OverflowError):
            raise ValueError(f"protocol_installed_at takes an ISO 8601 timestamp such as "
                             f"2026-06-12T09:30:00.000Z, not {raw!r}") from None
    if key == "vault":
        folder = Path(raw).expanduser().resolve()
        if not folder.is_dir():
            raise ValueError(f"vault {str(folder)!r} is not a folder; `brain init PATH` registers (and creates) one")
        return str(folder)
    return raw
