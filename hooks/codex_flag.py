"""Codex's hooks feature flag in `config.toml`: read it, and turn it on by
adding one line, leaving every other byte of the user's file as it was.

Older Codex builds run hooks only with `[features] codex_hooks = true`; newer
ones run them by default and read `hooks` as the canonical key, keeping
`codex_hooks` as an alias, so `codex_hooks = true` works for both.
"""

from __future__ import annotations

import tomllib

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


def enable_codex_hooks(text: str | None, label: str = "config.toml") -> tuple[str | None, str | None]:
    """(new text, warning): `[features] codex_hooks = true` added unless the
    feature is already set. An explicit `false` is the user's choice: we leave
    it and warn."""
    state = codex_flag_state(text, label)
    if state is True:
        return text, None
    if state is False:
        return text, (f"hooks are switched off in {label} ([features] hooks/codex_hooks = false); "
                      "Codex will not run the hook until you set it to true.")
    base = text or ""
    lines = base.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip().split("#", 1)[0].strip() == "[features]":
            nl = "\r\n" if line.endswith("\r\n") else "\n"
            if not line.endswith(("\n", "\r")):
                lines[i] = line + nl
            lines.insert(i + 1, "codex_hooks = true" + nl)
            new = "".join(lines)
            break
    else:
        if isinstance(_toml(text, label).get("features"), dict):
            return text, (f"{label} defines features without a [features] header; add "
                          "`codex_hooks = true` to it by hand.")
        # a blank line between the user's last table and ours
        sep = "" if not base.strip() else ("\n" if base.endswith("\n") else "\n\n")
        new = base + sep + "[features]\ncodex_hooks = true\n"
    if codex_flag_state(new, label) is not True:  # never write a flag that does not parse back
        return text, f"could not add the feature flag to {label}; add `[features] codex_hooks = true` by hand."
    return new, None
