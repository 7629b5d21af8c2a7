"""An entity keeps its facts when its page moves, is renamed, or appears after them
(docs/architecture.md, "Entity identity"): real files, the real indexer, the real facts logs."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from conftest import call, facts_logs
from indexer_fixtures import open_index, write  # noqa: F401  (open_index is a fixture)

LISA = """---
title: Lisa Park
aliases: [Lisa]
---
# Lisa Park

Lisa runs finance. She approves budgets.
"""

SAM = """---
title: Sam Ortiz
aliases: [me]
---
# Sam Ortiz

This is me: the owner of this vault.
"""


def remember(engine, caller, fact, entity):
    body, err = call(engine, "remember", {"fact": fact, "provenance": "test", "entity": entity}, caller)
    assert not err, body
    return body


def card(engine, caller, name):
    body, err = call(engine, "entity", {"name": name}, caller)
    assert not err, body
    return body


def facts_about(engine, caller, name):
    body, err = call(engine, "recall", {"entity": name}, caller)
    assert not err, body
    return sorted(f["fact"] for f in body["facts"])


def move(vault, src, dst):
    (vault / dst).parent.mkdir(parents=True, exist_ok=True)
    os.rename(vault / src, vault / dst)


@pytest.fixture
def lisa(vault, open_index, remote):  # noqa: F811
    write(vault, "people/Lisa Park.md", LISA)
    engine = open_index(vault)
    remember(engine, remote, "Lisa approves the Q1 budget in January", "Lisa")
    remember(engine, remote, "Lisa prefers email to calls", "people/lisa-park")
    return engine


def test_a_folder_move_keeps_the_facts(lisa, vault, remote):
    move(vault, "people/Lisa Park.md", "people/finance/Lisa Park.md")
    lisa.index.apply(["people/Lisa Park.md", "people/finance/Lisa Park.md"])
    body = card(lisa, remote, "Lisa")
    assert body["card"]["entity"]["slug"] == "people/finance/lisa-park"
    assert body["card"]["active_fact_count"] == 2
    assert facts_about(lisa, remote, "Lisa") == ["Lisa approves the Q1 budget in January",
                                                 "Lisa prefers email to calls"]
    # the old address still leads to the facts, and a fact filed under it now lands on the page
    assert len(facts_about(lisa, remote, "people/lisa-park")) == 2
    saved = remember(lisa, remote, "Lisa is out on Friday", "people/lisa-park")
    assert saved["entity_slug"] == "people/finance/lisa-park"


def test_a_rename_keeps_the_facts_and_the_log_records_it(lisa, vault, remote):
    move(vault, "people/Lisa Park.md", "people/Lisa Chen.md")
    lisa.index.apply(["people/Lisa Park.md", "people/Lisa Chen.md"])
    assert card(lisa, remote, "people/lisa-chen")["card"]["active_fact_count"] == 2
    records = [json.loads(line) for p in facts_logs(vault) for line in p.read_text().splitlines()]
    moves = [r for r in records if r["op"] == "move"]
    assert [(m["from"], m["to"]) for m in moves] == [("people/lisa-park", "people/lisa-chen")]
    # the log lines that filed the facts are as they were: nothing past is edited
    assert {r["entity_slug"] for r in records if r["op"] == "insert"} == {"people/lisa-park"}


def test_a_move_seen_live_by_the_watcher(vault, open_index, remote):  # noqa: F811
    from indexer_fixtures import wait_for

    write(vault, "people/Lisa Park.md", LISA)
    engine = open_index(vault, watch=True)
    remember(engine, remote, "Lisa approves the Q1 budget in January", "Lisa")
    move(vault, "people/Lisa Park.md", "archive/Lisa P.md")
    assert wait_for(lambda: card(engine, remote, "people/lisa-park")["card"]["entity"]["slug"] == "archive/lisa-p"
                    and card(engine, remote, "archive/lisa-p")["card"]["active_fact_count"] == 1)


def test_a_move_made_while_brain_was_not_running(lisa, vault, places, remote):
    lisa.close()
    move(vault, "people/Lisa Park.md", "team/Lisa Park (CFO).md")
    from brain.daemon.server.vault_engine import VaultEngine

    engine = VaultEngine(vault, places, {}, writer="test")
    try:
        engine.attach_index()
        got = card(engine, remote, "Lisa")["card"]
        # the file name changed too: only the same bytes tie the new file to the old page
        assert got["entity"]["slug"] != "people/lisa-park"
        assert got["active_fact_count"] == 2
    finally:
        engine.close()


def test_a_page_created_after_its_facts_takes_them(vault, open_index, remote):  # noqa: F811
    engine = open_index(vault)
    remember(engine, remote, "Kenji joins the design team in March", "Kenji")
    remember(engine, remote, "Kenji speaks Japanese and Portuguese", "Kenji")
    before = card(engine, remote, "Kenji")["card"]
    assert before["entity"]["slug"] == "kenji" and before["active_fact_count"] == 2
    write(vault, "people/Kenji Watanabe.md", "# Kenji Watanabe\n\nDesigner.\n")
    engine.index.apply(["people/Kenji Watanabe.md"])
    after = card(engine, remote, "Kenji")["card"]
    assert after["entity"]["slug"] == "people/kenji-watanabe"
    assert after["active_fact_count"] == 2
    assert len(facts_about(engine, remote, "people/kenji-watanabe")) == 2


def test_facts_filed_under_a_phantom_slug_find_the_page_with_that_alias(vault, open_index, remote):  # noqa: F811
    write(vault, "people/Sam Ortiz.md", SAM)
    engine = open_index(vault)
    remember(engine, remote, "I prefer dark mode in every editor", "people/me")
    got = card(engine, remote, "me")["card"]
    assert got["entity"]["slug"] == "people/sam-ortiz"
    assert got["active_fact_count"] == 1


def test_two_pages_sharing_the_name_are_never_guessed(vault, open_index, remote):  # noqa: F811
    engine = open_index(vault)
    remember(engine, remote, "Alex owes me lunch", "Alex")
    write(vault, "people/Alex Kim.md", "---\naliases: [Alex]\n---\n# Alex Kim\n")
    write(vault, "people/Alex Roe.md", "---\naliases: [Alex]\n---\n# Alex Roe\n")
    engine.index.apply(["people/Alex Kim.md", "people/Alex Roe.md"])
    assert facts_about(engine, remote, "alex") == ["Alex owes me lunch"]
    assert card(engine, remote, "people/alex-kim")["card"]["active_fact_count"] == 0
    assert card(engine, remote, "people/alex-roe")["card"]["active_fact_count"] == 0


def test_a_private_page_never_takes_a_fact_by_name(vault, open_index, remote, local):  # noqa: F811
    engine = open_index(vault)
    remember(engine, remote, "Quinn likes tea", "Quinn")
    write(vault, "people/Quinn.md", "---\nvisibility: private\n---\n# Quinn\n")
    engine.index.apply(["people/Quinn.md"])
    body, err = call(engine, "recall", {"query": "tea"}, remote)
    assert not err
    assert [f["entity_slug"] for f in body["facts"]] == ["quinn"]


def test_rebuild_after_a_move_gives_the_same_cards(lisa, vault, places, remote):
    move(vault, "people/Lisa Park.md", "people/finance/Lisa Park.md")
    lisa.index.apply(["people/Lisa Park.md", "people/finance/Lisa Park.md"])
    before = card(lisa, remote, "Lisa")["card"]
    lisa.close()
    shutil.rmtree(places.cache_dir(vault))
    from brain.daemon.server.vault_engine import VaultEngine

    engine = VaultEngine(vault, places, {}, writer="test")
    try:
        engine.attach_index()
        after = card(engine, remote, "Lisa")["card"]
        assert (after["entity"]["slug"], after["active_fact_count"]) == (before["entity"]["slug"], 2)
    finally:
        engine.close()


def test_a_move_then_a_move_back(lisa, vault, remote):
    move(vault, "people/Lisa Park.md", "people/old/Lisa Park.md")
    lisa.index.apply(["people/Lisa Park.md", "people/old/Lisa Park.md"])
    remember(lisa, remote, "Lisa moved desks", "Lisa")   # filed under people/old/lisa-park
    move(vault, "people/old/Lisa Park.md", "people/Lisa Park.md")
    lisa.index.apply(["people/Lisa Park.md", "people/old/Lisa Park.md"])
    assert card(lisa, remote, "Lisa")["card"]["entity"]["slug"] == "people/lisa-park"
    assert card(lisa, remote, "Lisa")["card"]["active_fact_count"] == 3


def _device(vault, home):
    from brain.daemon.places import Places
    from brain.daemon.server.vault_engine import VaultEngine

    engine = VaultEngine(vault, Places.from_env({"BRAIN_HOME": str(home)}), {}, writer="test")
    engine.attach_index()
    return engine


def _sync_logs(a, b):
    """What a file-sync tool does with the facts logs: each device's own log copied to the other."""
    for src, dst in ((a, b), (b, a)):
        for log in (src / ".brain" / "facts").glob("*.jsonl"):
            target = dst / ".brain" / "facts" / log.name
            # the newer version wins: the one that extends the other (each log has one writer)
            if not target.exists() or (log.read_bytes() != target.read_bytes()
                                       and log.read_bytes().startswith(target.read_bytes())):
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = target.with_name(".sync-tmp-" + target.name)
                tmp.write_bytes(log.read_bytes())
                os.replace(tmp, target)


def test_two_devices_a_page_moved_on_one_while_the_other_files_under_the_old_slug(tmp_path, remote):
    a_vault, b_vault = tmp_path / "a", tmp_path / "b"
    for v in (a_vault, b_vault):
        write(v, "people/Lisa Park.md", LISA)
    a = _device(a_vault, tmp_path / "home-a")
    b = _device(b_vault, tmp_path / "home-b")
    try:
        remember(a, remote, "Lisa approves the Q1 budget in January", "Lisa")
        _sync_logs(a_vault, b_vault)
        # device A moves the page; device B, not synced yet, files a fact under the old slug
        move(a_vault, "people/Lisa Park.md", "people/finance/Lisa Park.md")
        a.index.apply(["people/Lisa Park.md", "people/finance/Lisa Park.md"])
        b.facts.catch_up()
        remember(b, remote, "Lisa is out on Friday", "people/lisa-park")
        # the sync: B's vault gets the move, and the logs cross
        move(b_vault, "people/Lisa Park.md", "people/finance/Lisa Park.md")
        _sync_logs(a_vault, b_vault)
        a.facts.catch_up()
        b.facts.catch_up()
        b.index.apply(["people/Lisa Park.md", "people/finance/Lisa Park.md"])
        for device in (a, b):
            got = card(device, remote, "Lisa")["card"]
            assert got["entity"]["slug"] == "people/finance/lisa-park"
            assert got["active_fact_count"] == 2
            assert facts_about(device, remote, "Lisa") == ["Lisa approves the Q1 budget in January",
                                                           "Lisa is out on Friday"]
    finally:
        a.close()
        b.close()


def test_a_page_renamed_and_edited_at_once_is_followed_by_its_frontmatter_id(vault, open_index, remote):  # noqa: F811
    write(vault, "people/Lisa Park.md", "---\nid: 7f3a\naliases: [Lisa]\n---\n# Lisa Park\n\nFinance.\n")
    engine = open_index(vault)
    remember(engine, remote, "Lisa approves the Q1 budget in January", "Lisa")
    os.remove(vault / "people/Lisa Park.md")
    write(vault, "people/Lisa Chen.md", "---\nid: 7f3a\naliases: [Lisa]\n---\n# Lisa Chen\n\nFinance, since May.\n")
    engine.index.apply(["people/Lisa Park.md", "people/Lisa Chen.md"])
    got = card(engine, remote, "people/lisa-chen")["card"]
    assert got["active_fact_count"] == 1


def test_an_old_slug_opens_the_moved_pages_card_and_context(lisa, vault, remote):
    move(vault, "people/Lisa Park.md", "people/Lisa Chen.md")
    lisa.index.apply(["people/Lisa Park.md", "people/Lisa Chen.md"])
    got = card(lisa, remote, "people/lisa-park")
    assert got["found"] and got["card"]["entity"]["slug"] == "people/lisa-chen"
    assert got["card"]["summary"].startswith("Lisa runs finance")   # the page's card, not a facts-only one
    body, err = call(lisa, "context_pack", {"entities": "people/lisa-park"}, remote)
    assert not err, body
    assert "Lisa approves the Q1 budget in January" in json.dumps(body)


def test_get_page_takes_the_names_entity_takes(lisa, vault, remote):
    body, err = call(lisa, "get_page", {"slug": "Lisa"}, remote)
    assert not err and body["slug"] == "people/lisa-park", body
    move(vault, "people/Lisa Park.md", "people/Lisa Chen.md")
    lisa.index.apply(["people/Lisa Park.md", "people/Lisa Chen.md"])
    body, err = call(lisa, "get_page", {"slug": "people/lisa-park"}, remote)
    assert not err and body["slug"] == "people/lisa-chen", body
    write(vault, "people/Quinn.md", "---\nvisibility: private\naliases: [Q]\n---\n# Quinn\n")
    lisa.index.apply(["people/Quinn.md"])
    body, err = call(lisa, "get_page", {"slug": "Q"}, remote)
    assert err and body["error"] == "not_found"


def test_a_phantom_slug_files_under_the_page_its_words_name_but_never_across_folders(vault, open_index, remote):  # noqa: F811
    write(vault, "people/Sam Ortiz.md", SAM)
    write(vault, "companies/Atlas.md", "# Atlas\n\nA shipping company.\n")
    engine = open_index(vault)
    assert remember(engine, remote, "I take notes in Markdown", "people/me")["entity_slug"] == "people/sam-ortiz"
    assert remember(engine, remote, "Atlas ships in May", "projects/atlas")["entity_slug"] == "projects/atlas"
    assert card(engine, remote, "companies/atlas")["card"]["active_fact_count"] == 0
    body, err = call(engine, "context_pack", {"entities": "people/me"}, remote)
    assert not err and "I take notes in Markdown" in json.dumps(body)


@pytest.mark.parametrize("order", ["new file first", "deletion first"])
def test_a_move_the_watcher_reports_as_two_changes(lisa, vault, remote, order):
    # a move into a folder the watcher does not watch yet comes as a new file and a deletion,
    # in either order, in batches of their own
    move(vault, "people/Lisa Park.md", "archive/Lisa P.md")
    batches = [["archive/Lisa P.md"], ["people/Lisa Park.md"]]
    for paths in batches if order == "new file first" else batches[::-1]:
        lisa.index.apply(paths)
    got = card(lisa, remote, "people/lisa-park")["card"]
    assert (got["entity"]["slug"], got["active_fact_count"]) == ("archive/lisa-p", 2)
