"""Shared pieces for the hook tests: a seeded brain home, real-shaped harness
payloads, and a runner for `brain hook session-start` as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BRAIN = [sys.executable, "-m", "brain.cli.entry"]
VENV_BIN = str(Path(sys.executable).parent)

ME_PAGE = """---
title: Me
aliases: [myself]
type: person
---
# Me

The person this brain belongs to; writes Python and keeps notes in Markdown.
"""

PROJECT_PAGE = """---
title: Lighthouse
aliases: [lighthouse-repo]
type: project
---
# Lighthouse

A harbour-monitoring service; [[Me]] maintains it.
"""

FACT = "I prefer dark mode in every editor"


def env_for(home: Path, **extra) -> dict:
    """The environment of a harness running our hook with this brain home."""
    env = dict(os.environ, BRAIN_HOME=str(home), HF_HUB_OFFLINE="1")
    env.pop("BRAIN_VAULT", None)
    env["PATH"] = VENV_BIN + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def brain(env: dict, *args, stdin: bytes | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run([*BRAIN, *args], input=stdin, capture_output=True, env=env, timeout=timeout)


def seed_home(home: Path, *, deadline_ms: int | None = None, standing: list[str] | None = None) -> Path:
    """A brain home whose vault has people/me.md, projects/lighthouse.md and
    one fact about people/me; embeddings off so no test loads the model."""
    vault = home / "vault"
    (vault / "people").mkdir(parents=True)
    (vault / "projects").mkdir()
    (vault / "people" / "me.md").write_text(ME_PAGE)
    (vault / "projects" / "lighthouse.md").write_text(PROJECT_PAGE)
    env = env_for(home)
    r = brain(env, "init", str(vault), "--no-daemon")
    assert r.returncode == 0, r.stderr
    cfg = home / "config" / "config.toml"
    text = cfg.read_text() + "\n[embeddings]\nenabled = false\n"
    hooks = []
    if deadline_ms is not None:
        hooks.append(f"deadline_ms = {deadline_ms}")
    if standing is not None:
        hooks.append("standing_entities = [" + ", ".join(json.dumps(s) for s in standing) + "]")
    if hooks:
        text += "\n[hooks]\n" + "\n".join(hooks) + "\n"
    cfg.write_text(text)
    r = brain(env, "remember", FACT, "--provenance", "test", "--entity", "people/me", "--no-daemon")
    assert r.returncode == 0, r.stderr
    return vault


def claude_payload(cwd: Path, source: str = "startup") -> dict:
    """What Claude Code sends a SessionStart command hook."""
    return {"session_id": "9f1c2a7e-3b4d-4e5f-8a6b-1c2d3e4f5a6b",
            "transcript_path": str(cwd / ".claude-transcript.jsonl"),
            "cwd": str(cwd), "hook_event_name": "SessionStart", "source": source}


def codex_payload(cwd: Path, source: str = "startup") -> dict:
    """What Codex sends a SessionStart command hook."""
    return {"session_id": "0199a3c5-6d7e-7f80-9a1b-2c3d4e5f6a7b", "transcript_path": None,
            "cwd": str(cwd), "hook_event_name": "SessionStart", "model": "gpt-5-codex",
            "permission_mode": "default", "source": source}


def codex_post_compact(cwd: Path) -> dict:
    """What Codex sends a PostCompact command hook."""
    return {"session_id": "0199a3c5-6d7e-7f80-9a1b-2c3d4e5f6a7b", "turn_id": "turn-7",
            "transcript_path": None, "cwd": str(cwd), "hook_event_name": "PostCompact",
            "model": "gpt-5-codex", "trigger": "auto"}


def run_hook(env: dict, payload, *extra_args: str) -> subprocess.CompletedProcess:
    """Feed one payload (a dict, or raw bytes) to `brain hook session-start`."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return brain(env, "hook", "session-start", *extra_args, stdin=data)


def hook_log(home: Path) -> list[str]:
    try:
        return (home / "state" / "logs" / "hooks.log").read_text().splitlines()
    except FileNotFoundError:
        return []


def context_of(stdout: bytes) -> str:
    """The additionalContext of a SessionStart output, checking its shape."""
    out = json.loads(stdout)
    assert set(out) == {"hookSpecificOutput"}
    spec = out["hookSpecificOutput"]
    assert set(spec) == {"hookEventName", "additionalContext"}
    assert spec["hookEventName"] == "SessionStart"
    return spec["additionalContext"]
