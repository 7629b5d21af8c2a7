"""Nothing outside BRAIN_HOME, the vault and the model cache: init, index and a recall
with a fresh HOME leave no file under it (docs/architecture.md, "Where state lives")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

BRAIN = [sys.executable, "-m", "brain.cli.entry"]


def brain(env: dict, *args) -> subprocess.CompletedProcess:
    return subprocess.run([*BRAIN, *args], capture_output=True, text=True, env=env, timeout=180,
                          stdin=subprocess.DEVNULL)


@pytest.mark.model
def test_init_index_and_recall_write_nothing_under_home(brain_home, sample_vault, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), BRAIN_HOME=str(brain_home))
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "HF_HOME",
                 "ORT_DISABLE_TELEMETRY", "HF_HUB_DISABLE_TELEMETRY", "DO_NOT_TRACK"):
        env.pop(name, None)  # a library's default place is under HOME, and nothing turned off unasked

    r = brain(env, "init", str(sample_vault))
    assert r.returncode == 0, r.stderr
    deadline = time.monotonic() + 150
    status: dict = {}
    while time.monotonic() < deadline:  # the model loads and every chunk is embedded
        status = json.loads(brain(env, "status", "--json").stdout or "{}")
        if status.get("vectors_ready") or status.get("model_state") == "failed":
            break
        time.sleep(1)
    assert status.get("vectors_ready"), status
    r = brain(env, "recall", "who owns the follow-up with legal")
    assert r.returncode == 0 and "pages" in r.stdout, r.stderr
    brain(env, "daemon", "stop")

    written = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    assert written == []
