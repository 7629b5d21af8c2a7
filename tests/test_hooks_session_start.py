"""`brain hook session-start` as a harness runs it: a real subprocess fed
Claude Code and Codex payloads, against a real vault, in-process and through
the daemon; and every way it must fail open (print nothing, exit 0)."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from brain.hooks import session_start as hook
from hooks_fixtures import (BRAIN, FACT, brain, claude_payload, codex_payload, codex_post_compact, context_of, env_for,
                            hook_log, run_hook, seed_home)

# -- through the daemon: the path a harness takes ----------------------------------


@pytest.fixture(scope="module")
def live_brain():
    """A seeded brain with its daemon up and the vault indexed."""
    home = Path(tempfile.mkdtemp(prefix="bhk-", dir="/tmp"))
    # a generous deadline: these tests are about content, the bench measures time
    seed_home(home, deadline_ms=30000)
    env = env_for(home)
    repo = home / "lighthouse"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    try:
        r = brain(env, "daemon", "start")
        assert r.returncode == 0, r.stderr
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            st = brain(env, "call", "status", "{}")
            if st.returncode == 0 and json.loads(st.stdout).get("index_ready"):
                break
            time.sleep(0.2)
        yield home, env, repo
    finally:
        brain(env, "daemon", "stop")
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("make", [claude_payload, codex_payload], ids=["claude", "codex"])
@pytest.mark.parametrize("source", ["startup", "compact"])
def test_session_start_injects_the_standing_entity_card(live_brain, make, source):
    home, env, repo = live_brain
    r = run_hook(env, make(repo / "src", source))
    assert r.returncode == 0 and r.stderr == b""
    text = context_of(r.stdout)
    assert text.startswith("<!-- retrieved brain context")
    assert "**Me**" in text and "`people/me`" in text      # the card (§3.8 layout)
    assert FACT in text                                     # hot memory
    assert "**Lighthouse**" in text and "`projects/lighthouse`" in text  # the repo's page
    assert hook_log(home)[-1].split()[2:4] == [f"source={source}", "ok"]


def test_the_daemon_path_imports_nothing_heavy(live_brain):
    import subprocess
    import sys

    home, env, repo = live_brain
    code = (
        "import io, sys\n"
        "from brain.cli.entry import main\n"
        "rc = main(['hook', 'session-start'])\n"
        "heavy = [m for m in ('typer', 'torch', 'numpy', 'tantivy', 'mcp', 'pydantic', 'sentence_transformers')"
        " if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy), file=sys.stderr)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], input=json.dumps(claude_payload(repo)).encode(),
                       capture_output=True, env=env, timeout=60)
    assert FACT in context_of(r.stdout)
    assert r.stderr.decode().strip().splitlines()[-1] == "HEAVY="


def test_codex_post_compact_prints_nothing_but_succeeds_quietly(live_brain):
    home, env, repo = live_brain
    r = run_hook(env, codex_post_compact(repo))
    assert r.returncode == 0 and r.stdout == b""
    assert "PostCompact" in hook_log(home)[-1]


# -- in-process (--no-daemon) ------------------------------------------------------


def test_in_process_path_prints_valid_hook_json(brain_home):
    seed_home(brain_home)
    env = env_for(brain_home)
    for payload in (claude_payload(brain_home), codex_payload(brain_home, "compact")):
        r = run_hook(env, payload, "--no-daemon")
        assert r.returncode == 0, r.stderr
        assert FACT in context_of(r.stdout)


def test_the_project_name_comes_from_the_git_root(brain_home, tmp_path):
    seed_home(brain_home, standing=["people/me", "companies/acme"])
    env = env_for(brain_home)
    deep = tmp_path / "lighthouse" / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "lighthouse" / ".git").mkdir()
    r = run_hook(env, claude_payload(deep), "--no-daemon")
    assert r.returncode == 0
    assert "entities='people/me,companies/acme,lighthouse'" in hook_log(brain_home)[-1]


# -- failing open --------------------------------------------------------------------


def _assert_silent(r, home, reason: str):
    assert r.returncode == 0
    assert r.stdout == b"", r.stdout
    line = hook_log(home)[-1]
    assert " skip " in line and reason in line, line


def test_no_vault_prints_nothing(brain_home):
    r = run_hook(env_for(brain_home), claude_payload(brain_home))
    _assert_silent(r, brain_home, "no vault")


def test_a_broken_vault_prints_nothing(brain_home, tmp_path):
    seed_home(brain_home)
    not_a_folder = tmp_path / "notes.md"
    not_a_folder.write_text("a file where the vault should be")
    env = env_for(brain_home, BRAIN_VAULT=str(not_a_folder))
    for extra in ((), ("--no-daemon",)):
        r = run_hook(env, claude_payload(tmp_path), *extra)
        _assert_silent(r, brain_home, "not a folder")  # the log line says what is wrong


def test_a_config_that_does_not_parse_prints_nothing(brain_home):
    seed_home(brain_home)
    (brain_home / "config" / "config.toml").write_text("vault = [unclosed\n")
    r = run_hook(env_for(brain_home), claude_payload(brain_home))
    _assert_silent(r, brain_home, "config")


def test_an_unreachable_daemon_prints_nothing(brain_home):
    seed_home(brain_home)
    # the runtime folder cannot be created, so no socket and no daemon
    (brain_home / "run").write_text("in the way")
    r = run_hook(env_for(brain_home), claude_payload(brain_home))
    _assert_silent(r, brain_home, "failed")


@pytest.mark.parametrize("raw", [b"", b"not json at all", b"\xff\xfe\x00garbage", b"[1, 2, 3]", b'"startup"',
                                 b'{"hook_event_name": "UserPromptSubmit", "prompt": "hi"}'])
def test_garbage_stdin_prints_nothing(brain_home, raw):
    seed_home(brain_home)
    r = run_hook(env_for(brain_home), raw, "--no-daemon")
    assert r.returncode == 0 and r.stdout == b""
    assert " skip " in hook_log(brain_home)[-1]


def test_a_one_millisecond_deadline_prints_nothing(brain_home):
    seed_home(brain_home, deadline_ms=1)
    r = run_hook(env_for(brain_home), claude_payload(brain_home), "--no-daemon")
    _assert_silent(r, brain_home, "deadline of 1 ms")


def test_stdin_that_never_closes_is_cut_by_the_deadline(brain_home):
    import subprocess

    seed_home(brain_home, deadline_ms=300)
    proc = subprocess.Popen([*BRAIN, "hook", "session-start", "--no-daemon"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_for(brain_home))
    try:
        proc.stdin.write(b'{"hook_event_name": "SessionStart"')  # half a payload, stdin left open
        proc.stdin.flush()
        code = proc.wait(timeout=20)
        assert code == 0 and proc.stdout.read() == b""
    finally:
        proc.kill()
        proc.wait()
    assert "deadline" in hook_log(brain_home)[-1]


# -- the pure pieces -------------------------------------------------------------------


def test_choose_entities_caps_at_eight_and_keeps_a_seat_for_the_project():
    standing = [f"people/p{i}" for i in range(10)]
    chosen = hook.choose_entities(standing, "lighthouse")
    assert len(chosen) == 8 and chosen[-1] == "lighthouse" and chosen[:7] == standing[:7]
    assert hook.choose_entities(["people/me", "People/Me", " ", 3], None) == ["people/me"]
    assert hook.choose_entities("people/me, companies/acme", "people/me") == ["people/me", "companies/acme"]


def test_project_name_of_plain_repo_worktree_and_non_repo(tmp_path):
    main = tmp_path / "lighthouse"
    (main / ".git" / "worktrees" / "feature-x").mkdir(parents=True)
    assert hook.project_name(main / "deep" / "er") == "lighthouse"  # need not exist below the root
    wt = tmp_path / "feature-x"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'feature-x'}\n")
    assert hook.project_name(wt) == "lighthouse"
    sub = tmp_path / "vendored"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../lighthouse/.git/modules/vendored\n")
    assert hook.project_name(sub) == "vendored"
    assert hook.project_name(None) is None


def test_parse_payload_and_event():
    assert hook.parse_payload(b'{"source": "resume"}') == {"source": "resume"}
    for bad in (b"", b"  \n", b"[]", b"{", b"\xff"):
        with pytest.raises(hook.Skip):
            hook.parse_payload(bad)
    assert hook.event_of({}) == "SessionStart"
    assert hook.event_of({"hook_event_name": "PostCompact"}) == "PostCompact"
    with pytest.raises(hook.Skip):
        hook.event_of({"hook_event_name": "Stop"})


def test_output_is_ascii_json_both_harnesses_accept():
    raw = hook.render("café — ☕")
    raw.decode("ascii")
    assert json.loads(raw) == {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                      "additionalContext": "café — ☕"}}
