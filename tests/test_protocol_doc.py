"""`brain protocol`: the document matches what the server advertises, and every
answer our real verbs give matches the response-shape registry."""

import json
import os
import subprocess
import sys

import anyio
import pytest

from brain.daemon.protocol.document import VERSIONING_POLICY, build_document, render_text
from brain.daemon.protocol.shapes import ERROR_SCHEMA, RESPONSE_SCHEMAS, validate
from brain.daemon.protocol.tools import VERB_NAMES, VERBS
from conftest import call


def cli(*args, env=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "brain.cli.entry", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.fixture(scope="module")
def json_doc():
    proc = cli("protocol", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_json_document_shape(json_doc):
    assert json_doc["protocol"] == "MEMORY_VERBS" and json_doc["protocol_version"] == 1
    assert json_doc["versioning_policy"] == VERSIONING_POLICY
    assert list(json_doc["verbs"]) == list(VERB_NAMES)
    assert json_doc["error_schema"] == ERROR_SCHEMA
    for name, verb in json_doc["verbs"].items():
        assert set(verb) == {"description", "input_schema", "annotations", "response_schema"}
        assert verb["response_schema"] == RESPONSE_SCHEMAS[name]


def test_json_input_schemas_equal_the_advertised_ones(json_doc):
    advertised = {t.name: t.listing() for t in VERBS}
    for name, verb in json_doc["verbs"].items():
        assert verb["input_schema"] == VERBS[VERB_NAMES.index(name)].input_schema()
        assert verb["input_schema"] == advertised[name]["inputSchema"]
        assert verb["description"] == advertised[name]["description"]
        assert verb["annotations"] == advertised[name]["annotations"]


def test_json_input_schemas_equal_tools_list_over_stdio(vault):
    """The live server's tools/list, through the SDK client, says exactly what the document says."""
    from brain.daemon.conformance.runner import connect_stdio

    env = dict(os.environ, BRAIN_VAULT=str(vault))
    argv = [sys.executable, "-m", "brain.cli.entry", "serve", "--surface", "full", "--no-daemon"]

    async def listing():
        async with connect_stdio(argv, env=env) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t.model_dump(by_alias=True, exclude_none=True) for t in anyio.run(listing)}
    doc = build_document()
    for name, verb in doc["verbs"].items():
        assert tools[name]["inputSchema"] == verb["input_schema"]
        assert tools[name]["description"] == verb["description"]
        assert "outputSchema" not in tools[name]


def test_text_summary_lists_each_verb_with_optional_marks():
    text = render_text()
    assert text.splitlines()[0].startswith("MEMORY_VERBS v1")
    assert "  remember(fact, provenance, ttl?, entity?, kind?, visibility?, session_id?)" in text
    assert "  entity(name)" in text
    assert "[EXPENSIVE]" in text
    assert "brain protocol --json" in text
    proc = cli("protocol")
    assert proc.returncode == 0 and proc.stdout.strip() == text


def test_document_is_a_copy(json_doc):
    doc = build_document()
    doc["verbs"]["recall"]["response_schema"]["required"].append("oops")
    assert "oops" not in RESPONSE_SCHEMAS["recall"]["required"]


# -- every real answer validates ------------------------------------------------------

PAGES = {
    "people/alice-example.md": "---\ntitle: Alice Example\naliases: [Ally]\ntype: person\n---\n"
                               "# Alice Example\n\nAlice runs the platform team at [[Acme]].\n\n"
                               "## Timeline\n\n- **2026-01-05** | chat — Alice moved to Berlin\n",
    "companies/acme.md": "---\ntitle: Acme\n---\n# Acme\n\nAcme makes rockets. Works with [[Alice Example]].\n",
    "notes/secret.md": "---\ntitle: Secret plans\nvisibility: private\n---\nThe hidden roadmap.\n",
}


@pytest.fixture
def answers(engine, vault, local, remote):
    for rel, text in PAGES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    engine.attach_index(watch=False)
    got = []

    def run(name, args, caller=remote):
        body, is_error = call(engine, name, args, caller)
        got.append((name, args, body, is_error))
        return body

    alice = "people/alice-example"
    f1 = run("remember", {"fact": "Alice prefers morning meetings", "provenance": "chat", "entity": alice})
    run("remember", {"fact": "Alice prefers morning meetings", "provenance": "chat", "entity": alice})
    f2 = run("remember", {"fact": "Alice owes Bob the Q3 plan", "provenance": "chat", "entity": "Alice Example",
                          "kind": "commitment", "ttl": "30d", "session_id": "s1"})
    run("remember", {"fact": "Alice's salary is private", "provenance": "hr", "entity": alice,
                     "visibility": "private"}, local)
    run("remember", {"fact": "An unattributed note", "provenance": "chat"})
    for caller in (remote, local):
        run("recall", {}, caller)
        run("recall", {"entity": alice, "budget_tokens": 5}, caller)
        run("recall", {"query": "rockets Alice", "budget_tokens": 500, "limit": 5}, caller)
        run("recall", {"query": "roadmap"}, caller)
        run("recall", {"since": "2 days ago", "include_pending": True, "grep": "alice"}, caller)
        run("recall", {"session_id": "s1", "include_expired": True}, caller)
        run("recall", {"supersessions": True}, caller)
        run("entity", {"name": alice}, caller)
        run("entity", {"name": "Ally"}, caller)
        run("entity", {"name": "acme"}, caller)
        run("entity", {"name": "Nobody Anywhere"}, caller)
        run("context_pack", {"entities": "Alice Example, Acme, ghost", "budget_tokens": 40}, caller)
        run("context_pack", {"entities": alice, "since": "2020-01-01", "session_id": "s1",
                             "include_private": True}, caller)
        run("delta", {"since": "1970-01-01T00:00:00Z"}, caller)
        run("delta", {"since": "2000-01-01", "budget_tokens": 3, "entities": alice}, caller)
        run("delta", {"session_id": f"wake-{caller.remote}"}, caller)
        run("delta", {"session_id": f"wake-{caller.remote}", "budget_tokens": 100}, caller)
    run("forget", {"id": f2["id"], "reason": "done"})
    run("forget", {"id": f2["id"]})
    run("forget", {"id": f1["id"]}, local)
    run("synthesize", {"question": "Where does Alice work?"})
    # errors: each must be a clean envelope
    run("remember", {"fact": "x"})
    run("remember", {"fact": "x", "provenance": " "})
    run("remember", {"fact": "x", "provenance": "p", "ttl": "P30D"})
    run("recall", {"limit": "5"})
    run("entity", {"name": " "})
    run("forget", {"id": "999999999"})
    run("context_pack", {"entities": "a", "since": "yesterday-ish"})
    run("delta", {})
    return got


def test_every_answer_of_our_verbs_validates(answers):
    problems = []
    for name, args, body, is_error in answers:
        schema = ERROR_SCHEMA if is_error else RESPONSE_SCHEMAS[name]
        for p in validate(body, schema):
            problems.append(f"{name} {json.dumps(args)[:80]}: {p}")
    assert problems == []


def test_the_sample_covers_every_verb_and_both_outcomes(answers):
    ok = {name for name, _, _, err in answers if not err}
    assert ok >= set(VERB_NAMES) - {"synthesize"}
    errors = {body["error"] for _, _, body, err in answers if err}
    assert {"invalid_params", "provenance_required", "not_found", "unavailable"} <= errors
    # the interesting optional shapes were really produced, so the registry checked them
    bodies = [(n, b) for n, _, b, err in answers if not err]
    assert any(n == "recall" and b.get("results") for n, b in bodies)
    assert any(n == "entity" and "card" in b for n, b in bodies)
    assert any(n == "entity" and not b["found"] for n, b in bodies)
    assert any(n == "remember" and b["status"] == "duplicate" for n, b in bodies)
    assert any(n == "delta" and b["pages"] for n, b in bodies)


def test_a_synthesize_answer_validates(engine, vault, remote):
    from brain.daemon.llm.providers import provider_from_config
    from llm_fakes import FakeLLM, json_answer

    with FakeLLM() as fake:
        engine.llm = provider_from_config(
            {"llm.provider": "anthropic", "llm.model": "claude-sonnet-4-5", "llm.base_url": fake.anthropic_url,
             "llm.timeout_s": 5}, {"ANTHROPIC_API_KEY": "sk-ant-test"}, max_retries=0)
        fake.queue(json_answer("Nobody knows.", [], ["Everything."]))
        body, is_error = call(engine, "synthesize", {"question": "What is up?"}, remote)
    assert not is_error, body
    assert validate(body, RESPONSE_SCHEMAS["synthesize"]) == []
