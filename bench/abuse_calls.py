"""Abuse rows for calls that must run once and cursors that must stay put.

    python bench/abuse_calls.py

- retry duplicates: MCP hosts talk to the real `brain serve` relay; bursts
  of `remember` (no entity) are in flight when the daemon is killed -9 the
  moment the first of them reaches the facts log. Every call answered "retry"
  is sent again, as a host does. A fact whose insert line appears twice in
  the log was written twice (broke).
- cursor flood: two hosts, each through its own `brain serve`; the quiet one
  sets delta cursors, the busy one opens thousands of delta sessions. Every
  quiet cursor must survive (a wake after a new fact delivers it).

Each attack gets an empty scratch folder for BRAIN_HOME and its vault, and
stops the daemons it started.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

BRAIN = str(Path(sys.executable).parent / "brain")
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "abuse-calls", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(rid, name: str, args: dict) -> dict:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": args}}


def _body(msg: dict | None) -> dict | None:
    if not msg or "result" not in msg:
        return None
    return json.loads(msg["result"]["content"][0]["text"])


class _Host:
    """An MCP host at the far end of a real `brain serve` process."""

    def __init__(self, env: dict):
        self.proc = subprocess.Popen([BRAIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.buf = bytearray()
        self.early: dict = {}
        self.send(INIT, INITIALIZED)
        self.read(1, 60.0)

    def send(self, *msgs) -> None:
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))
        self.proc.stdin.flush()

    def read(self, rid, timeout: float = 30.0) -> dict | None:
        deadline = time.monotonic() + timeout
        while rid not in self.early:
            while b"\n" in self.buf:
                nl = self.buf.index(b"\n")
                msg = json.loads(bytes(self.buf[:nl]))
                del self.buf[: nl + 1]
                self.early[msg.get("id")] = msg
            if rid in self.early:
                break
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    return None
                self.buf.extend(chunk)
        return self.early.pop(rid)

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


class _Brain:
    """A private BRAIN_HOME and vault in `scratch`, and the daemons started for it."""

    def __init__(self, scratch: Path):
        from brain.daemon import config as config_mod
        from brain.daemon.places import Places

        self.vault = scratch / "vault"
        (self.vault / "people").mkdir(parents=True)
        (self.vault / "people" / "priya.md").write_text("---\ntitle: Priya\n---\n# Priya\n")
        self.env = {**os.environ, "BRAIN_HOME": str(scratch / "home"), "HF_HUB_OFFLINE": "1",
                    "BRAIN_VAULT": str(self.vault)}
        self.env.pop("BRAIN_MCP_FORCE_SURFACE", None)
        self.places = Places.from_env({"BRAIN_HOME": str(scratch / "home")})
        config_mod.save(self.places.config_file, {"vault": str(self.vault), "embeddings.enabled": False})
        self.pids: set[int] = set()

    def daemon_pid(self) -> int | None:
        from brain.daemon.rendezvous import read_pid_file

        info = read_pid_file(self.places, self.vault.resolve()) or {}
        pid = info.get("pid")
        if isinstance(pid, int):
            self.pids.add(pid)
            return pid
        return None

    def log_inserts(self) -> list[str]:
        # every facts log: the shared one of older versions and each device's (docs/architecture.md)
        brain_dir = self.vault / ".brain"
        paths = [p for p in [brain_dir / "facts.jsonl", *sorted((brain_dir / "facts").glob("*.jsonl"))] if p.is_file()]
        out = []
        for line in (ln for p in paths for ln in p.read_text().splitlines()):
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("op") == "insert":
                out.append(rec.get("fact"))
        return out

    def stop(self) -> None:
        subprocess.run([BRAIN, "daemon", "stop"], env=self.env, capture_output=True, timeout=60)
        self.daemon_pid()
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def retry_duplicates(scratch: Path, rounds: int = 5, burst: int = 12) -> dict:
    brain = _Brain(scratch)
    host = _Host(brain.env)
    retried = broke = 0
    rid = 100
    try:
        for r in range(rounds):
            before = len(brain.log_inserts())
            pid = brain.daemon_pid()
            calls = {}
            for i in range(burst):
                calls[rid] = {"fact": f"round {r} note {i}: the parcel is with the neighbour", "provenance": "abuse"}
                rid += 1
            host.send(*(_call(k, "remember", v) for k, v in calls.items()))
            # kill -9 as soon as the first of them is logged: the rest are mid-flight
            deadline = time.monotonic() + 10
            while len(brain.log_inserts()) == before and time.monotonic() < deadline:
                time.sleep(0.001)
            if pid:
                os.kill(pid, signal.SIGKILL)
            again = []
            for k, args in calls.items():
                msg = host.read(k)
                if msg is None or ("error" in msg and (msg["error"].get("data") or {}).get("retry")):
                    again.append(args)
            for args in again:  # the host retries each call it was told to retry
                retried += 1
                host.send(_call(rid, "remember", args))
                _body(host.read(rid, 60.0))
                rid += 1
        counts: dict = {}
        for fact in brain.log_inserts():
            counts[fact] = counts.get(fact, 0) + 1
        broke = sum(1 for n in counts.values() if n > 1)
        lost = rounds * burst - len(counts)
    finally:
        host.close()
        brain.stop()
    return {"attempts": retried, "held": retried - broke, "broke": broke, "facts_written_twice": broke,
            "facts_missing": lost,
            "note": f"{rounds} kill -9s, each under {burst} remembers in flight; "
                    f"{retried} calls answered 'retry' and sent again; {broke} facts written twice"}


def cursor_flood(scratch: Path, victims: int = 5, flood: int = 3000) -> dict:
    brain = _Brain(scratch)
    quiet, busy = _Host(brain.env), _Host(brain.env)
    held = 0
    try:
        for v in range(victims):
            quiet.send(_call(10 + v, "delta", {"session_id": f"mine-{v}"}))
            quiet.read(10 + v)
        step = 500
        for start in range(0, flood, step):  # pipelined, a window at a time
            ids = range(1000 + start, 1000 + min(start + step, flood))
            busy.send(*(_call(i, "delta", {"session_id": f"flood-{i}"}) for i in ids))
            for i in ids:
                busy.read(i, 60.0)
        quiet.send(_call(50, "remember", {"fact": "The boiler was serviced today", "provenance": "abuse"}))
        quiet.read(50)
        for v in range(victims):
            quiet.send(_call(60 + v, "delta", {"session_id": f"mine-{v}"}))
            body = _body(quiet.read(60 + v)) or {}
            # an evicted cursor makes this a first wake, which delivers nothing
            if any(f.get("fact") == "The boiler was serviced today" for f in body.get("facts") or []):
                held += 1
    finally:
        quiet.close()
        busy.close()
        brain.stop()
    return {"attempts": victims, "held": held, "broke": victims - held,
            "note": f"one relay opened {flood} delta sessions; {held} of {victims} cursors of another relay survived"}


ATTACKS: list[tuple[str, Callable[[Path], dict]]] = [
    ("retry duplicates", retry_duplicates),
    ("cursor flood", cursor_flood),
]


if __name__ == "__main__":
    from abuse_attacks import run_attacks

    run_attacks(attacks=ATTACKS)
