"""Bounded arguments and private data kept from remote callers (real engine and index)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import call
from indexer_fixtures import open_index, write  # noqa: F401

from brain.daemon.protocol.limits import MAX_FACT_CHARS, MAX_STRING_CHARS
from brain.daemon.protocol.tools import ALL_TOOLS

README = Path(__file__).resolve().parents[1] / "README.md"


def test_fact_size_is_capped_advertised_and_documented(engine, remote):
    body, err = call(engine, "remember", {"fact": "x" * (10 * 1024 * 1024), "provenance": "t"}, remote)
    assert err and body["error"] == "invalid_params"
    assert str(MAX_FACT_CHARS) in body["message"] and "put_page" in body["suggestion"]
    ok, err = call(engine, "remember", {"fact": "y" * MAX_FACT_CHARS, "provenance": "t"}, remote)
    assert not err and ok["status"] == "inserted"
    schema = ALL_TOOLS["remember"].input_schema()["properties"]["fact"]
    assert schema["maxLength"] == MAX_FACT_CHARS
    assert f"{MAX_FACT_CHARS:,}" in README.read_text() or str(MAX_FACT_CHARS) in README.read_text()


def test_the_entity_cap_is_one_constant_that_descriptions_handlers_and_the_hook_share(engine, remote):
    from brain.daemon.protocol.limits import MAX_ENTITIES
    from brain.hooks.session_start import choose_entities

    for tool in ("context_pack", "delta"):
        assert f"at most {MAX_ENTITIES}" in ALL_TOOLS[tool].param("entities").description
    names = [f"n{i}" for i in range(MAX_ENTITIES + 3)]
    body, err = call(engine, "context_pack", {"entities": ", ".join(names)}, remote)
    assert not err and body["entities"] == names[:MAX_ENTITIES]
    assert len(choose_entities(names, "project")) == MAX_ENTITIES
    repo = README.parent
    holders = [p.relative_to(repo).as_posix() for folder in ("cli", "daemon", "hooks")
               for p in (repo / folder).rglob("*.py") if "MAX_ENTITIES = " in p.read_text()]
    assert holders == ["daemon/protocol/limits.py"]


@pytest.mark.parametrize("tool,args,key", [
    ("recall", {"query": "q"}, "query"), ("recall", {"grep": "g"}, "grep"), ("recall", {"entity": "e"}, "entity"),
    ("remember", {"fact": "f", "provenance": "p", "entity": "e"}, "entity"),
    ("context_pack", {"entities": "e"}, "entities"), ("entity", {"name": "n"}, "name"),
    ("search", {"query": "q"}, "query"), ("forget", {"id": "1", "reason": "r"}, "reason"),
])
def test_other_strings_are_bounded_too(engine, remote, tool, args, key):
    body, err = call(engine, tool, {**args, key: "z" * (MAX_STRING_CHARS + 1)}, remote)
    assert err and body["error"] == "invalid_params" and f'"{key}"' in body["message"], body


@pytest.fixture
def brain(vault, open_index):
    write(vault, "people/bob.md", "---\ntitle: Bob Builder\n---\nBob builds. Knows [[alice]].\n")
    write(vault, "secret/plan.md", "---\nvisibility: private\n---\n# Plan\n\n" + "Secret words. " * 400 + "\n")
    return open_index(vault)


def test_remote_status_counts_only_what_remote_callers_see(brain, remote, local):
    brain.facts.insert(fact="private one", kind="fact", entity_slug=None, visibility="private", source="t",
                       valid_until=None)
    brain.facts.insert(fact="world one", kind="fact", entity_slug=None, visibility="world", source="t",
                       valid_until=None)
    mine, _ = call(brain, "status", {}, local)
    theirs, _ = call(brain, "status", {}, remote)
    assert (mine["facts"], mine["active_facts"]) == (2, 2)
    assert (theirs["facts"], theirs["active_facts"]) == (1, 1)
    assert theirs["pages"] == mine["pages"] - 1
    bob_chunks = brain.page_db.execute("SELECT COUNT(*) FROM chunks c JOIN pages p ON p.id = c.page_id "
                                  "WHERE p.slug = 'people/bob'").fetchone()[0]
    assert mine["chunks"] > bob_chunks and theirs["chunks"] == bob_chunks


def test_put_page_on_a_private_slug_answers_as_for_an_absent_one(brain, remote, local, vault):
    import hashlib

    before = (vault / "secret/plan.md").read_bytes()
    private, perr = call(brain, "put_page", {"slug": "secret/plan", "content": "overwritten"}, remote)
    absent, aerr = call(brain, "put_page", {"slug": "secret/absent", "content": "overwritten"}, remote)
    assert perr == aerr is False
    assert {k: v for k, v in private.items() if k not in ("slug", "path")} == \
           {k: v for k, v in absent.items() if k not in ("slug", "path")}
    assert private["path"] == "secret/plan.md" and private["hash"] == hashlib.sha256(b"overwritten").hexdigest()
    # the private page itself is untouched, and what the caller sent is kept for the owner
    assert (vault / "secret/plan.md").read_bytes() == before
    held = sorted((vault / ".brain/held").glob("*secret__plan.md"))
    assert len(held) == 1 and held[0].read_bytes() == b"overwritten"
    assert held[0].stat().st_mode & 0o777 == 0o600
    from brain.cli.doctor import DoctorContext, _held

    [(status, _name, detail)] = list(_held(DoctorContext(places=None, cfg={}, vault=vault)))
    assert status == "warn" and "1 page(s)" in detail and str(vault / ".brain/held") in detail
    stale = "0" * 64
    p_body, _ = call(brain, "put_page", {"slug": "secret/plan", "content": "x", "expected_hash": stale}, remote)
    a_body, _ = call(brain, "put_page", {"slug": "secret/gone", "content": "x", "expected_hash": stale}, remote)
    assert p_body == {**a_body, "message": a_body["message"].replace("secret/gone", "secret/plan")}
    mine, _ = call(brain, "get_page", {"slug": "secret/plan"}, local)
    assert "Secret words" in mine["content"]


def test_superseded_by_never_shows_a_private_fact_id_remotely(engine, remote, local):
    old = engine.facts.insert(fact="Alice works at Acme", kind="fact", entity_slug="people/alice",
                              visibility="world", source="t", valid_until=None)
    engine.facts.insert(fact="Alice left Acme quietly", kind="fact", entity_slug="people/alice",
                        visibility="private", source="t", valid_until=None, supersede=old)
    for args in ({"supersessions": True}, {"entity": "people/alice", "include_expired": True}):
        theirs, _ = call(engine, "recall", args, remote)
        mine, _ = call(engine, "recall", args, local)
        assert [f["superseded_by"] for f in theirs["facts"] if f["id"] == old] == [None]
        assert [f["superseded_by"] for f in mine["facts"] if f["id"] == old] != [None]


def test_a_deep_private_slug_is_held_under_a_name_the_file_system_takes(tmp_path):
    from brain.indexer.vault.page_writes import _held_name

    stamp = "20261203T000000Z-000000001"
    deep = "/".join(f"{'folder' * 10}{i}" for i in range(6)) + "/plan"   # 6 folders of 61 characters
    deeper = deep.replace("plan", "plan-b")
    names = {_held_name(stamp, s) for s in (deep, deeper)}
    assert len(names) == 2
    for name in names:
        assert len(name.encode()) <= 200 and name.startswith(stamp) and name.endswith(".md")
        (tmp_path / name).write_bytes(b"kept")   # the OS accepts it
    assert _held_name(stamp, "secret/plan") == f"{stamp}-secret__plan.md"
