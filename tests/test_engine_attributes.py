"""The engine's attributes are the ones its `__init__` sets (daemon/stores/engine.py): nothing a
daemon does while serving adds one, so what a verb may read is all declared up front."""

from __future__ import annotations

import datetime
import json
import shutil
import subprocess
import sys
import time

import pytest

from daemon_fixtures import alive, child_env, configured, reaper, small_vault  # noqa: F401  (fixtures)

from brain.daemon.client.calls import send
from brain.daemon.protocol.tools import REGISTRY
from brain.daemon.rendezvous import read_pid_file

pytestmark = pytest.mark.usefixtures("reaper")

# a real daemon (process.main, as `python -m brain.daemon.server` runs it) whose engines note
# their attribute names right after construction and again once the daemon has stopped
DAEMON = """
import json, sys
from brain.daemon.server import vault_engine as engine_module, process

engines = []
build = engine_module.VaultEngine.__init__

def noting(self, *args, **kwargs):
    build(self, *args, **kwargs)
    engines.append((self, sorted(vars(self))))

engine_module.VaultEngine.__init__ = noting
try:
    process.main(["--vault", sys.argv[1], "--foreground"])
finally:
    with open(sys.argv[2], "w") as out:
        json.dump([{"built": names, "served": sorted(vars(e)), "stop_requested": e.stop_requested.is_set()}
                   for e, names in engines], out)
"""

# one call of every tool (a tool added to the registry needs a line here)
CALLS = {
    "whoami": [{}],
    "status": [{}],
    "request_tools": [{"surface": "full"}],
    "remember": [{"fact": "Alice Example leads the Acme renewal", "provenance": "test", "entity": "Alice Example"}],
    "recall": [{"query": "Acme renewal"}, {"entity": "Alice Example"}],
    "forget": [{"id": 1, "reason": "test"}],
    "entity": [{"name": "Alice Example"}, {"name": "Nobody Known"}],
    "context_pack": [{"entities": ["Alice Example"], "session_id": "s1"}],
    "delta": [{"session_id": "s1"}, {"session_id": "s1", "entities": ["Alice Example"]},
              {"since": "1970-01-01T00:00:00Z"}],
    "synthesize": [{"question": "Who leads the Acme renewal?"}],
    "search": [{"query": "Acme"}],
    "get_page": [{"slug": "companies/acme"}],
    "list_pages": [{}],
    "get_backlinks": [{"slug": "companies/acme"}],
    "put_page": [{"slug": "notes/written-by-a-call", "content": "# Written\n\nBy a call.\n"}],
}

# set from outside by delta's cursor store until that store is built with the engine
NOT_YET_DECLARED: set[str] = set()


def _wait_until_serving(places, vault, pid: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert alive(pid), "the daemon exited while starting"
        info = read_pid_file(places, vault)
        if info and info.get("pid") == pid and places.socket_path(vault).exists():
            return
        time.sleep(0.05)
    raise AssertionError("the daemon did not start within 60 s")


def test_serving_every_tool_adds_no_attribute_to_the_engine(places, configured, tmp_path):
    vault = configured
    out = tmp_path / "engines.json"
    child = subprocess.Popen([sys.executable, "-c", DAEMON, str(vault), str(out)], env=child_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_until_serving(places, vault, child.pid)
        assert set(CALLS) == set(REGISTRY.by_name), set(REGISTRY.by_name) ^ set(CALLS)
        for verb, calls in CALLS.items():
            for args in calls:
                send(places, vault, verb, args)
        # the vault goes away: the daemon notes it must stop, and stops itself
        shutil.rmtree(vault)
        body, is_error = send(places, vault, "status", {})
        assert is_error and body["error"] == "unavailable", body
        _, stderr = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    engines = json.loads(out.read_text())
    assert len(engines) == 1, stderr
    engine = engines[0]
    added = set(engine["served"]) - set(engine["built"])
    assert added <= NOT_YET_DECLARED, f"attributes set on the engine after __init__: {sorted(added)}"
    assert engine["stop_requested"], stderr  # the vault-lost path ran


# declared by the contract, built by the daemon's engine once the pages store exists
NOT_YET_BUILT: set[str] = set()


def test_the_daemons_engine_has_everything_the_contract_declares(places, small_vault):
    from brain.daemon.server.vault_engine import VaultEngine
    from brain.daemon.stores.engine import Engine as Contract

    declared = {name for name in vars(Contract) if not name.startswith("_")}
    assert {"facts", "clock", "label", "llm"} <= declared
    engine = VaultEngine(small_vault, places, {})
    try:
        missing = {name for name in declared if not hasattr(engine, name)}
    finally:
        engine.close()
    assert missing <= NOT_YET_BUILT, f"the daemon's engine lacks {sorted(missing)}"
    assert engine.clock.now().utcoffset() == datetime.timedelta(0)
