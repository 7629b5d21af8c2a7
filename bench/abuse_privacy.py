"""Abuse of page privacy and hostile page content, against a real daemon.

    python bench/abuse_privacy.py

Each attack gets an empty scratch folder, builds a vault (a copy of
sample_brain/ plus its own pages), starts a daemon there with its own
BRAIN_HOME, attacks it over the daemon's Unix socket as a remote caller, and
stops the daemon. Rows:

- bad private marks: pages whose private mark does not parse cleanly
  (a YAML error elsewhere, `[private]`, `Visibility: Private`, a doubled key,
  an unclosed block, an alias bomb, a typo), probed with every read tool;
  `private_bytes_served` counts the bytes of answers carrying a marker.
- private mark variants: every prefix x block shape x key spelling x line
  ending of a private mark (bench/privacy_variants.py), each page probed by
  name and content; a variant broke when any answer names its slug or word.
- remote put onto unindexed private page: a private page over the size
  limit, a binary one, and pages the owner writes just before the put;
  every file must keep its bytes.
- alias bomb: "billion laughs" frontmatter and other hostile pages planted
  with a remote put_page while a reader calls recall; recall p99, the
  largest get_page answer and the daemon's RSS are reported.
- .brain linked outside the vault: every command that would write there
  must refuse and leave the other folder empty.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_daemon import SocketClient  # noqa: E402  (one raw socket client for the benches)

BRAIN = str(Path(sys.executable).parent / "brain")
MARKER = "PRIVMARK-7f3a"
# the daemon's resident memory may not pass this (docs/architecture.md "Hostile content")
RSS_CEILING_MB = 1024
BOMB = ("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)))


class _Brain:
    """A daemon on a vault under `scratch`, started and stopped with its own environment."""

    def __init__(self, scratch: Path, pages: dict[str, bytes]):
        from brain.daemon import config as config_mod
        from brain.daemon.places import Places

        self.home = scratch / "home"
        self.vault = scratch / "vault"
        shutil.copytree(REPO / "sample_brain", self.vault, ignore=shutil.ignore_patterns(".brain"))
        for rel, raw in pages.items():
            (self.vault / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.vault / rel).write_bytes(raw)
        self.places = Places.from_env({"BRAIN_HOME": str(self.home)})
        config_mod.save(self.places.config_file, {"vault": str(self.vault), "embeddings.enabled": False})
        self.env = {**os.environ, "BRAIN_HOME": str(self.home), "BRAIN_VAULT": str(self.vault),
                    "HF_HUB_OFFLINE": "1"}

    def __enter__(self) -> "_Brain":
        r = subprocess.run([BRAIN, "daemon", "start"], env=self.env, capture_output=True, text=True, timeout=90)
        if r.returncode != 0:
            raise RuntimeError(f"the daemon did not start: {r.stderr.strip()}")
        self.socket = str(self.places.socket_path(self.vault))
        return self

    def __exit__(self, *exc) -> None:
        subprocess.run([BRAIN, "daemon", "stop"], env=self.env, capture_output=True, timeout=60)

    def session(self, lane: str = "remote") -> SocketClient:
        return SocketClient(self.socket, lane=lane, client="abuse-privacy", timeout=60)

    def rss_mb(self) -> float | None:
        from brain.daemon.rendezvous import read_pid_file

        pid = (read_pid_file(self.places, self.vault) or {}).get("pid")
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
        except (OSError, ValueError):
            pass
        return None


def _answer_text(msg: dict) -> str:
    res = msg.get("result") or {}
    return "".join(c.get("text", "") for c in res.get("content", [])) or json.dumps(msg)


# -- bad private marks -------------------------------------------------------

MARKS = {
    "ledger/yaml-error.md": "---\ntitle: Ledger One\nvisibility: private\nowner: [unclosed\n---\n",
    "ledger/list-mark.md": "---\ntitle: Ledger Two\nvisibility: [private]\n---\n",
    "ledger/cased-mark.md": "---\ntitle: Ledger Three\nVisibility: Private\n---\n",
    "ledger/doubled-mark.md": "---\ntitle: Ledger Four\nvisibility: private\nvisibility: world\n---\n",
    "ledger/unclosed.md": "---\ntitle: Ledger Five\nvisibility: private\n\n",
    "ledger/alias-bomb.md": "---\ntitle: Ledger Six\nvisibility: private\n" + BOMB + "---\n",
    "ledger/typo-mark.md": "---\ntitle: Ledger Seven\nvisibility: privte\n---\n",
    "ledger/no-key-broken.md": "---\ntitle: Ledger Eight\nowner: {unclosed\n---\n",
}


def bad_private_marks(scratch: Path, rounds: int = 5) -> dict:
    pages = {rel: (head + f"# Ledger\n\nThe ledger code is {MARKER}-{i}, see [[Alice Example]].\n").encode()
             for i, (rel, head) in enumerate(MARKS.items())}
    slugs = [rel[:-3] for rel in MARKS]
    titles = [head.split("title: ", 1)[1].split("\n", 1)[0] for head in MARKS.values()]
    attempts = held = served = 0
    with _Brain(scratch, pages) as brain:
        s = brain.session()
        probes: list[tuple[str, dict]] = [("recall", {"query": "ledger code"}), ("recall", {"grep": "ledger"}),
                                          ("recall", {"query": MARKER}), ("search", {"query": "ledger code"}),
                                          ("list_pages", {"limit": 200}), ("list_pages", {"prefix": "ledger/"}),
                                          ("get_backlinks", {"slug": "people/alice-example"}),
                                          ("context_pack", {"entities": ", ".join(titles[:5])}), ("delta", {})]
        probes += [("get_page", {"slug": slug}) for slug in slugs]
        probes += [("entity", {"name": name}) for name in titles + slugs]
        probes += [("get_backlinks", {"slug": slug}) for slug in slugs]
        for _ in range(rounds):
            for name, args in probes:
                text = _answer_text(s.call_raw(name, args))
                for value in args.values():   # an echo of what was asked is not a leak
                    for piece in [str(value), *str(value).split(", ")]:
                        text = text.replace(json.dumps(piece)[1:-1], "")
                leaked = MARKER in text or "ledger/" in text
                attempts += 1
                held += not leaked
                served += len(text.encode()) if leaked else 0
        s.s.close()
        local = brain.session("local")
        owner_sees, _ = local.call("list_pages", {"prefix": "ledger/"})
        local.s.close()
    return {"attempts": attempts, "held": held, "broke": attempts - held, "private_bytes_served": served,
            "note": f"{len(MARKS)} badly marked pages x {len(probes)} remote probes x {rounds} rounds; "
                    f"the owner's lane lists {owner_sees['count']} of them"}


# -- private mark variants -----------------------------------------------------

def private_mark_variants(scratch: Path) -> dict:
    """Every generated form of a private mark (bench/privacy_variants.py), each probed by name and by content."""
    import re

    from privacy_variants import SECRET, private_variants

    variants = private_variants()
    pages = {rel: text.encode() for rel, text in variants.items()}
    slugs = [rel[:-3] for rel in variants]
    leaked_words: set[str] = set()
    leaked_slugs: set[str] = set()
    served = 0
    with _Brain(scratch, pages) as brain:
        s = brain.session()

        def probe(name: str, args: dict, echo: bool = False) -> None:
            nonlocal served
            text = _answer_text(s.call_raw(name, args))
            for value in args.values() if echo else ():   # the slugs asked for come back
                for piece in [str(value), *str(value).split(", ")]:
                    text = text.replace(json.dumps(piece)[1:-1], "")
            words = set(re.findall(SECRET + r"-\d+", text))
            named = {slug for slug in re.findall(r"(?:plans|held)/[\w-]+", text)}
            if words or named:
                served += len(text.encode())
            leaked_words.update(words)
            leaked_slugs.update(named)

        for query in ("quokka plan code word", "swordfish"):
            probe("recall", {"query": query, "limit": 50})
            probe("search", {"query": query, "limit": 50})
        probe("recall", {"grep": "code word"})
        probe("get_backlinks", {"slug": "notes/quokka-hub"})
        for i in range(0, len(slugs), 40):
            probe("context_pack", {"entities": ", ".join(slugs[i:i + 40])}, echo=True)
        for n, slug in enumerate(slugs):
            probe("get_page", {"slug": slug}, echo=True)
            probe("entity", {"name": f"Quokka Plan {n}"})
        s.s.close()
    broke = {slug for n, slug in enumerate(slugs) if f"{SECRET}-{n}" in leaked_words or slug in leaked_slugs}
    return {"attempts": len(slugs), "held": len(slugs) - len(broke), "broke": len(broke),
            "private_bytes_served": served, "broken": sorted(broke)[:10],
            "note": "each variant page probed by get_page, entity, recall, search, context_pack, backlinks"}


# -- remote put onto an unindexed private page --------------------------------

def remote_put_unindexed(scratch: Path, fresh: int = 10) -> dict:
    from brain.indexer.vault.scan import MAX_PAGE_BYTES

    big = ("---\nvisibility: private\n---\n" + "owner's words " * (MAX_PAGE_BYTES // 14 + 100)).encode()
    binary = b"---\nvisibility: private\n---\nowner's words \x00\x01 in a binary file\n"
    pages = {"vault/too-large.md": big, "vault/binary.md": binary}
    attempts = held = 0
    created_true = 0
    with _Brain(scratch, pages) as brain:
        s = brain.session()
        targets = dict(pages)
        for i in range(fresh):
            rel = f"vault/fresh-{i}.md"
            raw = f"---\nvisibility: {'private' if i % 2 else 'Private'}\n---\nJust written {i}.\n".encode()
            (brain.vault / rel).write_bytes(raw)   # the owner writes; the agent puts at once
            targets[rel] = raw
            body, _ = s.call("put_page", {"slug": rel[:-3], "content": "agent text"})
            created_true += body.get("created") is True
        for rel in pages:
            body, _ = s.call("put_page", {"slug": rel[:-3], "content": "agent text"})
            created_true += body.get("created") is True
        for rel, raw in targets.items():
            attempts += 1
            held += (brain.vault / rel).read_bytes() == raw
        s.s.close()
    return {"attempts": attempts, "held": held, "broke": attempts - held,
            "answered_as_absent": created_true,
            "note": f"a {len(big) / 1048576:.1f} MB private page, a binary one, and {fresh} private pages "
                    "put onto right after the owner wrote them; file bytes compared after"}


# -- alias bomb and other hostile pages --------------------------------------

def _hostile_pages() -> dict[str, str]:
    from brain.indexer.vault.scan import MAX_PAGE_BYTES

    room = MAX_PAGE_BYTES - 4096

    def fill(line: str) -> str:   # as many copies of a numbered line as a page may hold
        out, size, i = [], 0, 0
        while size + len(line) + 8 < room:
            out.append(line.format(i))
            size += len(out[-1])
            i += 1
        return "".join(out)

    return {
        "hostile/alias-bomb": "---\ntitle: Bomb\n" + BOMB + "---\n# Bomb\n\nA small page.\n",
        "hostile/self-alias": "---\na: &a [*a, *a]\n---\nSelf.\n",
        "hostile/deep-yaml": "---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\nDeep.\n",
        "hostile/wide-yaml": "---\n" + fill("k{}: v\n") + "---\nWide.\n",
        # a full 4 MB of either takes 15-20 s to index here: the bench stays near 30 s
        "hostile/many-dates": fill("- 2026-01-01: x{}\n")[: room // 2],
        "hostile/many-links": fill("[[p{}]] ")[: room // 8],
    }


def alias_bomb(scratch: Path) -> dict:
    stop = threading.Event()
    times: list[float] = []
    errors: list[str] = []
    with _Brain(scratch, {}) as brain:
        rss_before = brain.rss_mb()

        def reader() -> None:
            r = brain.session()
            while not stop.is_set():
                t0 = time.monotonic()
                try:
                    r.call("recall", {"query": "alice"})
                except (OSError, EOFError, ValueError) as e:
                    errors.append(str(e))
                    return
                times.append((time.monotonic() - t0) * 1000)
                time.sleep(0.02)
            r.s.close()

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        s = brain.session()
        local = brain.session("local")
        answers = {}
        rss_peak = rss_before or 0.0
        put_ms = {}
        for slug, content in _hostile_pages().items():
            t0 = time.monotonic()
            body, err = s.call("put_page", {"slug": slug, "content": content})
            put_ms[slug] = round((time.monotonic() - t0) * 1000) if not err else body.get("message")
            for who in (s, local):
                msg = who.call_raw("get_page", {"slug": slug})
                answers[slug] = max(answers.get(slug, 0), len(json.dumps(msg)))
            rss_peak = max(rss_peak, brain.rss_mb() or 0.0)
        time.sleep(1.0)
        stop.set()
        t.join(30)
        rss_after = brain.rss_mb()
        s.s.close()
        local.s.close()
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] if times else None
    biggest = max(answers.values())
    checks = {"recall_p99_under_1s": p99 is not None and p99 < 1000 and not errors,
              "get_page_under_8mb": biggest < 8 * 1024 * 1024,
              "rss_under_ceiling": max(rss_peak, rss_after or 0) < RSS_CEILING_MB}
    return {"attempts": len(checks), "held": sum(checks.values()), "broke": len(checks) - sum(checks.values()),
            "recall_calls": len(times), "recall_p99_ms": round(p99, 1) if p99 else None,
            "recall_max_ms": round(times[-1], 1) if times else None,
            "largest_get_page_bytes": biggest, "rss_mb_before": rss_before, "rss_mb_peak": rss_peak,
            "rss_mb_after": rss_after, "put_ms": put_ms,
            "note": "held: " + ", ".join(k for k, v in checks.items() if v)
                    + "; broke: " + (", ".join(k for k, v in checks.items() if not v) or "none")}


# -- .brain as a symlink to outside the vault ---------------------------------

def brain_folder_link(scratch: Path) -> dict:
    outside = scratch / "elsewhere"
    outside.mkdir()
    brain = _Brain(scratch, {})
    os.symlink(outside, brain.vault / ".brain")
    tries = [["daemon", "start"], ["remember", "door code 4321", "--provenance", "abuse"],
             ["remember", "door code 4321", "--provenance", "abuse", "--no-daemon"], ["init", str(brain.vault)]]
    refused = 0
    for args in tries:
        r = subprocess.run([BRAIN, *args], env=brain.env, capture_output=True, text=True, timeout=90)
        refused += r.returncode != 0 and "symlink" in r.stderr
    subprocess.run([BRAIN, "daemon", "stop"], env=brain.env, capture_output=True, timeout=60)
    written = sorted(p.name for p in outside.rglob("*"))
    held = refused if not written else 0
    return {"attempts": len(tries), "held": held, "broke": len(tries) - held, "files_written_outside": len(written),
            "note": ".brain linked to a folder outside the vault; daemon start, remember (daemon and "
                    "--no-daemon) and init must refuse, naming the link, and write nothing there"}


# -- a link one level down: .brain/facts, the device log, the journal ---------

def _link_spots(brain: "_Brain") -> dict[str, Path]:
    logs = sorted((brain.vault / ".brain" / "facts").glob("*.jsonl"))
    state = brain.places.vault_state_dir(brain.vault)
    return {"facts folder": brain.vault / ".brain" / "facts", "device log": logs[0],
            "journal": state / "device.acked.jsonl"}


def _untouched(path: Path):
    st = os.stat(path)
    if os.path.isdir(path):
        return st.st_mode, sorted((p.name, p.read_bytes(), p.stat().st_mode) for p in path.iterdir())
    return st.st_mode, path.read_bytes()


def links_under_brain(scratch: Path) -> dict:
    """Each place under .brain (and the journal) x each kind of target, then a log swapped for a link
    over and over while remember runs: nothing may land outside the vault (docs/architecture.md "Symlinks")."""
    outside = scratch / "elsewhere"
    outside.mkdir()
    os.chmod(outside, 0o755)
    (outside / "target.jsonl").write_bytes(b'{"op":"insert","id":1,"fact":"not yours"}\n')
    os.chmod(outside / "target.jsonl", 0o644)
    tried = held = 0
    with _Brain(scratch, {"notes/inside.md": b"# Inside\n\nA page.\n"}) as brain:
        s = brain.session()
        s.call("remember", {"fact": "first fact", "provenance": "abuse"})
        spots = _link_spots(brain)
        targets = {"outside folder": outside, "outside file": outside / "target.jsonl",
                   "file inside vault": brain.vault / "notes/inside.md", "dangling": outside / "none"}
        for where, spot in spots.items():
            for kind, target in targets.items():
                if (where == "facts folder") != (kind in ("outside folder", "dangling")) and kind != "dangling":
                    continue
                watched = outside if kind in ("outside folder", "dangling") else target
                before = _untouched(watched)
                aside = scratch / "aside"
                os.rename(spot, aside)
                os.symlink(target, spot)
                body, err = s.call("remember", {"fact": f"through {where} to {kind}", "provenance": "abuse"})
                ok = err and body.get("error") == "unavailable" and str(scratch) not in json.dumps(body) \
                    and _untouched(watched) == before
                os.unlink(spot)
                os.rename(aside, spot)
                tried += 1
                held += bool(ok)
        # the device log replaced by a link again and again while remember runs
        log_path, target = spots["device log"], outside / "target.jsonl"
        before = _untouched(target)
        stop = threading.Event()

        def swap():
            while not stop.is_set():
                os.rename(log_path, log_path.with_name("held-aside"))
                os.symlink(target, log_path)
                time.sleep(0.002)
                os.unlink(log_path)
                os.rename(log_path.with_name("held-aside"), log_path)
                time.sleep(0.002)

        t = threading.Thread(target=swap)
        t.start()
        acked, refused, deadline = [], 0, time.monotonic() + 5
        while time.monotonic() < deadline:
            text = f"raced fact {len(acked) + refused}"
            body, err = s.call("remember", {"fact": text, "provenance": "abuse"})
            if err:
                refused += 1
            else:
                acked.append(text)
        stop.set()
        t.join()
        on_disk = log_path.read_text()
        lost = sum(1 for a in acked if f'"{a}"' not in on_disk)
        tried += 1
        held += _untouched(target) == before and not lost
        s.s.close()
    return {"attempts": tried, "held": held, "broke": tried - held, "acked_lost": lost,
            "raced_remembers_acked": len(acked), "raced_remembers_refused": refused,
            "note": ".brain/facts, the device log and the journal linked to a folder or file outside, a page "
                    "inside, nowhere; then the log swapped for a link while remember runs: refused without a "
                    "path, the target's mode and bytes unchanged, no acknowledged fact lost"}


ATTACKS: list[tuple[str, Callable[[Path], dict]]] = [
    ("bad private marks", bad_private_marks),
    ("private mark variants", private_mark_variants),
    ("remote put onto unindexed private page", remote_put_unindexed),
    ("alias bomb", alias_bomb),
    (".brain linked outside the vault", brain_folder_link),
    ("links under .brain", links_under_brain),
]


if __name__ == "__main__":
    from abuse_attacks import run_attacks

    run_attacks(attacks=ATTACKS)
