"""The first session after a reboot: no daemon runs, and the session-start hook cannot wait
for one to start and reconcile. It answers from the caches the last daemon left on disk
(cli/route.py, call_or_read_caches) and starts a daemon in the background for the next call."""

from __future__ import annotations

import json
import time

from hooks_fixtures import FACT, brain, claude_payload, context_of, env_for, hook_log, run_hook, seed_home


def _indexed_then_stopped(home):
    """A seeded brain whose daemon indexed the vault once and was then stopped (a reboot)."""
    seed_home(home, deadline_ms=30000)
    env = env_for(home)
    assert brain(env, "daemon", "start").returncode == 0
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        st = brain(env, "call", "status", "{}")
        if st.returncode == 0 and json.loads(st.stdout).get("index_ready"):
            break
        time.sleep(0.2)
    assert brain(env, "daemon", "stop").returncode == 0
    return env


def _daemon_running(env) -> bool:
    st = brain(env, "daemon", "status", "--json")
    return st.returncode == 0 and bool(json.loads(st.stdout).get("running"))


def test_a_cold_start_injects_context_from_the_caches_and_starts_the_daemon(brain_home):
    env = _indexed_then_stopped(brain_home)
    assert not _daemon_running(env)
    r = run_hook(env, claude_payload(brain_home))
    assert r.returncode == 0, r.stderr
    text = context_of(r.stdout)
    assert "**Me**" in text and FACT in text      # the card from the page index, the fact from the facts cache
    assert "from=caches" in hook_log(brain_home)[-1]
    # the next session finds a daemon: it was started in the background
    deadline = time.monotonic() + 30
    while not _daemon_running(env) and time.monotonic() < deadline:
        time.sleep(0.3)
    assert _daemon_running(env)
    r = run_hook(env, claude_payload(brain_home))
    assert FACT in context_of(r.stdout) and "from=daemon" in hook_log(brain_home)[-1]


def test_context_comes_from_the_caches_even_when_no_daemon_can_start(brain_home):
    """A runtime folder that cannot hold a socket: no daemon, however long the hook waits."""
    env = _indexed_then_stopped(brain_home)
    run_dir = brain_home / "run"
    for f in run_dir.iterdir():
        f.unlink()
    run_dir.rmdir()
    run_dir.write_text("in the way")
    r = run_hook(env, claude_payload(brain_home))
    assert r.returncode == 0
    assert "**Me**" in context_of(r.stdout)


def test_a_vault_never_indexed_still_waits_for_its_daemon(brain_home):
    """No caches to read (only `--no-daemon` calls so far): the hook starts the daemon and
    waits for it within its deadline, as before."""
    seed_home(brain_home, deadline_ms=30000)
    env = env_for(brain_home)
    try:
        r = run_hook(env, claude_payload(brain_home))
        assert "**Me**" in context_of(r.stdout)
        assert "from=daemon" in hook_log(brain_home)[-1]
    finally:
        brain(env, "daemon", "stop")
