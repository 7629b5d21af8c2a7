"""Privacy fails closed: a private mark that does not parse still hides the page.

A page whose frontmatter cannot be read, or whose visibility is anything but
a plain public word, is private until fixed (docs/architecture.md "Private
pages"). Probed as a remote caller over the daemon's real MCP socket, and
through synthesize's prompt with a fake LLM on loopback.
"""

from __future__ import annotations

import json
import subprocess

import anyio
import pytest
from conftest import call
from indexer_fixtures import open_index  # noqa: F401  (fixture)
from daemon_fixtures import (  # noqa: F401  (fixtures)
    BRAIN, child_env, configured, daemon, reaper, small_vault, socket_session,
)
from llm_fakes import FakeLLM, json_answer

from brain.daemon.llm.providers import provider_from_config
from brain.indexer.vault.parse import parse_page

REMOTE = {"surface": "full", "lane": "remote", "client": "test"}
LOCAL = {"surface": "full", "lane": "local", "client": "test"}

BOMB = ("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(7)))

# each body names the quokka ledger (so a search finds it) and a marker the
# remote caller must never receive
MARKED = {
    "ledger/yaml-error.md": "---\ntitle: Quokka Ledger One\nvisibility: private\nowner: [unclosed\n---\n",
    "ledger/list-mark.md": "---\ntitle: Quokka Ledger Two\nvisibility: [private]\n---\n",
    "ledger/cased-mark.md": "---\ntitle: Quokka Ledger Three\nVisibility: Private\n---\n",
    "ledger/doubled-mark.md": "---\ntitle: Quokka Ledger Four\nvisibility: private\nvisibility: world\n---\n",
    "ledger/unclosed.md": "---\ntitle: Quokka Ledger Five\nvisibility: private\n\n",
    "ledger/alias-bomb.md": "---\ntitle: Quokka Ledger Six\n" + BOMB + "---\n",
    "ledger/typo-mark.md": "---\ntitle: Quokka Ledger Seven\nvisibility: privte\n---\n",
    "ledger/broken-no-key.md": "---\ntitle: Quokka Ledger Eight\nowner: {unclosed\n---\n",
}


def _body(n: int) -> str:
    return f"# Quokka ledger\n\nThe quokka ledger holds MARKED-SECRET-{n} and links [[Alice Example]].\n"


def _seed(vault) -> None:
    for n, (rel, head) in enumerate(MARKED.items()):
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(head + _body(n))


@pytest.mark.parametrize("rel", sorted(MARKED))
def test_each_unclear_mark_parses_private(rel):
    assert parse_page(rel, MARKED[rel] + _body(0)).visibility == "private"


@pytest.mark.parametrize("text", [
    "# Plain\n\nNo frontmatter at all.\n",
    "---\ntitle: T\n---\nbody\n",
    "---\nvisibility: world\n---\nbody\n",
    "---\nVisibility: Public\n---\nbody\n",
    "---\n---\nbody\n",
    "---\n\nA page that opens with a rule and never says who may read it.\n",
    "---\nbase: &b {x: 1}\nuse: *b\n---\nA harmless alias.\n",
])
def test_clear_or_absent_marks_stay_public(text):
    p = parse_page("notes/x.md", text)
    assert (p.visibility, p.visibility_doubt) == ("world", None), p.frontmatter_error


def test_the_sample_brain_stays_public_where_it_says_nothing(sample_vault):
    for path in sample_vault.rglob("*.md"):
        text = path.read_text()
        p = parse_page(path.relative_to(sample_vault).as_posix(), text)
        assert p.frontmatter_error is None, path
        assert p.visibility == ("private" if "visibility: private" in text else "world"), path


@pytest.fixture
def marked(small_vault):
    _seed(small_vault)
    return small_vault


def _text_of(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def test_remote_callers_get_no_byte_of_a_badly_marked_page(marked, daemon):
    slugs = [rel[:-3] for rel in MARKED]

    async def go():
        async with socket_session(daemon["socket"], LOCAL) as s:
            listed = json.loads(_text_of(await s.call_tool("list_pages", {"prefix": "ledger/", "limit": 50})))
            assert sorted(p["slug"] for p in listed["pages"]) == sorted(slugs)  # indexed, for the owner
        answers = []
        async with socket_session(daemon["socket"], REMOTE) as s:

            async def probe(tool, args):
                result = await s.call_tool(tool, args)
                text = _text_of(result)
                for value in args.values():   # what the caller sent may be echoed back, whole or split
                    for piece in [str(value), *str(value).split(", ")]:
                        text = text.replace(json.dumps(piece)[1:-1], "")
                answers.append(text)
                return result, json.loads(_text_of(result))

            for args in ({"query": "quokka ledger"}, {"query": "MARKED-SECRET-3"}, {"grep": "quokka"},
                         {"entity": "Quokka Ledger Two"}):
                await probe("recall", args)
            await probe("search", {"query": "quokka ledger"})
            await probe("list_pages", {"limit": 200})
            await probe("get_backlinks", {"slug": "people/alice-example"})
            await probe("context_pack", {"entities": "Quokka Ledger Three, ledger/list-mark"})
            for slug in slugs:
                got, body = await probe("get_page", {"slug": slug})
                assert got.is_error and body["error"] == "not_found", slug
                _, card = await probe("entity", {"name": slug})
                assert card["found"] is False, slug
        return answers

    answers = anyio.run(go)
    served = "\n".join(answers)
    assert "MARKED-SECRET" not in served and "ledger/" not in served and "Quokka Ledger" not in served
    assert "people/bob" in served  # the probes did reach real pages


def test_synthesize_never_sends_a_badly_marked_page_to_the_model(engine, vault, remote, local):
    _seed(vault)
    (vault / "notes").mkdir()
    (vault / "notes/quokkas.md").write_text("# Quokkas\n\nThe quokka ledger is kept in the shed.\n")
    engine.attach_index(watch=False)
    with FakeLLM() as fake:
        engine.llm = provider_from_config({"llm.provider": "anthropic", "llm.model": "claude-sonnet-4-5",
                                           "llm.timeout_s": 5.0, "llm.base_url": fake.anthropic_url},
                                          {"ANTHROPIC_API_KEY": "sk-ant-test"}, max_retries=0)
        fake.queue(json_answer("In the shed.", ["notes/quokkas"]))
        body, err = call(engine, "synthesize", {"question": "Where is the quokka ledger kept?"}, remote)
        assert not err, body
        posts = [json.dumps(r["body"]) for r in fake.requests if r["method"] == "POST"]
        assert posts and "notes/quokkas" in posts[0]
        assert "MARKED-SECRET" not in posts[0] and "ledger/" not in posts[0]


def test_doctor_names_each_unclear_page_and_its_line(marked, places):
    from brain.daemon import config as config_mod

    config_mod.save(places.config_file, {"vault": str(marked), "embeddings.enabled": False})
    r = subprocess.run([BRAIN, "doctor", "index", "--json"], capture_output=True, text=True,
                       env={**child_env(), "BRAIN_VAULT": str(marked)}, timeout=120)
    rows = [x for x in json.loads(r.stdout) if x["check"] == "bad frontmatter" and x["status"] == "warn"]
    details = {x["detail"].split(":", 1)[0]: x["detail"] for x in rows}
    assert set(details) == set(MARKED) - {"ledger/cased-mark.md"}   # `Visibility: Private` is clear
    assert "from line 4" in details["ledger/yaml-error.md"] and "private" in details["ledger/yaml-error.md"]
    assert "line 3" in details["ledger/list-mark.md"]
    assert "line 4" in details["ledger/doubled-mark.md"]
    assert "never closes" in details["ledger/unclosed.md"]
    assert "aliases" in details["ledger/alias-bomb.md"]
    assert "privte" in details["ledger/typo-mark.md"] and "line 3" in details["ledger/typo-mark.md"]


def test_an_index_from_before_the_rule_is_re_read(vault, open_index, remote):
    import sqlite3

    from indexer_fixtures import write

    write(vault, "ledger/cased-mark.md", MARKED["ledger/cased-mark.md"] + _body(3))
    e = open_index(vault)
    cache = e.cache_dir
    e.close()
    # the row an older brain left: `Visibility: Private` read as world, file unchanged since
    db = sqlite3.connect(cache / "index.sqlite")
    db.execute("UPDATE pages SET visibility = 'world'")
    db.execute("DROP INDEX links_task_to")   # nor the task links a later one added
    db.execute("ALTER TABLE links DROP COLUMN task")
    db.execute("ALTER TABLE links DROP COLUMN due")
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()
    e = open_index(vault)
    got, err = call(e, "get_page", {"slug": "ledger/cased-mark"}, remote)
    assert err and got["error"] == "not_found"
    listed, _ = call(e, "list_pages", {}, remote)
    assert listed["pages"] == []
