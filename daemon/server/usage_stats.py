"""`brain protocol stats`: per-verb numbers from the local usage.jsonl.

Reads the sidecar the dispatch layer appends to (one line per verb call,
docs/protocol.md §6.2) and aggregates a window of days: calls, errors and
error rate, average / p50 / p99 latency, budget drops, and for `entity` the
hit rate. Time-to-hello-world (TTHW) is the first verb call ever minus the
config's `protocol_installed_at`.
"""

from __future__ import annotations

import datetime as _dt
import json
import math

from ...indexer.vault.timestamps import iso
from ..protocol.timeparse import parse_iso
from ..protocol.tools import VERB_NAMES as VERBS
from .usage import UsageLog

PRIVACY = "local JSONL only — never uploaded"


def _parse_ts(value) -> _dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_iso(value)
    except ValueError:
        return None


def percentile(values: list[int], q: float) -> int:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def format_tthw(seconds: float) -> str:
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        m, r = divmod(s, 60)
        return f"{m}m{r}s" if r else f"{m}m"
    if s < 48 * 3600:
        h, r = divmod(s, 3600)
        m = r // 60
        return f"{h}h{m}m" if m else f"{h}h"
    return f"{s // 86400}d"


def aggregate(entries: list[dict], days: int, now: _dt.datetime | None = None) -> dict:
    """The per-verb aggregate of usage lines inside the window."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    start = now - _dt.timedelta(days=days)
    by_verb: dict[str, dict] = {}
    latencies: dict[str, list[int]] = {}
    total = 0
    for e in entries:
        verb = e.get("verb")
        ts = _parse_ts(e.get("ts"))
        if not isinstance(verb, str) or ts is None or ts < start:
            continue
        total += 1
        row = by_verb.setdefault(verb, {"calls": 0, "errors": 0, "budget_dropped_total": 0, "budget_drop_calls": 0})
        row["calls"] += 1
        if e.get("ok") is False:
            row["errors"] += 1
        lat = e.get("latency_ms")
        if isinstance(lat, (int, float)) and not isinstance(lat, bool):
            latencies.setdefault(verb, []).append(int(lat))
        dropped = e.get("budget_dropped")
        if isinstance(dropped, int) and not isinstance(dropped, bool) and dropped > 0:
            row["budget_dropped_total"] += dropped
            row["budget_drop_calls"] += 1
        if verb == "entity" and isinstance(e.get("entity_found"), bool):
            key = "found" if e["entity_found"] else "miss"
            row[key] = row.get(key, 0) + 1
    for verb, row in by_verb.items():
        lats = latencies.get(verb) or []
        row["error_rate"] = round(row["errors"] / row["calls"], 4)
        row["avg_latency_ms"] = round(sum(lats) / len(lats)) if lats else 0
        row["p50_latency_ms"] = percentile(lats, 50) if lats else 0
        row["p99_latency_ms"] = percentile(lats, 99) if lats else 0
        if verb == "entity":
            found, miss = row.setdefault("found", 0), row.setdefault("miss", 0)
            row["entity_hit_rate"] = round(found / (found + miss), 4) if found + miss else None
    return {"total_calls": total, "by_verb": by_verb}


def stats_document(places, days: int, cfg: dict, now: _dt.datetime | None = None) -> dict:
    """The JSON document of `brain protocol stats --json`."""
    usage = UsageLog(places.usage_file)
    entries = usage.read()
    doc: dict[str, object] = {"days": days}
    doc.update(aggregate(entries, days, now))
    installed = cfg.get("protocol_installed_at")
    first = min((t for t in (_parse_ts(e.get("ts")) for e in entries if e.get("verb") in VERBS) if t), default=None)
    installed_ts = _parse_ts(installed)
    tthw = None
    if first is not None and installed_ts is not None and first >= installed_ts:
        tthw = format_tthw((first - installed_ts).total_seconds())
    doc.update({
        "tthw_install_to_first_verb": tthw,
        "installed_at": installed if isinstance(installed, str) else None,
        "first_verb_call": iso(first),
        "sidecar": str(places.usage_file),
        "privacy": PRIVACY,
    })
    return doc


def render_stats(places, days: int, as_json: bool, cfg: dict) -> str:
    """`brain protocol stats [--days N] [--json]` output, as one string."""
    doc = stats_document(places, days, cfg)
    if as_json:
        return json.dumps(doc, indent=2)
    lines = [f"MEMORY_VERBS usage, last {days} day(s):"]
    if not doc["total_calls"]:
        lines.append("  no verb calls recorded yet")
    for verb, row in sorted(doc["by_verb"].items(), key=lambda kv: (-kv[1]["calls"], kv[0])):
        extras = []
        if row["errors"]:
            extras.append(f"{row['errors']} errors ({row['error_rate']:.1%})")
        if row["budget_dropped_total"]:
            extras.append(f"{row['budget_dropped_total']} budget-dropped in {row['budget_drop_calls']} calls")
        if verb == "entity" and (row.get("found", 0) + row.get("miss", 0)):
            extras.append(f"hit {row['found']}/{row['found'] + row['miss']}")
        tail = f"  ({', '.join(extras)})" if extras else ""
        lines.append(f"  {verb:<11} {row['calls']:<5} calls  avg {row['avg_latency_ms']}ms  "
                     f"p50 {row['p50_latency_ms']}ms  p99 {row['p99_latency_ms']}ms{tail}")
    if doc["tthw_install_to_first_verb"]:
        lines.append(f"time from install to first verb call: {doc['tthw_install_to_first_verb']}")
    lines.append(f"sidecar: {doc['sidecar']} ({PRIVACY})")
    return "\n".join(lines)
