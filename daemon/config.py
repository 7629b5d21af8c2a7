"""config.toml: the vault path, the MCP surface, LLM and hook settings.

Read by the entry points only. Keys are dotted (`llm.provider`); the file is a
flat set of TOML tables written atomically.
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
    "embeddings.enabled": True,
    "http.host": "127.0.0.1",
    "http.port": 3131,
    "protocol_installed_at": None,
}


def load(path: Path) -> dict:
    """Flatten config.toml into dotted keys; a missing file is an empty config."""
    import tomllib  # imported here: the CLI's hot path reads config on every call

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
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


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    s = str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{s}"'


def dumps(cfg: dict) -> str:
    top = {k: v for k, v in cfg.items() if "." not in k and v is not None}
    tables: dict[str, dict] = {}
    for k, v in cfg.items():
        if "." in k and v is not None:
            t, _, leaf = k.rpartition(".")
            tables.setdefault(t, {})[leaf] = v
    lines = [f"{k} = {_toml_value(v)}" for k, v in sorted(top.items())]
    for t in sorted(tables):
        lines.append("")
        lines.append(f"[{t}]")
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in sorted(tables[t].items()))
    return "\n".join(lines) + "\n"


def save(path: Path, cfg: dict) -> None:
    from ..indexer.atomic_files import write_atomic

    write_atomic(path, dumps(cfg).encode("utf-8"), mode=0o600)


def coerce(key: str, raw: str):
    """Turn a command-line string into the type the setting's default has."""
    default = DEFAULTS.get(key)
    if isinstance(default, bool):
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{key} takes true or false, not {raw!r}")
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, list):
        return [x.strip() for x in raw.split(",") if x.strip()]
    return raw
