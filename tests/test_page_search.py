"""Fielded page search: headings and titles win, titles and aliases as the vault writes them,
the passage that matched, evidence a reader can trust, old caches rebuilt, private pages kept private."""

import json
import sqlite3

from conftest import call
from indexer_fixtures import open_index, write  # noqa: F401

from brain.indexer.vault.chunks import split_chunks
from brain.indexer.pages.keyword import SCHEMA_VERSION
from brain.indexer.vault.visibility import Viewer

FILLER = "Nothing to see in this line, only words that fill the section out to a long chunk. "


def slugs(results):
    return [r["slug"] for r in results]


def test_each_chunk_knows_its_heading_path():
    body = "# Ledger v2\nintro\n## Design notes\nnotes\n### Workers\nworker text\n## Goals\ngoal text\n"
    got = [(c.heading, c.heading_path, c.text) for c in split_chunks(body)]
    assert got == [("Ledger v2", "Ledger v2", "intro"), ("Design notes", "Ledger v2\nDesign notes", "notes"),
                   ("Workers", "Ledger v2\nDesign notes\nWorkers", "worker text"),
                   ("Goals", "Ledger v2\nGoals", "goal text")]


def test_a_query_equal_to_a_heading_or_title_wins(vault, open_index, local):
    # the body pages say the words more often; the heading and the title say exactly them
    write(vault, "notes/mentions.md", "# Mentions\n" + "rate limit decision, again the rate limit decision. " * 6)
    write(vault, "projects/payouts.md", "# Payouts\nIntro.\n\n### 2026-11-26 — Rate limit decision\n"
                                        "Keep 50 requests per second.\n")
    write(vault, "notes/chatter.md", "# Chatter\n" + "the deploy checklist and the deploy checklist. " * 6)
    write(vault, "notes/Deploy checklist.md", "Steps before a release.\n")
    for i in range(8):   # other pages, so that how rare a word is means something
        write(vault, f"notes/other-{i}.md", f"# Other {i}\nA note about lunch, budgets and the weather, number {i}.\n")
    e = open_index(vault)
    results, _ = e.pages.search("2026-11-26 — Rate limit decision", 5, Viewer.owner())
    assert results[0]["slug"] == "projects/payouts" and results[0]["evidence"] == "keyword_exact"
    assert results[0]["chunk"] == "Keep 50 requests per second."   # the section under that heading
    results, _ = e.pages.search("2026-11-26 rate LIMIT decision", 5, Viewer.owner())   # same words, any case
    assert results[0]["slug"] == "projects/payouts"
    results, _ = e.pages.search("deploy checklist", 5, Viewer.owner())
    assert results[0]["slug"] == "notes/deploy-checklist" and results[0]["evidence"] == "exact_title_match"
    body, _ = call(e, "recall", {"query": "Deploy checklist"}, local)
    assert body["results"][0]["title"] == "Deploy checklist"


def test_titles_from_file_names_exactly_as_written(vault, open_index, remote):
    write(vault, "help/Obsidian for iOS and iPadOS.md", "Sync your vault on an iPhone.\n")
    write(vault, "help/sync-on-mac.md", "No title here either.\n")
    e = open_index(vault)
    titles = dict(e.page_db.execute("SELECT slug, title FROM pages").fetchall())
    assert titles == {"help/obsidian-for-ios-and-ipados": "Obsidian for iOS and iPadOS", "help/sync-on-mac": "sync-on-mac"}
    results, _ = e.pages.search("obsidian for ios and ipados", 5, Viewer.world())
    assert results[0]["title"] == "Obsidian for iOS and iPadOS" and results[0]["evidence"] == "exact_title_match"
    body, _ = call(e, "entity", {"name": "Obsidian for iOS and iPadOS"}, remote)
    assert body["card"]["entity"]["title"] == "Obsidian for iOS and iPadOS"


def test_aliases_keep_their_case_for_display_and_match_any_case(vault, open_index, remote):
    write(vault, "people/lena.md", "---\ntitle: Lena Hoffmann\naliases: [Dr. Hoffmann, LH, iPadOS person]\n---\nA doctor.\n")
    e = open_index(vault)
    body, _ = call(e, "entity", {"name": "dr. HOFFMANN"}, remote)
    assert body["card"]["aka"] == ["Dr. Hoffmann", "iPadOS person", "LH"]
    for q in ("lh", "LH", "IPADOS PERSON"):
        results, _ = e.pages.search(q, 5, Viewer.world())
        assert results[0]["slug"] == "people/lena" and results[0]["evidence"] == "alias_hit", q


def test_the_snippet_is_the_passage_that_matched(vault, open_index, remote):
    text = ("# Runbook\n" + FILLER * 3 + "\n\nBefore the cut-over, rehearse the failover with the on-call SRE.\n"
            "Then write the results into the handover channel.\n\n" + FILLER * 4 + "\n")
    write(vault, "notes/runbook.md", text)
    e = open_index(vault)
    results, _ = e.pages.search("rehearse failover", 5, Viewer.world())
    passage = results[0]["chunk"]
    assert "rehearse the failover" in passage and passage in text   # a verbatim slice a renderer can re-find
    assert len(passage) <= 240 and not passage.startswith("Nothing to see")
    # a wrapped bullet above the match is not shown from its middle
    write(vault, "notes/wrapped.md", "# Wrapped\n" + FILLER * 3 + "\n\n- Mei asked for a separate cluster for the projections, since the event store must stay "
                                     "fast while the nightly reconciliation jobs replay a whole month; agreed for GA,\n"
                                     "  not for the first cut-over.\n- Tom moved the Classic switch-off to March.\n")
    e.index.apply(["notes/wrapped.md"])
    results, _ = e.pages.search("classic switch-off", 5, Viewer.world())
    assert results[0]["chunk"].startswith("- ") and "Classic switch-off" in results[0]["chunk"]
    # a chunk short enough is shown whole
    write(vault, "notes/short.md", "# Short\nOne line about the quokka.\n")
    e.index.apply(["notes/short.md"])
    results, _ = e.pages.search("quokka", 5, Viewer.world())
    assert results[0]["chunk"] == "One line about the quokka."


def test_a_right_first_hit_is_not_labelled_weak(sample_vault, open_index, remote):
    e = open_index(sample_vault)
    for q, want in [("who is leading the billing migration?", "projects/billing-retirement"),
                    ("what does Priya want at the top of every design doc?", "people/priya-raman"),
                    ("how long should the old and new key both work during a rotation?",
                     "notes/how-to-rotate-api-keys")]:
        results, _ = e.pages.search(q, 5, Viewer.world())
        assert results[0]["slug"] == want, (q, slugs(results))
        assert results[0]["evidence"] != "weak_semantic" and results[0]["create_safety"] != "unknown", q
        assert all(r["evidence"] == "weak_semantic" for r in results[3:]), q   # the tail is only related
    body, _ = call(e, "recall", {"query": "who is leading the billing migration?"}, remote)
    assert "Migrate the remaining merchants" in body["results"][0]["chunk"]


def test_an_index_from_before_the_fields_is_rebuilt_not_mixed(vault, open_index, places, local):
    write(vault, "help/Obsidian for iOS and iPadOS.md", "---\naliases: [iPadOS]\n---\n## Sync\nUse the app.\n")
    e = open_index(vault)
    cache = e.cache_dir
    e.close()
    # make the caches look as an older brain left them: old keyword stamp, old tables
    (cache / "keyword" / "brain-schema.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION - 1}))
    db = sqlite3.connect(cache / "index.sqlite")
    db.execute("UPDATE pages SET title = 'Obsidian For IOS And IPadOS'")
    db.execute("ALTER TABLE aliases DROP COLUMN display")
    db.execute("ALTER TABLE chunks DROP COLUMN heading_path")
    db.execute("DROP INDEX links_task_to")
    db.execute("ALTER TABLE links DROP COLUMN task")
    db.execute("ALTER TABLE links DROP COLUMN due")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    e = open_index(vault)
    assert e.index.keyword.fresh   # the old keyword index was thrown away and rebuilt
    results, _ = e.pages.search("Sync", 5, Viewer.owner())
    assert slugs(results) == ["help/obsidian-for-ios-and-ipados"] and results[0]["evidence"] == "keyword_exact"
    assert results[0]["title"] == "Obsidian for iOS and iPadOS"
    body, _ = call(e, "entity", {"name": "ipados"}, local)
    assert body["card"]["aka"] == ["iPadOS"]
    assert e.page_db.execute("SELECT heading_path FROM chunks WHERE ord >= 0").fetchone()[0] == "Sync"


def test_remote_callers_never_see_private_pages_through_any_arm(vault, open_index, local, remote):
    write(vault, "people/doctor.md", "---\ntitle: Dr. Quill\naliases: [the orthopaedist]\nvisibility: private\n---\n"
                                     "## Back pain plan\nTwelve physiotherapy sessions.\n")
    write(vault, "notes/public.md", "# Public\nA public page that mentions physiotherapy once.\n")
    e = open_index(vault)
    for q in ("Dr. Quill", "the orthopaedist", "Back pain plan", "physiotherapy sessions", "twelve"):
        body, err = call(e, "recall", {"query": q}, remote)
        assert not err and "people/doctor" not in slugs(body["results"]), q
        assert all("Twelve" not in (r["chunk"] or "") for r in body["results"]), q
        body, _ = call(e, "search", {"query": q}, remote)
        assert "people/doctor" not in slugs(body["results"]), q
        body, _ = call(e, "recall", {"query": q}, local)
        assert slugs(body["results"])[0] == "people/doctor", q
