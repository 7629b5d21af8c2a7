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


# -- the vault's slugs and tags, from the running daemon ------------------------------------


@pytest.fixture
def tagged_vault(tmp_path, brain_home):
    """A vault with a few tagged pages, registered with `brain init`; embeddings off."""
    vault = tmp_path / "notes"
    (vault / "people").mkdir(parents=True)
    (vault / "projects").mkdir()
    (vault / "people" / "priya-raman.md").write_text("---\ntags: [person, legal]\n---\n# Priya Raman\n")
    (vault / "people" / "pablo.md").write_text("# Pablo\n\nWorks on #project/ledger.\n")
    (vault / "projects" / "ledger.md").write_text("---\ntags: [project]\n---\n# Ledger\n")
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    for args in (["init", str(vault), "--no-daemon"], ["config", "set", "embeddings.enabled", "false"]):
        r = subprocess.run([*BRAIN, *args], capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 0, r.stderr
    return vault, env


def _daemon(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([*BRAIN, "daemon", *args], capture_output=True, text=True, env=env, timeout=60)


def test_slugs_and_tags_complete_from_the_running_daemon(tagged_vault):
    import json
    import time

    vault, env = tagged_vault
    assert _daemon(env, "start").returncode == 0
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            st = subprocess.run([*BRAIN, "call", "status", "{}"], capture_output=True, text=True, env=env)
            if st.returncode == 0 and json.loads(st.stdout).get("index_ready"):
                break
            time.sleep(0.2)
        assert complete("brain entity people/p") == ["people/pablo", "people/priya-raman"]
        assert complete("brain recall --entity pro") == ["projects/ledger"]
        assert complete("brain remember x --entity people/pr") == ["people/priya-raman"]
        assert complete("brain get ") == ["people/pablo", "people/priya-raman", "projects/ledger"]
        assert complete("brain recall deed --tag pro") == ["project", "project/ledger"]
        assert complete("brain recall deed --tag legal,pe") == ["legal,person"]
    finally:
        _daemon(env, "stop")


def test_without_a_daemon_they_complete_to_nothing_and_start_none(tagged_vault):
    import json

    vault, env = tagged_vault
    assert complete("brain entity people/") == []
    assert complete("brain recall --tag p") == []
    st = _daemon(env, "status", "--json")
    assert not json.loads(st.stdout).get("running"), st.stdout
