"""Remote brains this machine connects to: `[remotes.NAME]` in config.toml.

The config keeps each remote's URL and the path of its token file; the
token itself lives in `<state dir>/remotes/NAME.token` (0600), never in a
file someone might share or commit. Standard library only: `brain recall
--remote NAME` and the session-start hook read it on their lean paths.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..daemon import config as config_mod

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class RemoteConfigError(ValueError):
    pass


def token_path(places, name: str) -> Path:
    return places.state_dir / "remotes" / f"{name}.token"


def remotes(cfg: dict) -> dict[str, dict]:
    """name -> {"url", "token_file"} for every configured remote."""
    out: dict[str, dict] = {}
    for key, value in cfg.items():
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == "remotes":
            out.setdefault(parts[1], {})[parts[2]] = value
    return {n: r for n, r in out.items() if r.get("url")}


def save_remote(places, name: str, url: str, token: str) -> Path:
    from ..indexer.vault.atomic_files import write_atomic

    if not NAME_RE.match(name):
        raise RemoteConfigError(f"remote name {name!r} is not allowed: use 1-64 letters, digits, '_' or '-'")
    path = token_path(places, name)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomic(path, (token + "\n").encode(), mode=0o600)
    cfg = config_mod.load(places.config_file)
    cfg[f"remotes.{name}.url"] = url
    cfg[f"remotes.{name}.token_file"] = str(path)
    config_mod.save(places.config_file, cfg)
    return path


def remove_remote(places, name: str) -> bool:
    cfg = config_mod.load(places.config_file)
    known = remotes(cfg).get(name)
    if known is None:
        return False
    for key in [k for k in cfg if k.startswith(f"remotes.{name}.")]:
        del cfg[key]
    if cfg.get("hooks.remote") == name:
        del cfg["hooks.remote"]  # the hook goes back to the local brain
    config_mod.save(places.config_file, cfg)
    Path(known.get("token_file") or token_path(places, name)).unlink(missing_ok=True)
    return True


def load_remote(places, cfg: dict, name: str) -> tuple[str, str]:
    """(url, token) of a configured remote; RemoteConfigError names the fix."""
    known = remotes(cfg).get(name)
    if known is None:
        listed = ", ".join(sorted(remotes(cfg))) or "none yet"
        raise RemoteConfigError(f"no remote brain named {name!r} (configured: {listed}); "
                                "fix: `brain connect URL --token T --name NAME` adds one")
    path = Path(known.get("token_file") or token_path(places, name))
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as e:
        raise RemoteConfigError(f"the token of remote {name!r} is unreadable ({path}: {e.strerror}); "
                                f"fix: run `brain connect {known['url']} --token T --name {name}` again") from None
    return known["url"], token


def send_remote(places, cfg: dict, name: str, verb: str, args: dict) -> tuple[dict, bool]:
    """One tool call on a remote brain, as (body, is_error)."""
    from ..daemon.client.remote import HttpMcp

    url, token = load_remote(places, cfg, name)
    client = HttpMcp(url, token, timeout_s=60.0)
    try:
        return client.send(verb, args)
    finally:
        client.close()


def serve_remote(places, cfg: dict, name: str) -> int:
    """`brain serve --remote NAME`: a stdio MCP relay to the remote brain (for harnesses without HTTP)."""
    import sys

    from ..daemon.client.remote import relay_stdio

    try:
        url, token = load_remote(places, cfg, name)
    except RemoteConfigError as e:
        message, _, fix = str(e).partition("; fix: ")
        print(f"error: {message}", file=sys.stderr)
        if fix:
            print(f"fix: {fix}", file=sys.stderr)
        return 1
    return relay_stdio(url, token)
