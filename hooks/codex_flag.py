"""Codex's hooks feature flag in `config.toml`: read it, and turn it on by
adding one line, leaving every other byte of the user's file as it was.

The feature key is `hooks` (`[features] hooks = true`); `codex_hooks` is its
deprecated alias, which an install renames in place (keeping its value).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Callable

from . import InstallError


def _toml(text: str | None, label: str) -> dict:
    try:
        return tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as e:
        raise InstallError(f"{label} is not valid TOML ({e}); fix it, nothing was changed.") from None


def codex_flag_state(text: str | None, label: str = "config.toml") -> bool | None:
    """True/False when the Codex hooks feature is set either way, None when unset."""
    feats = _toml(text, label).get("features")
    if not isinstance(feats, dict):
        return None
    for key in ("hooks", "codex_hooks"):  # `hooks` is the newer spelling
        if isinstance(feats.get(key), bool):
            return feats[key]
    return None


def _features_key_line(lines: list[str], key: str) -> int | None:
    """The index of the `key = …` line inside the `[features]` table, if any."""
    table = None
    for i, line in enumerate(lines):
        bare = line.split("#", 1)[0].strip()
        if bare.startswith("["):
            table = bare
        elif table == "[features]" and bare.split("=", 1)[0].strip() == key and "=" in bare:
            return i
    return None


def migrate_alias(text: str | None, label: str = "config.toml") -> str | None:
    """`codex_hooks = X` renamed to `hooks = X` when `hooks` is not set yet."""
    if not text:
        return text
    feats = _toml(text, label).get("features")
    if not isinstance(feats, dict) or "codex_hooks" not in feats or "hooks" in feats:
        return text
    lines = text.splitlines(keepends=True)
    i = _features_key_line(lines, "codex_hooks")
    if i is None:
        return text
    lines[i] = lines[i].replace("codex_hooks", "hooks", 1)
    new = "".join(lines)
    return new if _toml(new, label).get("features", {}).get("hooks") == feats["codex_hooks"] else text


def enable_codex_hooks(text: str | None, label: str = "config.toml") -> tuple[str | None, str | None]:
    """(new text, warning): the deprecated `codex_hooks` key renamed to `hooks`,
    and `[features] hooks = true` added unless the feature is already set. An
    explicit `false` is the user's choice: we leave it and warn."""
    text = migrate_alias(text, label)
    state = codex_flag_state(text, label)
    if state is True:
        return text, None
    if state is False:
        return text, (f"hooks are switched off in {label} ([features] hooks = false); "
                      "Codex will not run the hook until you set it to true.")
    base = text or ""
    lines = base.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip().split("#", 1)[0].strip() == "[features]":
            nl = "\r\n" if line.endswith("\r\n") else "\n"
            if not line.endswith(("\n", "\r")):
                lines[i] = line + nl
            lines.insert(i + 1, "hooks = true" + nl)
            new = "".join(lines)
            break
    else:
        if isinstance(_toml(text, label).get("features"), dict):
            return text, (f"{label} defines features without a [features] header; add "
                          "`hooks = true` to it by hand.")
        # a blank line between the user's last table and ours
        sep = "" if not base.strip() else ("\n" if base.endswith("\n") else "\n\n")
        new = base + sep + "[features]\nhooks = true\n"
    if codex_flag_state(new, label) is not True:  # never write a flag that does not parse back
        return text, f"could not add the feature flag to {label}; add `[features] hooks = true` by hand."
    return new, None


@dataclass(frozen=True)
class HooksSwitch:
    """A setting a harness runs hooks only with, kept in a file of its own (install.Target's
    `flag_file`): how to read it, how to turn it on, and how the installer's notes name it."""

    state: Callable[[str | None, str], bool | None]                      # (text, label) → on, off, unset
    enable: Callable[[str | None, str], tuple[str | None, str | None]]  # (text, label) → (new text, warning)
    turn_on: str                                                         # "turn on … in FILE"
    setting: str                                                         # "left SETTING in FILE"


CODEX_HOOKS = HooksSwitch(codex_flag_state, enable_codex_hooks, "turn on Codex hooks", "`hooks = true`")
