"""The targeted attacks of the abuse run: other writers, bad marks, floods.

Each `bench/abuse_<area>.py` module that defines `ATTACKS` (a list of
`(name, run)` pairs, `run(scratch_folder) -> {"attempts", "held", "broke",
"note", ...}`) takes part. Every attack starts and stops its own daemons or
servers inside its scratch folder (loopback only, bounded in count and time),
so one attack's damage never skews another's figures.

    python bench/abuse_attacks.py [--only NAME ...]

prints one JSON line per attack, then a Markdown table (attempts / held /
broke and the attack's own figures). bench_abuse.py runs the same table as
its last phase.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
# the areas, in the order the table lists them
AREAS = ("abuse_facts", "abuse_privacy", "abuse_bounds", "abuse_calls", "abuse_oauth")
# the columns every row has; anything else an attack returns is a figure of its own
_BASE = ("attempts", "held", "broke")


def all_attacks() -> list[tuple[str, object]]:
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    found = []
    for area in AREAS:
        if not (HERE / f"{area}.py").exists():
            continue
        module = importlib.import_module(area)
        found.extend(getattr(module, "ATTACKS", []))
    return found


def run_attacks(only: list[str] | None = None, attacks=None) -> list[dict]:
    """Run `attacks` (default: every area's), each in a scratch folder of its own; one JSON line each."""
    rows = []
    for name, run in (all_attacks() if attacks is None else attacks):
        if only and name not in only:
            continue
        scratch = Path(tempfile.mkdtemp(prefix="bat-", dir="/tmp"))
        t0 = time.monotonic()
        try:
            row = dict(run(scratch))
        except Exception as e:  # an attack that cannot run is reported, never counted as held
            row = {"attempts": 0, "held": 0, "broke": 0, "note": f"could not run: {e!r}"[:300]}
            traceback.print_exc(file=sys.stderr)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        row = {"attack": name, **row, "seconds": round(time.monotonic() - t0, 1)}
        print(json.dumps({"bench": "abuse_attack", **row}), flush=True)
        rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| attack | attempts | held | broke | figures |", "|---|---|---|---|---|"]
    for r in rows:
        extra = ", ".join(f"{k} {v}" for k, v in r.items() if k not in ("attack", "note", *_BASE))
        lines.append(f"| {r['attack']} | {r.get('attempts', 0)} | {r.get('held', 0)} | {r.get('broke', 0)} | {extra} |")
    return "\n".join(lines)


def summary(rows: list[dict]) -> dict:
    return {
        "bench": "abuse_attacks_summary",
        "attacks": len(rows),
        "attacks_not_held": [r["attack"] for r in rows if r.get("broke") or not r.get("attempts")],
        "acked_lost": sum(int(r.get("acked_lost", 0) or 0) for r in rows),
        "private_bytes_served": sum(int(r.get("private_bytes_served", 0) or 0) for r in rows),
        "loadavg": open("/proc/loadavg").read().split()[:3],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="attack names to run (default: all)")
    ns = ap.parse_args()
    rows = run_attacks(ns.only)
    print(json.dumps(summary(rows)), flush=True)
    print(table(rows))
    return 0 if rows and not summary(rows)["attacks_not_held"] else 1


if __name__ == "__main__":
    sys.exit(main())
