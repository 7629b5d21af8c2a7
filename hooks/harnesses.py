"""The harnesses brain installs into, one declaration each: Claude Code and Codex.

A `Harness` says everything the installers, `brain connect` and `brain doctor
hooks` need to know about one harness: its name and its own CLI (on PATH: the
harness is there to register MCP servers with), where its config lives, which
hook events run `brain hook session-start`, a feature flag the hooks need, how
its CLI registers brain and a remote brain as MCP servers, and what the doctor
checks beyond the hook entry. Callers look a harness up in `HARNESSES` by name
and never branch on it. The hooks files and their shape are in install.py;
hosts that only read an MCP config file are in mcp_files.py (docs/harnesses.md).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping

from . import InstallError
from .codex_flag import CODEX_HOOKS, HooksSwitch, codex_flag_state
from .install import COMPACT_MATCHER, SESSION_MATCHER, Target, project_dir, read_text

Row = tuple[str, str, str]   # (status, check, detail), as `brain doctor` prints them


@dataclass(frozen=True)
class Harness:
    name: str                                  # what a person types: `brain hooks install NAME`
    label: str                                 # how help texts name it
    program: str                               # its CLI; registering MCP servers needs it on PATH
    config_dir: Callable[[Mapping], Path]      # from the environment (HOME, its own override)
    user_hooks_file: str                       # relative to config_dir
    project_hooks_file: str                    # relative to the project root
    events: tuple[tuple[str, str], ...]        # (event, matcher) pairs the hook runs on
    flag_file: str | None                      # relative to config_dir: where `switch` lives
    mcp_scopes: tuple[str, ...]                # the --scope values its CLI can honour
    mcp_file: Callable[[Mapping], Path]        # where its CLI keeps user-scope MCP servers
    mcp_add: Callable[[str, list[str], str], list[str]]       # (name, server argv, scope) → its CLI's argv
    mcp_remove: Callable[[str, str], str]                      # (name, scope) → the command that undoes it
    mcp_block: Callable[[str, list[str]], str]                # (name, server argv) → the config to paste
    remote_add: Callable[[str, str, list[str]], list[str]]    # (name, url, brain's argv) → its CLI's argv
    installed_note: str                        # printed after a hook install: when it runs next
    switch: HooksSwitch | None = None          # a setting the harness runs hooks only with
    doctor_checks: Callable[[Target], Iterable[Row]] = lambda target: ()

    def target(self, project: bool = False, cwd: Path | None = None, environ: Mapping | None = None) -> Target:
        """The file(s) a hook install edits: the user's config, or this project's."""
        env = os.environ if environ is None else environ
        home = self.config_dir(env)
        path = project_dir(cwd) / self.project_hooks_file if project else home / self.user_hooks_file
        return Target(self.name, path, self.events, home / self.flag_file if self.flag_file else None, self.switch)

    def find_program(self) -> str | None:
        """The harness's CLI on PATH, or None (then the MCP entry is printed to add by hand)."""
        return shutil.which(self.program)


def _home(env: Mapping) -> Path:
    return Path(env.get("HOME") or Path.home())


def claude_dir(environ: Mapping | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("CLAUDE_CONFIG_DIR") or _home(env) / ".claude").expanduser()


def codex_home(environ: Mapping | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("CODEX_HOME") or _home(env) / ".codex").expanduser()


def _claude_block(name: str, server: list[str]) -> str:
    block = {"mcpServers": {name: {"type": "stdio", "command": server[0], "args": server[1:]}}}
    return ("# in ~/.claude.json (every project) or .mcp.json at a project's root:\n"
            + json.dumps(block, indent=2) + "\n")


def _codex_block(name: str, server: list[str]) -> str:
    toml_args = ", ".join(json.dumps(a) for a in server[1:])
    return (f"# in {codex_home() / 'config.toml'}:\n"
            f"[mcp_servers.{name}]\ncommand = {json.dumps(server[0])}\nargs = [{toml_args}]\n")


def _claude_remote(name: str, url: str, program: list[str]) -> list[str]:
    # Streamable HTTP, the token fetched at connection time by `brain connect --header NAME`
    # (never written into Claude Code's config)
    spec = {"type": "http", "url": url, "headersHelper": " ".join([*program, "connect", "--header", name])}
    return ["claude", "mcp", "add-json", "--scope", "user", name, json.dumps(spec)]


def _codex_flag_checks(target: Target) -> Iterable[Row]:
    """Codex runs hooks only with `[features] hooks = true` in config.toml (codex_flag.py)."""
    if target.flag_file is None:   # declared with the switch (HARNESSES below): never None for Codex
        return
    state = codex_flag_state(read_text(target.flag_file))
    if state is False:
        yield ("fail", "codex feature flag", f"hooks are switched off in {target.flag_file}: set "
               "`[features] hooks = true`")
    elif state is None:
        yield ("warn", "codex feature flag", f"{target.flag_file} does not set `[features] hooks = true` "
               "(older Codex builds need it): run `brain hooks install codex`")


HARNESSES: dict[str, Harness] = {h.name: h for h in (
    Harness(
        name="claude", label="Claude Code", program="claude", config_dir=claude_dir,
        # settings.local.json in a project: personal, not committed, where a hook running
        # this user's brain belongs
        user_hooks_file="settings.json", project_hooks_file=".claude/settings.local.json",
        events=(("SessionStart", SESSION_MATCHER),), flag_file=None,
        mcp_scopes=("user", "project", "local"), mcp_file=lambda env: _home(env) / ".claude.json",
        mcp_add=lambda name, server, scope: ["claude", "mcp", "add", "--scope", scope, name, "--", *server],
        mcp_remove=lambda name, scope: f"claude mcp remove --scope {scope} {name}",
        mcp_block=_claude_block, remote_add=_claude_remote,
        installed_note="Claude Code runs it at the next session start, resume, /clear and compaction.",
    ),
    Harness(
        name="codex", label="OpenAI Codex", program="codex", config_dir=codex_home,
        user_hooks_file="hooks.json", project_hooks_file=".codex/hooks.json",
        # SessionStart(source=compact) is what puts context back after a compaction;
        # PostCompact runs the same command to start/warm the daemon
        events=(("SessionStart", SESSION_MATCHER), ("PostCompact", COMPACT_MATCHER)),
        flag_file="config.toml", switch=CODEX_HOOKS,
        mcp_scopes=("user",), mcp_file=lambda env: codex_home(env) / "config.toml",
        mcp_add=lambda name, server, scope: ["codex", "mcp", "add", name, "--", *server],
        mcp_remove=lambda name, scope: f"codex mcp remove {name}",
        mcp_block=_codex_block,
        # Codex gets the stdio relay `brain serve --remote NAME`
        remote_add=lambda name, url, program: ["codex", "mcp", "add", name, "--", *program, "serve", "--remote", name],
        installed_note=("Codex runs it at the next session start and after compaction; Codex may ask you to "
                        "review and trust the new hook first (/hooks in Codex)."),
        doctor_checks=_codex_flag_checks,
    ),
)}


def harness(name: str) -> Harness:
    """The declaration of `name`; InstallError naming the known ones otherwise."""
    try:
        return HARNESSES[name]
    except KeyError:
        raise InstallError(f"unknown harness {name!r}: use one of {', '.join(HARNESSES)}") from None

