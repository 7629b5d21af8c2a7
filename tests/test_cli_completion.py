"""Shell completion of values, not only commands and flags: harness and host names,
scopes, doctor areas, setting names and a setting's closed set of values."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

BRAIN = [sys.executable, "-m", "brain.cli.entry"]


def complete(words: str) -> list[str]:
    cword = len(words.split(" ")) - 1
    r = subprocess.run(BRAIN, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, _BRAIN_COMPLETE="complete_bash", COMP_WORDS=words, COMP_CWORD=str(cword)))
    return r.stdout.split()


@pytest.mark.parametrize("words,expected", [
    ("brain hooks install ", ["claude", "codex"]),
    ("brain hooks uninstall co", ["codex"]),
    ("brain mcp install ", ["claude", "codex", "opencode", "cursor", "vscode", "gemini"]),
    ("brain mcp install vscode --scope ", ["user", "project", "local"]),
    ("brain connect https://x --install v", ["vscode"]),
    ("brain doctor ho", ["hooks"]),
    ("brain config set mcp_", ["mcp_surface"]),
    ("brain config set mcp_surface ", ["verbs", "starter", "full"]),
    ("brain config set embeddings.enabled ", ["true", "false"]),
    ("brain config unset hooks.dead", ["hooks.deadline_ms"]),
])
def test_values_complete(words, expected):
    assert complete(words) == expected


def test_every_doctor_area_completes():
    from brain.cli.app import app  # noqa: F401  (registers every area's checks)
    from brain.cli.doctor import CHECKS

    assert complete("brain doctor ") == list(CHECKS)
