"""The environment a harness must hand to brain, and how a hook command carries it.

A harness does not start in the user's shell: Claude Code launched from the
dock, or Codex from an editor, never sees a `BRAIN_HOME` exported in
`~/.bashrc`, and a brain started there looks for its config, caches and vault
in the default folders. So the installers write the variables that move
brain's state into each host's config in its own format (docs/harnesses.md,
"The environment brain needs"): an `env` object in the MCP JSON files and in
Claude Code's registry, an `env` table in Codex's TOML, and an `env K=V`
prefix on the hook command (a hooks file has no environment of its own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

# what moves brain's state; each is a folder or file path
CARRIED = ("BRAIN_HOME", "BRAIN_VAULT", "BRAIN_MODEL_CACHE")


def carried_env(environ: Mapping) -> dict[str, str]:
    """The carried variables set in `environ`, as absolute paths: the harness starts
    brain from a working directory of its own, where a relative path means another folder."""
    out = {}
    for name in CARRIED:
        value = environ.get(name)
        if value:
            out[name] = str(Path(value).expanduser().resolve())
    return out


def with_env(argv: list[str], env: Mapping[str, str]) -> list[str]:
    """`argv` run through `env K=V …` when there is anything to carry: one command string
    then sets the variables whether the harness runs it through a shell or splits it."""
    if not env:
        return list(argv)
    return ["env", *(f"{k}={v}" for k, v in env.items()), *argv]


def split_env(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """(variables, the command) of a hook command's words: the inverse of with_env,
    and also the shell's own `K=V command` form a user may have written."""
    rest = list(words)
    if rest and Path(rest[0]).name == "env":
        rest = rest[1:]
    env: dict[str, str] = {}
    while rest and "=" in rest[0] and not rest[0].startswith(("-", "/", "=")):
        key, value = rest.pop(0).split("=", 1)
        env[key] = value
    return env, rest


def clean_env(carried: Mapping[str, str], environ: Mapping) -> dict[str, str]:
    """The environment a harness gives its command, at its barest: the user's PATH and
    HOME and what the config carries (as `env -i` would), nothing from this shell."""
    env = {k: environ[k] for k in ("PATH", "HOME") if environ.get(k)}
    env.update(carried)
    return env
