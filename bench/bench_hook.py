"""`brain hook session-start` wall time, as a harness sees it: spawn the
console script, write a SessionStart payload to its stdin, read its output.

  daemon      the daemon up and the vault indexed (target: median <= 250 ms)
  in_process  --no-daemon: the engine opened in the hook's own process
  first       a vault never indexed, no daemon: the hook starts one and waits
              for it (one run; it prints context only if that fits in the deadline)
  cold        the daemon stopped after indexing (a reboot): the hook answers
              from the caches on disk and starts the daemon in the background
              (--cold-runs runs, the daemon stopped again before each)

on a vault of people/me, a project page named after the repository, a few
hundred filler pages and facts. Embeddings are off (the hook's path never
touches vectors). Prints one JSON object per line.

    /work/venv/bin/python bench/bench_hook.py --runs 20 --pages 300
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from brain.daemon.server.usage_stats import percentile

TARGET_DAEMON_P50_MS = 250
COLD_DEADLINE_MS = 1500  # the hook's default deadline: a cold start must inject within it


def brain_argv() -> list[str]:
    script = Path(sys.executable).parent / "brain"
    return [str(script)] if script.exists() else [sys.executable, "-m", "brain.cli.entry"]


def seed(home: Path, pages: int, facts: int) -> tuple[dict, Path]:
    env = dict(os.environ, BRAIN_HOME=str(home), HF_HUB_OFFLINE="1")
    env.pop("BRAIN_VAULT", None)
    vault = home / "vault"
    (vault / "people").mkdir(parents=True)
    (vault / "projects").mkdir()
    (vault / "notes").mkdir()
    (vault / "people" / "me.md").write_text("---\ntitle: Me\naliases: [myself]\n---\n# Me\n\n"
                                            "Writes Python; keeps notes in Markdown.\n")
    (vault / "projects" / "harbour.md").write_text("---\ntitle: Harbour\n---\n# Harbour\n\nA service [[Me]] runs.\n"
                                                   "\n## Timeline\n- 2026-01-05: first release\n")
    for i in range(pages):
        (vault / "notes" / f"note-{i}.md").write_text(f"# Note {i}\n\nMet [[Me]] about item {i}.\n")
    run = lambda *a: subprocess.run([*brain_argv(), *a], env=env, capture_output=True, check=True)  # noqa: E731
    run("init", str(vault), "--no-daemon")
    cfg = home / "config" / "config.toml"
    cfg.write_text(cfg.read_text() + "\n[embeddings]\nenabled = false\n")
    for i in range(facts):
        run("remember", f"preference number {i}: dark mode everywhere", "--provenance", "bench",
            "--entity", "people/me", "--no-daemon")
    repo = home / "harbour"
    (repo / ".git").mkdir(parents=True)
    return env, repo


def one_run(env: dict, payload: bytes, extra: list[str]) -> tuple[float, bool]:
    t0 = time.perf_counter()
    r = subprocess.run([*brain_argv(), "hook", "session-start", *extra], input=payload, env=env,
                       capture_output=True, timeout=30)
    ms = (time.perf_counter() - t0) * 1000
    ok = False
    if r.stdout.strip():
        ok = bool(json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"].strip())
    return ms, ok


def wait_for_daemon(env: dict, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        st = subprocess.run([*brain_argv(), "call", "status", "{}"], env=env, capture_output=True)
        if st.returncode == 0 and json.loads(st.stdout).get("index_ready"):
            return
        time.sleep(0.2)


def summarize(mode: str, samples: list[tuple[float, bool]], target: float | None) -> dict:
    times = sorted(ms for ms, _ in samples)
    p99 = percentile(times, 99)
    row = {"bench": "hook_session_start", "mode": mode, "runs": len(times),
           "p50_ms": round(statistics.median(times), 1), "p99_ms": round(p99, 1),
           "min_ms": round(times[0], 1), "max_ms": round(times[-1], 1),
           "with_context": sum(1 for _, ok in samples if ok)}
    if target is not None:
        row["target_p50_ms"] = target
        row["meets_target"] = row["p50_ms"] <= target
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--facts", type=int, default=20)
    ap.add_argument("--cold-runs", type=int, default=7)
    ns = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bhb-", dir="/tmp"))
    try:
        env, repo = seed(home, ns.pages, ns.facts)
        payload = json.dumps({"session_id": "bench-session", "transcript_path": None, "cwd": str(repo),
                              "hook_event_name": "SessionStart", "source": "startup"}).encode()
        first = one_run(env, payload, [])
        print(json.dumps(summarize("first", [first], None)), flush=True)
        # let the daemon finish its first index pass before timing the warm path
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            st = subprocess.run([*brain_argv(), "call", "status", "{}"], env=env, capture_output=True)
            if st.returncode == 0 and json.loads(st.stdout).get("index_ready"):
                break
            time.sleep(0.2)
        one_run(env, payload, [])  # warm the OS page cache
        print(json.dumps(summarize("daemon", [one_run(env, payload, []) for _ in range(ns.runs)],
                                   TARGET_DAEMON_P50_MS)), flush=True)
        cold = []
        for _ in range(ns.cold_runs):
            subprocess.run([*brain_argv(), "daemon", "stop"], env=env, capture_output=True)
            cold.append(one_run(env, payload, []))
            wait_for_daemon(env)  # the one the hook started: stopped at the top of the next run
        print(json.dumps(summarize("cold", cold, COLD_DEADLINE_MS)), flush=True)
        subprocess.run([*brain_argv(), "daemon", "stop"], env=env, capture_output=True)
        print(json.dumps(summarize("in_process", [one_run(env, payload, ["--no-daemon"]) for _ in range(ns.runs)],
                                   None)), flush=True)
    finally:
        subprocess.run([*brain_argv(), "daemon", "stop"], env=dict(os.environ, BRAIN_HOME=str(home)),
                       capture_output=True)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
