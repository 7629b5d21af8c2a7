"""Facts a shared store minted, written into the vault's log with the store's ids
(SqliteFactsStore.mirror; docs/scaling.md, "Who writes what")."""

from __future__ import annotations

import json
from pathlib import Path

from brain.daemon.facts.store import SqliteFactsStore
from brain.daemon.stores.facts import Fact, FactScope, Order
from brain.indexer.vault.visibility import Viewer


def _store(vault: Path, cache: Path) -> SqliteFactsStore:
    (vault / ".brain").mkdir(parents=True, exist_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    return SqliteFactsStore.for_vault(vault / ".brain", cache / "facts.sqlite", cache / "device")


def _fact(fid: int, text: str, *, expired: str | None = None, by: int | None = None,
          visibility: str = "shared") -> Fact:
    return Fact(id=fid, fact=text, kind="note", entity_slug="people/ada", visibility=visibility, source="agent",
                source_session="s1", context=None, confidence=1.0, notability="medium",
                valid_from="2026-12-01T10:00:00.000Z", valid_until=None, created_at="2026-12-01T10:00:00.000Z",
                expired_at=expired, expire_reason="superseded by fact #9000002" if by else
                ("forgotten" if expired else None), superseded_by=by)


def _log_lines(vault: Path) -> list[dict]:
    return [json.loads(line) for p in sorted((vault / ".brain" / "facts").glob("*.jsonl"))
            for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_mirrored_facts_keep_the_store_ids_and_survive_a_rebuild(tmp_path):
    vault, cache = tmp_path / "vault", tmp_path / "cache"
    store = _store(vault, cache)
    try:
        wrote = store.mirror([_fact(9000001, "Ada leads the storage team"),
                              _fact(9000002, "Ada moved to Lyon", visibility="private")])
        assert wrote == 2
        got = store.get(9000001, Viewer.owner())
        assert got is not None and got.fact == "Ada leads the storage team"
        # the private one stays private: the world does not see it
        assert store.get(9000002, Viewer.world()) is None
        assert store.get(9000002, Viewer.owner()) is not None
        # the records are in the vault's log, with the store's ids
        ids = [r["id"] for r in _log_lines(vault) if r["op"] == "insert"]
        assert ids == [9000001, 9000002]
        # again: nothing new is written
        assert store.mirror([_fact(9000001, "Ada leads the storage team")]) == 0
        assert len(_log_lines(vault)) == 2
    finally:
        store.close()
    # the cache is disposable: a fresh projection from the log has the same ids
    (cache / "facts.sqlite").unlink()
    again = _store(vault, cache)
    try:
        listed = again.listed(FactScope(order=Order.ID), Viewer.owner(), None)
        assert [f.id for f in listed] == [9000001, 9000002]
    finally:
        again.close()


def test_an_expiry_in_the_store_reaches_the_log_once(tmp_path):
    vault, cache = tmp_path / "vault", tmp_path / "cache"
    store = _store(vault, cache)
    try:
        store.mirror([_fact(9000001, "Ada lives in Paris")])
        expired = _fact(9000001, "Ada lives in Paris", expired="2026-12-02T09:00:00.000Z", by=9000002)
        newer = _fact(9000002, "Ada lives in Lyon")
        assert store.mirror([expired, newer]) == 2   # the expiry, and the new fact
        assert store.get(9000001, Viewer.owner()).expired_at == "2026-12-02T09:00:00.000Z"
        assert store.listed(FactScope(), Viewer.owner(), None)[0].id == 9000002
        assert store.mirror([expired, newer]) == 0
        ops = [(r["op"], r["id"]) for r in _log_lines(vault)]
        assert ops == [("insert", 9000001), ("expire", 9000001), ("insert", 9000002)]
    finally:
        store.close()
