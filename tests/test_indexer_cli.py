"""`brain index`, `brain rebuild`, `brain status`, `brain doctor index` in-process."""

import json

import pytest
from indexer_fixtures import write
from typer.testing import CliRunner


@pytest.fixture
def cli(vault, monkeypatch):
    from brain.cli.app import app

    monkeypatch.setenv("BRAIN_VAULT", str(vault))
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


def test_index_status_and_doctor(cli, vault):
    write(vault, "people/alice.md", "---\ntitle: [broken\n---\nAlice links [[nowhere]].\n")
    write(vault, "people/alice (conflicted copy 2026-01-01).md", "copy")
    res = cli("index", "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["pages"] == 1 and report["parsed"] == 1
    res = cli("index", "--json")
    assert json.loads(res.output)["parsed"] == 0  # nothing changed since
    res = cli("status", "--json")
    body = json.loads(res.output)
    assert body["pages"] == 1 and body["daemon"] is False and body["last_sync"]
    res = cli("doctor", "index")
    assert "conflicted copy" in res.output and "invalid YAML" in res.output and "[[nowhere]]" in res.output


def test_rebuild_keeps_fact_ids_and_pages(cli, vault):
    from brain.cli import route

    write(vault, "people/bob.md", "Bob the builder.")
    body, err = route.route_call("remember", {"fact": "Bob likes tea", "provenance": "test", "entity": "people/bob"},
                             no_daemon=True)
    assert not err
    fid = int(body["id"])
    res = cli("rebuild", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["pages"] == 1
    body, err = route.route_call("recall", {"entity": "people/bob", "query": "builder tea"}, no_daemon=True)
    assert not err and [f["id"] for f in body["facts"]] == [fid]
    assert [r["slug"] for r in body["results"]] == ["people/bob"]


def test_doctor_lists_each_unresolved_link_once_as_information(cli, vault):
    """In Obsidian a link to a note not written yet is usual: not a warning, and a page
    naming the same missing page three times is one example, not three."""
    write(vault, "people/alice.md", "Alice links [[Someday]], [[Someday]] and [[Someday|later]].\n")
    write(vault, "people/bob.md", "Bob links [[Someday]].\n")
    assert cli("index", "--json").exit_code == 0
    res = cli("doctor", "index", "--json")
    [row] = [r for r in json.loads(res.output) if r["check"] == "unresolved links"]
    assert row["status"] == "info"
    assert row["detail"].count("[[Someday]] in people/alice") == 1 and "[[Someday]] in people/bob" in row["detail"]
    res = cli("doctor", "index")
    line = next(x for x in res.output.splitlines() if "unresolved links" in x)
    assert line.startswith("  · [index] unresolved links: 4 links point at no page yet (e.g. "
                           "[[Someday]] in people/alice, [[Someday]] in people/bob)")
