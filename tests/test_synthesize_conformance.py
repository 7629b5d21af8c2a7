"""The conformance runner's synthesize case over real stdio MCP, with and without an LLM."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from llm_fakes import FakeLLM, Reply, json_answer

from brain.daemon.conformance import runner as cf
from brain.daemon import config as config_mod


def _certify_synthesize(places, vault, llm_cfg: dict) -> dict:
    config_mod.save(places.config_file, {"vault": str(vault), **llm_cfg})
    env = dict(os.environ)
    env.update(BRAIN_VAULT=str(vault), HF_HUB_OFFLINE="1")
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)
    argv = [sys.executable, "-m", "brain.cli.entry", "serve", "--surface", "full", "--no-daemon"]
    cases = [c for c in cf.load_cases() if c.get("verb") == "synthesize"]
    assert cases and all(c.get("requiresSynthesizeFlag") for c in cases)
    report = asyncio.run(cf.certify(lambda: cf.connect_stdio(argv, env=env), synthesize=True, cases=cases))
    synth_rows = [r for r in report["results"] if r["name"] in {c["name"] for c in cases}]
    assert synth_rows and all(r["status"] == "pass" for r in synth_rows), report
    return report


def test_conformance_synthesize_without_a_provider(places, vault):
    report = _certify_synthesize(places, vault, {})
    assert report["ok"], report


@pytest.mark.parametrize("reply", [
    json_answer("Nothing in the notes says what they prefer.", [], ["No page about them."]),
    Reply(kind="status", status=500),  # empty gather + failed compose: a clean `unavailable`
], ids=["answer", "server-error"])
def test_conformance_synthesize_with_a_provider(places, vault, reply):
    with FakeLLM() as fake:
        fake.queue(reply)
        report = _certify_synthesize(places, vault, {
            "llm.provider": "openai", "llm.base_url": fake.openai_url, "llm.model": "llama3.1", "llm.timeout_s": 10})
        assert report["ok"], report
        assert len(fake.calls("/chat/completions")) >= 1
