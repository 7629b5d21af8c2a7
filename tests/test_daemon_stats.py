"""usage.jsonl lines from real calls, and `render_stats` over them."""

from __future__ import annotations

import datetime as _dt
import json

import pytest

from daemon_fixtures import configured, daemon, reaper, small_vault  # noqa: F401  (fixtures)

from brain.daemon import config as config_mod
from brain.daemon.client.calls import send
from brain.daemon.server.usage_stats import aggregate, format_tthw, percentile, render_stats, stats_document

pytestmark = pytest.mark.usefixtures("reaper")


def test_usage_lines_and_stats_from_calls_over_the_socket(daemon, places):
    vault = daemon["vault"]
    for i in range(3):
        send(places, vault, "remember", {"fact": f"fact {i}", "provenance": "stats",
                                                "entity": "people/bob"})
    send(places, vault, "remember", {"fact": "no provenance"})          # invalid_params
    send(places, vault, "recall", {"entity": "people/bob", "budget_tokens": 1})
    send(places, vault, "entity", {"name": "people/nobody-at-all"})
    send(places, vault, "whoami", {})                                   # not a verb: no line
    send(places, vault, "bogus_tool", {})                               # unknown: no line
    lines = [json.loads(line) for line in places.usage_file.read_text().splitlines()]
    assert [e["verb"] for e in lines] == ["remember"] * 4 + ["recall", "entity"]
    assert all(e["transport"] == "socket" and e["remote"] is False for e in lines)
    assert [e["ok"] for e in lines] == [True, True, True, False, True, True]
    assert isinstance(lines[0]["latency_ms"], int)
    assert lines[4]["budget_dropped"] >= 3
    assert lines[5]["entity_found"] is False

    cfg = config_mod.load(places.config_file)
    doc = json.loads(render_stats(places, 30, True, cfg))
    assert doc["total_calls"] == 6 and doc["days"] == 30
    rem = doc["by_verb"]["remember"]
    assert rem["calls"] == 4 and rem["errors"] == 1 and rem["error_rate"] == 0.25
    assert rem["p50_latency_ms"] <= rem["p99_latency_ms"]
    assert doc["by_verb"]["recall"]["budget_dropped_total"] >= 3
    assert doc["by_verb"]["entity"]["miss"] == 1 and doc["by_verb"]["entity"]["entity_hit_rate"] == 0.0
    assert doc["installed_at"] == "2026-01-01T00:00:00.000Z" and doc["tthw_install_to_first_verb"]
    assert doc["sidecar"] == str(places.usage_file) and "never uploaded" in doc["privacy"]

    text = render_stats(places, 30, False, cfg)
    first = text.splitlines()[1]
    assert first.lstrip().startswith("remember") and "4" in first and "1 errors" in first
    assert "hit 0/1" in text and "budget-dropped" in text


def test_aggregate_window_percentiles_and_hit_rate(places):
    now = _dt.datetime(2026, 6, 30, tzinfo=_dt.timezone.utc)

    def e(verb, days_ago, ms, ok=True, **kw):
        ts = (now - _dt.timedelta(days=days_ago)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
        return {"ts": ts, "verb": verb, "ok": ok, "latency_ms": ms, **kw}

    entries = [e("recall", 1, ms) for ms in range(1, 101)]
    entries += [e("entity", 2, 5, entity_found=True), e("entity", 2, 7, entity_found=True),
                e("entity", 3, 9, entity_found=False), e("entity", 40, 1, entity_found=False)]
    entries += [e("delta", 1, 3, ok=False), {"garbage": True}, e("recall", 1, 5) | {"ts": "not a time"}]
    agg = aggregate(entries, 30, now)
    assert agg["total_calls"] == 104
    r = agg["by_verb"]["recall"]
    assert (r["calls"], r["p50_latency_ms"], r["p99_latency_ms"], r["avg_latency_ms"]) == (100, 50, 99, 50)
    ent = agg["by_verb"]["entity"]
    assert (ent["found"], ent["miss"], ent["entity_hit_rate"]) == (2, 1, round(2 / 3, 4))
    assert agg["by_verb"]["delta"]["error_rate"] == 1.0
    assert percentile([7], 99) == 7
    assert [format_tthw(s) for s in (5, 90, 120, 3700, 7200, 200000)] == ["5s", "1m30s", "2m", "1h1m", "2h", "2d"]


def test_empty_stats_say_so(places):
    assert "no verb calls recorded yet" in render_stats(places, 30, False, cfg={})
    doc = stats_document(places, 7, cfg={})
    assert doc["total_calls"] == 0 and doc["tthw_install_to_first_verb"] is None
