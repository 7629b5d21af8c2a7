"""Installers: put our session-start hook into a harness's hooks file and take
it out again (which harnesses, and where their files live: harnesses.py; MCP
registration: mcp_register.py and mcp_files.py).

Claude Code's `settings.json` and Codex's `hooks.json` share one shape:
`hooks.<Event>` is a list of matcher groups, each with a `hooks` list of
`{type: "command", command, timeout}` handlers. Codex also needs its hooks
feature on in `config.toml` (`[features] hooks = true`; see codex_flag): the
target's `switch`, kept in its `flag_file`.

Every edit is a text splice (see json_splice), the file's previous bytes go
to one backup, `<name>.bak` (each write replaces it), and the file is
replaced atomically. Uninstall gives the original bytes back when nothing
else changed since install (it finds the backup that our install turns into
the current file); otherwise it removes only our handlers.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from ..indexer.vault.atomic_files import write_atomic as atomic_write

from . import InstallError
from . import json_splice as js
from .codex_flag import HooksSwitch
from .session_start import repo_root

SESSION_MATCHER = "startup|resume|clear|compact|fork"
COMPACT_MATCHER = "manual|auto"


@dataclass(frozen=True)
class Target:
    harness: str
    hooks_file: Path
    events: tuple[tuple[str, str], ...]   # (event, matcher) pairs we add
    flag_file: Path | None = None          # where a switch the hooks need lives (Codex: config.toml)
    switch: HooksSwitch | None = None      # that switch (codex_flag.CODEX_HOOKS)


@dataclass
class Change:
    path: Path
    old: str | None       # None: the file does not exist
    new: str | None       # None: delete the file
    note: str


# -- where things live ---------------------------------------------------------


def project_dir(cwd: Path | None = None) -> Path:
    here = Path(cwd or Path.cwd()).resolve()
    return repo_root(here) or here


def brain_program() -> list[str]:
    """How a harness should start `brain`: the absolute path of the brain that
    is running now. A harness does not start in this shell, so a bare `brain`
    that resolves here (an activated virtual environment) may not resolve there.
    The path is not resolved through symlinks: `~/.local/bin/brain` survives a
    reinstall that the target it points to does not."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "brain" and argv0.is_file():
        return [str(argv0.absolute())]
    # run as `python -m brain.cli.entry`: the console script installed beside this interpreter
    beside = Path(sys.executable).absolute().parent / "brain"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    return [str(Path(sys.executable).absolute()), "-m", "brain.cli.entry"]


def hook_command(program: list[str] | None = None) -> str:
    return shlex.join([*(program or brain_program()), "hook", "session-start"])


def hook_timeout(deadline_ms: int) -> int:
    """Seconds the harness waits before killing us: our own deadline plus
    interpreter start-up, never less than 5."""
    return max(5, math.ceil(deadline_ms / 1000) + 3)


def is_our_handler(handler) -> bool:
    """A handler whose command runs `brain hook session-start`."""
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return False
    cmd = handler.get("command")
    if not isinstance(cmd, str):
        return False
    try:
        words = shlex.split(cmd)
    except ValueError:
        return False
    return words[-2:] == ["hook", "session-start"] and any(
        Path(w).name == "brain" or w == "brain.cli.entry" for w in words[:-2])


def _groups_have_ours(groups) -> bool:
    return isinstance(groups, list) and any(
        isinstance(g, dict) and isinstance(g.get("hooks"), list) and any(is_our_handler(h) for h in g["hooks"])
        for g in groups)


# -- pure text transforms ------------------------------------------------------


def _root(text: str, path_label: str) -> js.Node:
    try:
        root = js.parse(text)
    except ValueError as e:
        raise InstallError(f"{path_label} is not valid JSON ({e}). Fix or move the file aside, then run the "
                           "command again; nothing was changed.") from None
    if root.kind != "object":
        raise InstallError(f"{path_label} must hold a JSON object; nothing was changed.")
    return root


def add_hooks(text: str | None, events, command: str, timeout: int, label: str = "the file") -> str:
    """`text` with our handler added under each (event, matcher); unchanged
    for events that already run it."""
    if text is None or not text.strip():
        text = "{}\n"
    for event, matcher in events:
        root = _root(text, label)
        group = {"matcher": matcher, "hooks": [{"type": "command", "command": command, "timeout": timeout}]}
        hooks = root.get("hooks")
        if hooks is None:
            text = js.add_member(text, root, "hooks", {event: [group]})
            continue
        if hooks.node.kind != "object":
            raise InstallError(f'"hooks" in {label} is not an object; fix it by hand, nothing was changed.')
        ev = hooks.node.get(event)
        if ev is None:
            text = js.add_member(text, hooks.node, event, [group])
        elif ev.node.kind != "array":
            raise InstallError(f'"hooks.{event}" in {label} is not a list; fix it by hand, nothing was changed.')
        elif not _groups_have_ours(js.value_of(text, ev.node)):
            text = js.add_item(text, ev.node, group)
    return text


def our_handler(text: str | None) -> tuple[str, int] | None:
    """(command, timeout) of the first handler of ours in this settings/hooks
    file; None when it has none or is not JSON."""
    if not text or not text.strip():
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    hooks = data.get("hooks") if isinstance(data, dict) else None
    for groups in hooks.values() if isinstance(hooks, dict) else ():
        for g in groups if isinstance(groups, list) else []:
            for h in (g.get("hooks") or []) if isinstance(g, dict) else []:
                if is_our_handler(h):
                    return h["command"], h.get("timeout", 0)
    return None


def has_our_hooks(text: str | None) -> bool:
    """Whether any event in this settings/hooks file runs our command."""
    return our_handler(text) is not None


def remove_hooks(text: str, label: str = "the file") -> str:
    """`text` without our handlers; a group left empty goes, and so does an
    event list (and then `hooks`) that only our removal emptied."""
    emptied: set[str] = set()
    while True:
        root = _root(text, label)
        hooks = root.get("hooks")
        if hooks is None or hooks.node.kind != "object":
            break
        hit = None
        for ev in hooks.node.members:
            for gi, g in enumerate(ev.node.items if ev.node.kind == "array" else []):
                inner = g.get("hooks") if g.kind == "object" else None
                if inner is None or inner.node.kind != "array":
                    continue
                ours = [i for i, h in enumerate(inner.node.items) if is_our_handler(js.value_of(text, h))]
                if ours:
                    hit = (ev, gi, inner, ours)
                    break
            if hit:
                break
        if not hit:
            break
        ev, gi, inner, ours = hit
        if len(ours) == len(inner.node.items):
            text = js.remove_item(text, ev.node, gi)
        else:
            text = js.remove_item(text, inner.node, ours[0])
        emptied.add(ev.key)
    for event in sorted(emptied):
        root = _root(text, label)
        hooks = root.get("hooks")
        listed = hooks.node.get(event) if hooks else None
        if hooks is not None and listed is not None and listed.node.kind == "array" and not listed.node.items:
            text = js.remove_member(text, hooks.node, event)
    if emptied:
        root = _root(text, label)
        hooks = root.get("hooks")
        if hooks is not None and hooks.node.kind == "object" and not hooks.node.members:
            text = js.remove_member(text, root, "hooks")
    return text


# -- files ---------------------------------------------------------------------


def read_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InstallError(f"{path} is not UTF-8 text; nothing was changed.") from None


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + ".bak")


def backups_of(path: Path) -> list[Path]:
    """This file's backups, newest first: the one `.bak`, then the
    `.bak-<timestamp>` files older versions left (the timestamp sorts as text)."""
    legacy = sorted(path.parent.glob(path.name + ".bak-*"), key=lambda p: p.name, reverse=True)
    return [p for p in [backup_path(path)] if p.is_file()] + legacy


def _original_before_install(path: Path, current: str, redo) -> tuple[bool, str | None]:
    """(found, original): the backup that `redo` turns into `current`, or the
    absent file when `redo(None)` does; (False, None) when neither does."""
    for b in backups_of(path):
        try:
            old = read_text(b)
        except InstallError:
            continue
        try:
            if old is not None and redo(old) == current and old != current:
                return True, old
        except InstallError:
            continue
    try:
        if redo(None) == current:
            return True, None
    except InstallError:
        pass
    return False, None


def plan_install(target: Target, command: str, timeout: int) -> tuple[list[Change], list[str]]:
    """The edits an install makes (empty when already installed) and warnings."""
    changes, warnings = [], []
    old = read_text(target.hooks_file)
    new = add_hooks(old, target.events, command, timeout, str(target.hooks_file))
    if new != old:
        changes.append(Change(target.hooks_file, old, new, f"add the session-start hook to {target.hooks_file}"))
    if target.switch is not None and target.flag_file is not None:
        fold = read_text(target.flag_file)
        fnew, warn = target.switch.enable(fold, str(target.flag_file))
        if warn:
            warnings.append(warn)
        if fnew != fold:
            changes.append(Change(target.flag_file, fold, fnew, f"{target.switch.turn_on} in {target.flag_file}"))
    return changes, warnings


def plan_uninstall(target: Target) -> tuple[list[Change], list[str]]:
    """The edits an uninstall makes: original bytes back when nothing else
    changed since install, else only our handlers removed."""
    changes, notes = [], []
    cur = read_text(target.hooks_file)
    if cur is not None and cur.strip():
        _root(cur, str(target.hooks_file))  # a file that does not parse is reported, not called "not installed"
    ours = our_handler(cur)
    if ours is not None and cur is not None:
        command, timeout = ours
        label = str(target.hooks_file)
        found, original = _original_before_install(
            target.hooks_file, cur, lambda t: add_hooks(t, target.events, command, timeout, label))
        if found:
            changes.append(Change(target.hooks_file, cur, original,
                                  f"restore {target.hooks_file} as it was before install"))
        else:
            changes.append(Change(target.hooks_file, cur, remove_hooks(cur, label),
                                  f"remove the session-start hook from {target.hooks_file}"))
    if target.switch is not None and target.flag_file is not None:
        switch = target.switch
        flag_file = target.flag_file
        fcur = read_text(flag_file)
        if fcur is not None and switch.state(fcur, str(flag_file)) is True:
            found, original = _original_before_install(
                flag_file, fcur, lambda t: switch.enable(t, str(flag_file))[0])
            if found:
                changes.append(Change(flag_file, fcur, original,
                                      f"restore {flag_file} as it was before install"))
            else:
                notes.append(f"left {switch.setting} in {flag_file}: it was there before, or the "
                             "file changed since install (other hooks may rely on it).")
    return changes, notes


def diff(change: Change) -> str:
    """A unified diff of one change, for --dry-run."""
    a = (change.old or "").splitlines(keepends=True)
    b = (change.new or "").splitlines(keepends=True)
    lines = difflib.unified_diff(a, b, fromfile=str(change.path) if change.old is not None else "/dev/null",
                                 tofile=str(change.path) if change.new is not None else "/dev/null")
    return "".join(x if x.endswith("\n") else x + "\n\\ No newline at end of file\n" for x in lines)


def backup(path: Path, text: str) -> Path:
    """Keep the file's current bytes in `<name>.bak` (one backup, replaced by the next write)."""
    dest = backup_path(path)
    atomic_write(dest, text.encode("utf-8"), path.stat().st_mode & 0o777)
    return dest


def apply(changes: list[Change]) -> list[str]:
    """Back up, then write (or delete) each file; returns one line per file."""
    done = []
    for ch in changes:
        saved = backup(ch.path, ch.old) if ch.old is not None else None
        if ch.new is None:
            ch.path.unlink()
        else:
            # a settings file we create may later hold secrets: owner-only
            atomic_write(ch.path, ch.new.encode("utf-8"), None if ch.path.exists() else 0o600)
        done.append(ch.note + (f" (backup: {saved})" if saved else ""))
    return done
