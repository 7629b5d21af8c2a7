"""Embeddings switched off (`embeddings.enabled = false`): one state name, "off", from
the daemon's status through init, status, recall and doctor, and init hands over as
soon as the keyword index is ready instead of waiting for a model that never loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from brain.indexer.embeddings.search_modes import EMBEDDINGS_OFF, MODEL_OFF, OFF_TEXT

BRAIN = [sys.executable, "-m", "brain.cli.entry"]


def brain(env: dict, *args, timeout: float = 120) -> subprocess.CompletedProcess:
    r = subprocess.run([*BRAIN, *args], capture_output=True, text=True, env=env, timeout=timeout)
    assert "Traceback" not in r.stdout + r.stderr, (args, r.stdout, r.stderr)
    return r


@pytest.fixture
def env(brain_home, tmp_path) -> dict:
    e = dict(os.environ, BRAIN_HOME=str(brain_home), HF_HUB_OFFLINE="1", HOME=str(tmp_path / "home"))
    e.pop("BRAIN_VAULT", None)
    (tmp_path / "home").mkdir()
    return e


def test_the_state_names_are_pinned():
    # the wire's cause (docs/protocol.md §3.1) and the status tool's model_state
    assert EMBEDDINGS_OFF == "embeddings_off"
    assert MODEL_OFF == "off"
    assert OFF_TEXT == "off (embeddings.enabled = false)"


def test_embeddings_off_reads_as_off_everywhere(env, sample_vault):
    assert brain(env, "config", "set", "embeddings.enabled", "false").returncode == 0
    t0 = time.monotonic()
    r = brain(env, "init", str(sample_vault))
    took = time.monotonic() - t0
    assert r.returncode == 0 and r.stderr == "", r
    assert f"semantic search: {OFF_TEXT}" in r.stdout, r.stdout
    assert "progress" not in r.stdout and "loading" not in r.stdout, r.stdout
    # init used to wait out its 40 s model timeout for a state the daemon never reported
    assert took < 30, (took, r.stdout)

    status = json.loads(brain(env, "status", "--json").stdout)
    body = status.get("result", status)
    assert body["model_state"] == MODEL_OFF, body

    r = brain(env, "status")
    assert r.returncode == 0 and f"semantic search: {OFF_TEXT}" in r.stdout, r.stdout
    assert "loading the embedding model" not in r.stdout

    r = brain(env, "recall", "billing migration", "--json")
    answer = json.loads(r.stdout)
    answer = answer.get("result", answer)
    assert answer["search_degraded_cause"] == EMBEDDINGS_OFF, answer

    r = brain(env, "recall", "billing migration")
    assert r.returncode == 0 and OFF_TEXT in r.stdout + r.stderr, (r.stdout, r.stderr)
    assert "brain daemon start" not in r.stdout + r.stderr  # the daemon runs

    r = brain(env, "doctor", "model")
    assert OFF_TEXT in r.stdout, r.stdout


def test_init_names_each_step_of_a_model_load_and_nothing_once_it_is_off():
    from brain.cli.init_cmd import loading_line

    export = "exporting the model to ONNX (once; keyword search serves meanwhile)"
    assert loading_line({"model_state": "loading", "model_phase": export}) == f"semantic search: {export}…"
    assert loading_line({"model_state": "loading"}) == "semantic search: loading the embedding model…"
    for settled in (MODEL_OFF, "ready", "failed"):
        assert loading_line({"model_state": settled}) is None


def test_status_without_a_daemon_says_off_too(env, tmp_path):
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "a.md").write_text("# A\n\nText.\n")
    assert brain(env, "init", str(tmp_path / "v"), "--no-daemon", "--create").returncode == 0
    assert brain(env, "config", "set", "embeddings.enabled", "false").returncode == 0
    r = brain(env, "status")
    assert r.returncode == 0 and f"semantic search: {OFF_TEXT}" in r.stdout, r.stdout
    assert "runs in the daemon" not in r.stdout
