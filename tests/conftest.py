"""Shared fixtures. Every test runs with BRAIN_HOME in a temp folder, so no
test reads or writes the real config, caches, state or sockets."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# a real PostgreSQL for the tests that ask for `pg_dsn` (one server per session)
from pg_fixtures import pg_dsn, pg_migrated_dsn, pg_server, pg_template  # noqa: E402,F401

REPO = Path(__file__).resolve().parents[1]
SAMPLE_BRAIN = REPO / "sample_brain"


# One ONNX export of the bundled model for every test and every daemon a test
# starts (each has its own BRAIN_HOME): exporting takes tens of seconds.
# Keyed by model version and export format inside, so keeping it between runs is safe.
MODEL_CACHE = Path(tempfile.gettempdir()) / f"brain-test-models-{os.getuid()}"


@pytest.fixture(autouse=True)
def brain_home(monkeypatch):
    # short path: AF_UNIX socket paths must stay under ~108 bytes
    home = Path(tempfile.mkdtemp(prefix="bh-", dir="/tmp"))
    monkeypatch.setenv("BRAIN_HOME", str(home))
    monkeypatch.setenv("BRAIN_MODEL_CACHE", str(MODEL_CACHE))
    monkeypatch.delenv("BRAIN_VAULT", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # a model loaded in the test process writes nothing under the real HOME either
    # (the entry points set these for brain's own processes: indexer/embeddings/telemetry_off.py)
    from brain.indexer.embeddings.telemetry_off import TELEMETRY_OFF

    for name, value in TELEMETRY_OFF.items():
        monkeypatch.setenv(name, value)
    yield home
    # a daemon a test started (`brain init`, any verb) must not outlive it
    from brain.daemon.places import Places
    from brain.daemon.client.stop import stop_all

    stop_all(Places.from_env({"BRAIN_HOME": str(home)}))
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def places(brain_home):
    from brain.daemon.places import Places

    return Places.from_env({"BRAIN_HOME": str(brain_home)})


@pytest.fixture
def vault(tmp_path) -> Path:
    v = tmp_path / "vault"
    v.mkdir()
    return v


@pytest.fixture
def sample_vault(tmp_path) -> Path:
    """A private copy of sample_brain/ (tests may write to it)."""
    dst = tmp_path / "sample_brain"
    shutil.copytree(SAMPLE_BRAIN, dst, ignore=shutil.ignore_patterns(".brain"))
    return dst


@pytest.fixture
def engine(vault, places):
    from brain.daemon.server.vault_engine import VaultEngine

    e = VaultEngine(vault, places, {}, writer="test")
    yield e
    e.close()


@pytest.fixture
def local():
    from brain.daemon.protocol.caller import Caller

    return Caller.local("test")


@pytest.fixture
def remote():
    from brain.daemon.protocol.caller import Caller

    return Caller(remote=True, transport="test")


def call(engine, name, args, caller):
    """Run one tool call through the real dispatch pipeline."""
    from brain.daemon.protocol.dispatch import dispatch

    return dispatch(engine, name, args, caller)


def facts_logs(vault: Path) -> list[Path]:
    """Every facts log of a vault: the shared facts.jsonl of older versions and each device's own
    (docs/architecture.md, "Two devices, one vault")."""
    brain_dir = Path(vault) / ".brain"
    return [p for p in [brain_dir / "facts.jsonl", *sorted((brain_dir / "facts").glob("*.jsonl"))] if p.is_file()]


def facts_log_lines(vault: Path) -> list[str]:
    """The lines of every facts log, log after log."""
    return [line for p in facts_logs(vault) for line in p.read_text().splitlines()]
