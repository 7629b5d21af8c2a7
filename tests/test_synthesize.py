"""synthesize end to end: real engine, real page index, real SDKs, fake LLM servers on loopback."""

from __future__ import annotations

import json
import re

import pytest

from conftest import call
from llm_fakes import FakeLLM, Reply, json_answer

from brain.daemon.llm.providers import provider_from_config
from brain.daemon.protocol.shapes import ERROR_SCHEMA, RESPONSE_SCHEMAS, validate

QUESTION = "When is the Apollo launch and why did it move?"

PAGES = {
    "projects/apollo.md": (
        "---\ntitle: Apollo Launch\ntype: project\ndate: 2026-03-10\n---\n"
        "# Apollo Launch\n\nThe Apollo launch moved to April because the vendor shipped the boards late. "
        "The launch budget is 40k.\n\n## Timeline\n- 2026-03-10: Apollo launch date moved to April 14.\n"
    ),
    "people/alice.md": (
        "---\ntitle: Alice Example\ntype: person\ndate: 2025-11-02\n---\n"
        "# Alice Example\n\nAlice leads the Apollo launch and owns the vendor relationship.\n"
    ),
    "notes/old-retro.md": (
        "---\ntitle: Apollo Retro 2024\ndate: 2024-01-05\n---\n"
        "# Apollo Retro 2024\n\nThe first Apollo launch attempt failed in testing.\n"
    ),
    "people/secret.md": (
        "---\ntitle: Secret Page\nvisibility: private\ndate: 2026-03-11\n---\n"
        "# Secret Page\n\nApollo launch PRIVATE-PAGE-SENTINEL: the real budget is 90k.\n"
    ),
    "companies/zeta.md": "---\ntitle: Zeta\n---\n# Zeta\n\nZeta sells cheese wholesale.\n",
}
WORLD_SLUGS = {"projects/apollo", "people/alice", "notes/old-retro"}


def _seed_pages(engine, vault, pages: dict[str, str]) -> None:
    for rel, text in pages.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    engine.attach_index(watch=False)


@pytest.fixture
def fake():
    with FakeLLM() as f:
        yield f


@pytest.fixture
def seeded(engine, vault):
    _seed_pages(engine, vault, PAGES)
    engine.facts.insert(fact="Apollo launch needs sign-off from legal", kind="commitment",
                        entity_slug="projects/apollo", visibility="world", source="test", valid_until=None)
    engine.facts.insert(fact="Apollo launch PRIVATE-FACT-SENTINEL", kind="fact",
                        entity_slug="projects/apollo", visibility="private", source="test", valid_until=None)
    return engine


def use(engine, fake, provider="anthropic", model="claude-sonnet-4-5", timeout_s=5.0, **extra_cfg):
    cfg = {"llm.provider": provider, "llm.model": model, "llm.timeout_s": timeout_s,
           "llm.base_url": fake.anthropic_url if provider == "anthropic" else fake.openai_url, **extra_cfg}
    env = {"ANTHROPIC_API_KEY": "sk-ant-test"} if provider == "anthropic" else {"OPENAI_API_KEY": "sk-test"}
    engine.llm = provider_from_config(cfg, env, max_retries=0)
    assert engine.llm.configured
    return engine.llm


def prompt_of(fake) -> str:
    """Everything the model was sent on its one compose call."""
    posts = [r for r in fake.requests if r["method"] == "POST"]
    assert len(posts) == 1
    return json.dumps(posts[0]["body"])


def page_text(vault) -> str:
    return re.sub(r"\s+", " ", " ".join((vault / rel).read_text() for rel in PAGES))


# -- no provider -------------------------------------------------------------------

@pytest.mark.parametrize("cfg,env,code", [
    ({}, {}, "NO_LLM_PROVIDER"),
    ({"llm.provider": "anthropic"}, {}, "NO_ANTHROPIC_API_KEY"),
    ({"llm.provider": "openai"}, {}, "NO_OPENAI_API_KEY"),
    ({"llm.provider": "openai", "llm.base_url": "http://127.0.0.1:9/v1"}, {}, "NO_LLM_MODEL"),
])
def test_no_provider_is_unavailable_even_with_pages(seeded, local, fake, cfg, env, code):
    seeded.llm = provider_from_config(cfg, env)
    body, is_error = call(seeded, "synthesize", {"question": QUESTION}, local)
    assert is_error and body["error"] == "unavailable"
    assert validate(body, ERROR_SCHEMA) == []
    assert body["detail"] == f"chat gateway unconfigured ({code})"
    s = body["suggestion"]
    assert "brain config set llm.provider anthropic" in s and "ANTHROPIC_API_KEY" in s
    assert "llm.base_url" in s and "llm.model" in s
    assert "answer" not in body
    assert fake.requests == []


def test_engine_without_provider_object_is_unavailable(seeded, remote):
    seeded.llm = None
    body, is_error = call(seeded, "synthesize", {"question": QUESTION}, remote)
    assert is_error and body["error"] == "unavailable" and body["suggestion"]
    assert body["detail"] == "chat gateway unconfigured (NO_LLM_PROVIDER)"


# -- a good answer ---------------------------------------------------------------------

@pytest.mark.parametrize("provider,model,usd", [
    ("anthropic", "claude-sonnet-4-5", (1200 * 3.0 + 80 * 15.0) / 1e6),
    ("openai", "gpt-4.1-mini", (1200 * 0.4 + 80 * 1.6) / 1e6),
])
def test_good_answer_each_wire_format(seeded, local, fake, vault, provider, model, usd):
    use(seeded, fake, provider, model)
    fake.queue(json_answer("The launch moved to April 14 because the vendor shipped late [[projects/apollo]].",
                           ["projects/apollo", "people/nobody", "[[people/alice]]", "projects/apollo"],
                           ["Whether legal signed off."], input_tokens=1200, output_tokens=80))
    body, is_error = call(seeded, "synthesize", {"question": QUESTION}, local)
    assert not is_error, body
    assert validate(body, RESPONSE_SCHEMAS["synthesize"]) == []
    # every field sent is declared, so a wrong type in any of them would be caught
    assert set(body) <= set(RESPONSE_SCHEMAS["synthesize"]["properties"])
    assert body["synthesis_status"] == "ok"
    assert body["answer"].startswith("The launch moved to April 14")
    # a slug never gathered is dropped; a wikilink-wrapped one is normalised; duplicates collapse
    assert body["sources"] == ["projects/apollo", "people/alice"]
    assert body["gaps"] == ["Whether legal signed off."]
    assert body["cost"] == {"model": model, "input_tokens": 1200, "output_tokens": 80,
                            "usd_estimate": pytest.approx(usd)}
    assert body["warnings"] == [] and body["takes_gathered"] == 0 and body["protocol_version"] == 1
    assert body["pages_gathered"] >= 2 and body["facts_gathered"] >= 1
    prompt = prompt_of(fake)
    assert "projects/apollo" in prompt and "vendor shipped the boards late" in prompt
    assert "sign-off from legal" in prompt
    req = [r for r in fake.requests if r["method"] == "POST"][0]
    headers = {k.lower(): v for k, v in req["headers"].items()}
    if provider == "anthropic":
        # older SDKs send x-api-key, newer ones a bearer token
        assert req["path"] == "/v1/messages" and "sk-ant-test" in headers.get("x-api-key", "") + headers.get(
            "authorization", "")
        assert "anthropic-version" in headers
        assert req["body"]["model"] == model and req["body"]["max_tokens"] > 0
    else:
        assert req["path"] == "/v1/chat/completions" and headers["authorization"] == "Bearer sk-test"
        assert req["body"]["messages"][0]["role"] == "system"


def test_fenced_json_block_is_accepted(seeded, local, fake):
    use(seeded, fake)
    inner = json.dumps({"answer": "April 14.", "sources": ["projects/apollo"], "gaps": []})
    fake.queue(Reply(text=f"```json\n{inner}\n```"))
    body, is_error = call(seeded, "synthesize", {"question": QUESTION}, local)
    assert not is_error and body["synthesis_status"] == "ok"
    assert body["answer"] == "April 14." and body["sources"] == ["projects/apollo"]


def test_usage_missing_gives_null_tokens_and_local_model_costs_zero(seeded, local, fake):
    use(seeded, fake, "openai", "llama3.1")
    fake.queue(json_answer("April.", ["projects/apollo"], input_tokens=None, output_tokens=None))
    body, _ = call(seeded, "synthesize", {"question": QUESTION}, local)
    assert body["cost"] == {"model": "llama3.1", "input_tokens": None, "output_tokens": None, "usd_estimate": 0.0}
    assert validate(body, RESPONSE_SCHEMAS["synthesize"]) == []


# -- compose failures: the frozen precedence ------------------------------------------

FAILURES = [
    (Reply(text="Sure! The launch moved to April."), "LLM_OUTPUT_NOT_JSON", 1200),
    (Reply(text='{"answer": "   ", "sources": []}'), "SYNTHESIS_EMPTY_ANSWER", 1200),
    (Reply(kind="refusal", text=""), "LLM_OUTPUT_NOT_JSON", 1200),
    (Reply(kind="status", status=429), "LLM_CALL_FAILED: rate_limited", None),
    (Reply(kind="status", status=500), "LLM_CALL_FAILED: provider_error", None),
    (Reply(delay_s=3.0, text='{"answer": "late"}'), "LLM_CALL_FAILED: timeout", None),
    (Reply(kind="drop"), "LLM_CALL_FAILED: network", None),
    (Reply(kind="status", status=404), "MODEL_NOT_USABLE:model_not_found", None),
]


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("reply,code,tokens", FAILURES, ids=[f[1] for f in FAILURES])
def test_compose_failure_with_pages_falls_back_to_quotes(seeded, local, fake, vault, provider, reply, code, tokens):
    use(seeded, fake, provider, "claude-sonnet-4-5" if provider == "anthropic" else "gpt-4.1-mini", timeout_s=0.5)
    fake.queue(reply)
    body, is_error = call(seeded, "synthesize", {"question": QUESTION}, local)
    assert not is_error, body
    assert validate(body, RESPONSE_SCHEMAS["synthesize"]) == []
    assert body["synthesis_status"] == "extractive_fallback"
    assert body["warnings"] == [code]
    assert body["sources"] and set(body["sources"]) <= WORLD_SLUGS | {"people/secret"}
    assert body["sources"][0] == "projects/apollo"
    # every quote is verbatim text of a gathered page, and nothing from the model leaks in
    quotes = re.findall(r'"(.*?)"\s*$', body["answer"], flags=re.M)
    assert quotes
    corpus = page_text(vault)
    for q in quotes:
        assert q.rstrip(" …") in corpus
    assert "Sure!" not in body["answer"] and "late" != body["answer"]
    assert body["cost"]["input_tokens"] == tokens
    assert body["pages_gathered"] >= 1


@pytest.mark.parametrize("reply,code,head", [
    (Reply(text="not json at all"), "LLM_OUTPUT_NOT_JSON", "LLM_OUTPUT_NOT_JSON"),
    (Reply(text='{"answer": ""}'), "SYNTHESIS_EMPTY_ANSWER", "SYNTHESIS_EMPTY_ANSWER"),
    (Reply(kind="status", status=429), "LLM_CALL_FAILED: rate_limited", "LLM_CALL_FAILED"),
    (Reply(kind="status", status=503), "LLM_CALL_FAILED: provider_error", "LLM_CALL_FAILED"),
    (Reply(delay_s=3.0), "LLM_CALL_FAILED: timeout", "LLM_CALL_FAILED"),
])
def test_compose_failure_with_empty_gather_is_unavailable(engine, local, fake, reply, code, head):
    use(engine, fake, timeout_s=0.5)
    fake.queue(reply)
    body, is_error = call(engine, "synthesize", {"question": "What is the capital of Atlantis?"}, local)
    assert is_error and body["error"] == "unavailable"
    assert validate(body, ERROR_SCHEMA) == []
    assert body["message"] == f"retrieved 0 pages; compose failed: {head}"
    assert body["detail"] == code
    assert body["suggestion"]
    assert "fake failure" not in json.dumps(body)  # raw provider text never rides the wire


def test_empty_gather_with_good_compose_is_ok(engine, local, fake):
    use(engine, fake)
    fake.queue(json_answer("Your notes do not say.", ["people/ghost"], ["Anything about Atlantis."]))
    body, is_error = call(engine, "synthesize", {"question": "What is the capital of Atlantis?"}, local)
    assert not is_error and body["synthesis_status"] == "ok"
    assert body["pages_gathered"] == 0 and body["sources"] == []


# -- visibility and the time window ----------------------------------------------------

def test_remote_caller_gathers_world_material_only(seeded, remote, local, fake):
    use(seeded, fake)
    fake.queue(json_answer("April.", ["projects/apollo", "people/secret"]))
    body, _ = call(seeded, "synthesize", {"question": QUESTION + " budget"}, remote)
    prompt = prompt_of(fake)
    assert "PRIVATE-PAGE-SENTINEL" not in prompt and "PRIVATE-FACT-SENTINEL" not in prompt
    assert body["sources"] == ["projects/apollo"]
    fake.requests.clear()
    call(seeded, "synthesize", {"question": QUESTION + " budget"}, local)
    prompt = prompt_of(fake)
    assert "PRIVATE-PAGE-SENTINEL" in prompt and "PRIVATE-FACT-SENTINEL" in prompt


def test_since_until_filter_pages_by_their_dates(seeded, local, fake):
    use(seeded, fake)
    fake.queue(json_answer("April.", ["projects/apollo", "notes/old-retro"]))
    body, _ = call(seeded, "synthesize", {"question": QUESTION, "since": "2025-01-01"}, local)
    prompt = prompt_of(fake)
    assert "projects/apollo" in prompt and "people/alice" in prompt
    assert "notes/old-retro" not in prompt
    assert body["sources"] == ["projects/apollo"]

    fake.requests.clear()
    # until a date-only value includes that whole day
    call(seeded, "synthesize", {"question": QUESTION, "since": "2024-01-01", "until": "2025-11-02"}, local)
    prompt = prompt_of(fake)
    assert "notes/old-retro" in prompt and "people/alice" in prompt
    assert "projects/apollo" not in prompt
    assert "Time window" in prompt


def test_window_with_no_pages_and_failed_compose_is_unavailable(seeded, local, fake):
    use(seeded, fake)
    fake.queue(Reply(text="nope"))
    body, is_error = call(seeded, "synthesize", {"question": QUESTION, "since": "2030-01-01"}, local)
    assert is_error and body["message"] == "retrieved 0 pages; compose failed: LLM_OUTPUT_NOT_JSON"


@pytest.mark.parametrize("args,needle", [
    ({"question": "   "}, "question"),
    ({"question": QUESTION, "since": "last tuesday-ish"}, "since"),
    ({"question": QUESTION, "until": "soon"}, "until"),
    ({"question": QUESTION, "since": "2026-02-01", "until": "2026-01-01"}, "since is after until"),
])
def test_bad_arguments_are_invalid_params(engine, local, fake, args, needle):
    use(engine, fake)
    body, is_error = call(engine, "synthesize", args, local)
    assert is_error and body["error"] == "invalid_params" and body["suggestion"]
    assert needle in body["message"]
    assert fake.requests == []
