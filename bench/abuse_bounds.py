"""Abuse of bounds and of the answers' edges, against a real daemon (and the real cursor store).

    python bench/abuse_bounds.py

Rows (docs/architecture.md "Hostile content", "Private pages", "When another
program writes the log"; docs/protocol.md §3.7, §4.8):

- bytes bombs: one string (1-6 KB, with or without `[[links]]`) aliased
  up to 19,000 times, planted by a remote put_page; held when put_page and
  get_page answer within a second and no answer passes 1 MB.
- owner saves around a put: the owner's editor saves the page private
  0-30 ms around a remote put_page; held when the owner's bytes stay.
- cursor namespace flood: a quiet caller's 10 cursors, then 12,600 new
  namespaces of 4 cursors each; held when each of the 10 is still there.
- remote paths: errors a remote caller can provoke (unknown slug, a folder
  in the way, a slug through a link, the vault moved away); held when no
  answer carries a path of the server.
- unterminated last line: a script appends a whole fact without its
  newline (plain, trailing spaces, an expiry), brain remembers after it;
  held when the fact is read and every line of the log is one record.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from abuse_privacy import _Brain  # noqa: E402  (one daemon harness for the benches)


def _bomb(string_kb: int, uses: tuple, link: bool) -> str:
    s = ("[[Acme]] " if link else "") + "x" * (string_kb * 1024)
    lines = [f'a: &a "{s}"']
    for i, n in enumerate(uses):
        lines.append(f"{'bcd'[i]}: &{'bcd'[i]} [" + ", ".join([f"*{'abc'[i]}"] * n) + "]")
    return "---\nvisibility: world\n" + "\n".join(lines) + "\n---\n# Bomb\n\nbody\n"


def bytes_bombs(scratch: Path) -> dict:
    variants = [(kb, uses, link) for kb in (1, 3, 6) for uses in ((19, 10, 99), (19, 1000), (190, 99))
                for link in (False, True)]
    held, worst_ms, biggest = 0, 0.0, 0
    with _Brain(scratch, {}) as brain:
        s = brain.session()
        for i, (kb, uses, link) in enumerate(variants):
            t0 = time.monotonic()
            body, err = s.call("put_page", {"slug": f"bombs/b{i}", "content": _bomb(kb, uses, link)})
            put_ms = (time.monotonic() - t0) * 1000
            t0 = time.monotonic()
            got = s.call_raw("get_page", {"slug": f"bombs/b{i}"})
            get_ms = (time.monotonic() - t0) * 1000
            size = len(json.dumps(got))
            worst_ms, biggest = max(worst_ms, put_ms, get_ms), max(biggest, size)
            held += put_ms < 1000 and get_ms < 1000 and size < 1 << 20
        rss = brain.rss_mb()
        s.s.close()
    return {"attempts": len(variants), "held": held, "broke": len(variants) - held,
            "slowest_ms": round(worst_ms, 1), "largest_answer_bytes": biggest, "rss_mb_after": rss,
            "note": "1-6 KB strings, with and without links, aliased up to 19,000 times"}


def owner_saves_around_put(scratch: Path, trials: int = 100) -> dict:
    rng = random.Random(39)
    overwritten = 0
    with _Brain(scratch, {"notes/plan.md": b"# Plan\n\nshared draft\n"}) as brain:
        s = brain.session()
        path = brain.vault / "notes/plan.md"
        for i in range(trials):
            path.write_text(f"# Plan\n\nshared draft {i}\n")
            time.sleep(0.05)   # let the watcher see it world again
            mine = f"---\nvisibility: private\n---\n# Plan\n\nthe owner's words {i}\n".encode()
            delay = rng.uniform(0, 0.03)

            def save():
                time.sleep(delay)
                tmp = path.with_name(".plan.md.swp")
                tmp.write_bytes(mine)
                os.replace(tmp, path)

            t = threading.Thread(target=save)
            t.start()
            s.call("put_page", {"slug": "notes/plan", "content": f"agent text {i}"})
            t.join()
            overwritten += path.read_bytes() != mine
        s.s.close()
    return {"attempts": trials, "held": trials - overwritten, "broke": overwritten,
            "note": "the owner saves the page private 0-30 ms around a remote put_page"}


def cursor_flood(scratch: Path, namespaces: int = 12_600) -> dict:
    from brain.daemon.server.cursor_store import SQLiteCursorStore
    from brain.daemon.stores.cursors import Cursor
    from brain.indexer.vault.timestamps import now_iso

    store = SQLiteCursorStore(scratch / "cursors.sqlite")
    now = now_iso()
    for i in range(10):
        store.put("socket:quiet", f"mine-{i}", Cursor(now, None, now, None))
    for n in range(namespaces):
        for j in range(4):
            store.put(f"socket:conn-{n}", f"s{j}", Cursor(now, None, now, None))
    kept = sum(store.get("socket:quiet", f"mine-{i}") is not None for i in range(10))
    total = store.count()
    store.close()
    return {"attempts": 10, "held": kept, "broke": 10 - kept, "rows": total,
            "note": f"10 cursors of a quiet caller, then {namespaces:,} namespaces x 4 cursors"}


def remote_paths(scratch: Path) -> dict:
    outside = scratch / "elsewhere"
    outside.mkdir()
    answers = []
    brain = _Brain(scratch, {"notes/a.md": b"# A\n"})
    (brain.vault / "inway.md").mkdir()
    os.symlink(outside, brain.vault / "linked")
    with brain:
        s = brain.session()
        for name, args in [("get_page", {"slug": "nothing/here"}), ("put_page", {"slug": "inway", "content": "x"}),
                           ("put_page", {"slug": "linked/x", "content": "x"}),
                           ("forget", {"id": 999999999}), ("entity", {"name": "Nobody At All"})]:
            answers.append(json.dumps(s.call_raw(name, args)))
        os.rename(brain.vault, scratch / "moved-away")
        try:
            answers.append(json.dumps(s.call_raw("recall", {"query": "anything"})))
        except (OSError, EOFError) as e:
            answers.append(str(e))
        os.rename(scratch / "moved-away", brain.vault)
    leaked = [a for a in answers if str(scratch) in a or "/tmp/" in a]
    return {"attempts": len(answers), "held": len(answers) - len(leaked), "broke": len(leaked),
            "note": "errors a remote caller provokes, the last with the vault moved away"}


def unterminated_line(scratch: Path) -> dict:
    tails = {"plain": "", "trailing spaces": "   ", "trailing tab": "\t"}
    held = 0
    with _Brain(scratch, {}) as brain:
        s = brain.session()
        local = brain.session("local")
        s.call("remember", {"fact": "the first fact", "provenance": "abuse"})
        log = next((brain.vault / ".brain" / "facts").glob("*.jsonl"))
        for i, (name, tail) in enumerate(tails.items()):
            fid = 7_000_000 + i
            rec = {"op": "insert", "id": fid, "ts": "2026-12-07T10:00:00.000Z", "fact": f"scripted fact {name}",
                   "kind": "fact", "entity_slug": None, "visibility": "world", "source": "script"}
            with open(log, "ab") as f:
                f.write(json.dumps(rec).encode() + tail.encode())
            time.sleep(1.2)   # a read takes in what other programs appended at most once a second
            seen, _ = local.call("recall", {"query": f"scripted fact {name}"})
            s.call("remember", {"fact": f"brain after {name}", "provenance": "abuse"})
            lines = log.read_bytes().split(b"\n")
            whole = lines[-1] == b"" and all(json.loads(x).get("op") for x in lines[:-1] if x.strip())
            held += whole and any(f.get("id") == fid for f in seen.get("facts", []))
        s.s.close()
        local.s.close()
    return {"attempts": len(tails), "held": held, "broke": len(tails) - held,
            "note": "a script appends a whole fact without its newline; brain remembers after it"}


ATTACKS: list[tuple[str, Callable[[Path], dict]]] = [
    ("bytes bombs", bytes_bombs),
    ("owner saves around a put", owner_saves_around_put),
    ("cursor namespace flood", cursor_flood),
    ("remote paths", remote_paths),
    ("unterminated last line", unterminated_line),
]


if __name__ == "__main__":
    from abuse_attacks import run_attacks

    run_attacks(attacks=ATTACKS)
