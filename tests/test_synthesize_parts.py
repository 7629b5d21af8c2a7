"""synthesize's pieces: answer parsing, source filtering, pricing, provider set-up, doctor, CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from llm_fakes import FakeLLM, Reply, json_answer

from brain.daemon.llm.pricing import estimate_usd, price_of
from brain.daemon.llm.providers import LOCAL_PLACEHOLDER_KEY, AnthropicProvider, OpenAICompatibleProvider, is_local_url, provider_from_config
from brain.daemon.verbs.synthesis import Gathered, GatheredPage, cited_sources, extractive_digest, parse_answer


# -- parsing the model's reply ------------------------------------------------------

@pytest.mark.parametrize("text,code", [
    ('{"answer": "yes", "sources": ["a"], "gaps": []}', None),
    ('  \n{"answer": "yes"}\n', None),
    ('```json\n{"answer": "yes", "sources": []}\n```', None),
    ('```\n{"answer": "yes"}\n```', None),
    ('Here you go: {"answer": "yes"}', "LLM_OUTPUT_NOT_JSON"),
    ('```json\n{"answer": "yes"}\n```\nHope that helps!', "LLM_OUTPUT_NOT_JSON"),
    ('["answer", "yes"]', "LLM_OUTPUT_NOT_JSON"),
    ('{"answer": 42}', "LLM_OUTPUT_NOT_JSON"),
    ('{"response": "yes"}', "LLM_OUTPUT_NOT_JSON"),
    ('{"answer": "yes", "sources": "a"}', "LLM_OUTPUT_NOT_JSON"),
    ('{"answer": " \\n "}', "SYNTHESIS_EMPTY_ANSWER"),
    ("", "LLM_OUTPUT_NOT_JSON"),
])
def test_parse_answer(text, code):
    parsed, got = parse_answer(text)
    assert got == code
    if code is None:
        assert parsed["answer"] == "yes"
        assert isinstance(parsed["sources"], list) and isinstance(parsed["gaps"], list)
    else:
        assert parsed is None


def _gathered(*slugs) -> Gathered:
    return Gathered(pages=[GatheredPage(s, s.title(), f"text of {s}. More text.", f"text of {s}.", None)
                           for s in slugs])


def test_cited_sources_keep_only_gathered_slugs_in_order():
    g = _gathered("people/alice", "projects/apollo")
    claimed = ["projects/apollo", "people/bob", "[[people/alice]]", "People/Alice.md", "projects/apollo", 7]
    assert cited_sources([c for c in claimed if isinstance(c, str)], g) == ["projects/apollo", "people/alice"]
    assert cited_sources([], g) == []


def test_extractive_digest_quotes_only_gathered_pages():
    g = _gathered("people/alice", "projects/apollo")
    answer, sources = extractive_digest("what about apollo", g)
    assert sources == ["people/alice", "projects/apollo"]
    assert '"text of projects/apollo."' in answer and "[[people/alice]]" in answer


# -- pricing ---------------------------------------------------------------------------

def test_price_table_matches_snapshots_and_router_prefixes():
    assert price_of("claude-sonnet-4-5") == (3.0, 15.0)
    assert price_of("claude-sonnet-4-5-20250929") == (3.0, 15.0)
    assert price_of("anthropic/claude-haiku-4-5") == (1.0, 5.0)
    assert price_of("gpt-4o-mini-2024-07-18") == (0.15, 0.6)
    assert price_of("gpt-4o") == (2.5, 10.0)
    assert price_of("gpt-4o-audio-preview") is None
    assert price_of("llama3.1") is None and price_of(None) is None


def test_usd_estimate_rule():
    assert estimate_usd("gpt-4.1", 1_000_000, 1_000_000, local=False) == pytest.approx(10.0)
    assert estimate_usd("gpt-4.1", None, 10, local=False) is None
    assert estimate_usd("llama3.1", 500, 50, local=True) == 0.0
    assert estimate_usd("llama3.1", 500, 50, local=False) is None
    # a localhost proxy serving a priced model still costs money
    assert estimate_usd("claude-haiku-4-5", 1000, 0, local=True) == pytest.approx(0.001)


# -- provider set-up ----------------------------------------------------------------

def test_local_urls():
    assert is_local_url("http://localhost:11434/v1") and is_local_url("http://127.0.0.1:1234/v1")
    assert is_local_url("http://192.168.1.20:8000/v1") and is_local_url("http://[::1]:8000/v1")
    assert not is_local_url("https://api.openai.com/v1") and not is_local_url(None)


def test_provider_from_config_builds_each_kind():
    p = provider_from_config({"llm.provider": "anthropic", "llm.timeout_s": 12}, {"ANTHROPIC_API_KEY": "k"})
    assert isinstance(p, AnthropicProvider) and p.base_url == "https://api.anthropic.com"
    assert p.timeout_s == 12.0 and p.model and not p.local
    assert "k" not in repr(p)
    o = provider_from_config({"llm.provider": "openai"}, {"OPENAI_API_KEY": "k2"})
    assert isinstance(o, OpenAICompatibleProvider) and o.base_url == "https://api.openai.com/v1"
    local = provider_from_config({"llm.provider": "OpenAI", "llm.base_url": "http://localhost:11434/v1",
                                  "llm.model": "llama3.1"}, {})
    assert isinstance(local, OpenAICompatibleProvider) and local.local and local._api_key == LOCAL_PLACEHOLDER_KEY
    env_url = provider_from_config({"llm.provider": "anthropic"},
                                   {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert env_url.base_url == "http://127.0.0.1:9"
    bad = provider_from_config({"llm.provider": "gemini"}, {})
    assert not bad.configured and bad.code == "NO_LLM_PROVIDER" and "gemini" in bad.detail


def test_model_listing_against_both_dialects():
    with FakeLLM() as fake:
        a = provider_from_config({"llm.provider": "anthropic", "llm.base_url": fake.anthropic_url},
                                 {"ANTHROPIC_API_KEY": "k"}, max_retries=0)
        o = provider_from_config({"llm.provider": "openai", "llm.base_url": fake.openai_url, "llm.model": "llama3.1"},
                                 {}, max_retries=0)
        assert "llama3.1" in a.list_models() and "llama3.1" in o.list_models()
        assert [r["path"].split("?")[0] for r in fake.requests] == ["/v1/models", "/v1/models"]


# -- doctor ---------------------------------------------------------------------------

def _doctor_rows(places, cfg):
    from brain.cli.doctor import DoctorContext
    from brain.cli.synth_cmd import llm_check

    return list(llm_check(DoctorContext(places, cfg, None)))


def test_doctor_reports_live_provider(places, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with FakeLLM() as fake:
        rows = _doctor_rows(places, {"llm.provider": "anthropic", "llm.base_url": fake.anthropic_url,
                                     "llm.model": "claude-sonnet-4-5"})
        assert rows[0][0] == "ok" and "anthropic · claude-sonnet-4-5" in rows[0][2]
        assert rows[1][0] == "ok" and "is served" in rows[1][2]
        rows = _doctor_rows(places, {"llm.provider": "anthropic", "llm.base_url": fake.anthropic_url,
                                     "llm.model": "claude-nonexistent"})
        assert rows[1][0] == "warn" and "llm.model" in rows[1][2]
    # the server is gone now
    rows = _doctor_rows(places, {"llm.provider": "anthropic", "llm.base_url": fake.anthropic_url})
    assert rows[1][0] == "fail" and "network" in rows[1][2]


def test_doctor_reports_missing_provider(places, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    rows = _doctor_rows(places, {"llm.provider": "anthropic"})
    assert rows == [rows[0]] and rows[0][0] == "warn" and "NO_ANTHROPIC_API_KEY" in rows[0][2]


# -- the command --------------------------------------------------------------------

def _brain(args, env_extra=None, timeout=60):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "brain.cli.entry", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


def _configure(places, vault, **llm):
    from brain.daemon import config as config_mod

    cfg = {"vault": str(vault), **{f"llm.{k}": v for k, v in llm.items()}}
    config_mod.save(places.config_file, cfg)


def test_cli_without_provider_prints_the_fix(places, vault):
    _configure(places, vault)
    r = _brain(["synthesize", "what happened?", "--no-daemon"])
    assert r.returncode == 1
    assert "unavailable" in r.stderr and "brain config set llm.provider anthropic" in r.stderr


def test_cli_shows_answer_sources_and_cost(places, vault):
    with FakeLLM() as fake:
        fake.queue(json_answer("Nothing in the notes covers it.", [], ["No page mentions Atlantis."],
                               input_tokens=1234, output_tokens=56))
        _configure(places, vault, provider="openai", base_url=fake.openai_url, model="llama3.1", timeout_s=10)
        r = _brain(["synthesize", "What is the capital of Atlantis?", "--no-daemon"])
        assert r.returncode == 0, r.stderr
        assert "Nothing in the notes covers it." in r.stdout
        assert "No page mentions Atlantis." in r.stdout
        assert "cost: llama3.1 · 1,234 in / 56 out tokens · ~$0.0000" in r.stdout
        r = _brain(["synthesize", "What is the capital of Atlantis?", "--since", "2026-01-01", "--no-daemon",
                    "--json"])
        body = json.loads(r.stdout)
        assert body["synthesis_status"] == "ok" and body["cost"]["input_tokens"] == 1234
        assert len(fake.calls("/chat/completions")) == 2


def test_a_long_page_leads_with_the_whole_chunk_around_the_matched_passage():
    from brain.daemon.stores.pages import Chunk
    from brain.daemon.verbs.gather import _page_text

    filler = "Unrelated words about the weather and lunch. " * 40
    best = "The migration starts in May. Tom leads it, and the cut-over runbook is his. Rollback is manual."
    chunks = [Chunk(h, t) for h, t in [("Intro", filler), ("Plan", best), ("Later", filler)]]
    text = _page_text(chunks, "Tom leads it, and the cut-over runbook is his.", cap_tokens=100)
    # the passage's neighbours come with it, before anything else on the page
    assert text.startswith("## Plan\n" + best)
