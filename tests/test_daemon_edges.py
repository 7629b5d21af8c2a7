"""Lifecycle edges a person meets: stop mid-call, upgrades, several vaults, a vanished vault."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    alive, configured, daemon, reaper, run_brain, small_vault,
)

from brain.daemon.client.calls import send
from brain.daemon.rendezvous import read_pid_file

pytestmark = pytest.mark.usefixtures("reaper")


def _slow_llm_daemon(places, vault, monkeypatch, fake, delay_s):
    from llm_fakes import json_answer

    from brain.daemon import config as config_mod
    from brain.daemon.client.spawn import connect_or_start

    fake.queue(json_answer("Alice works at Acme.", ["people/alice-example"], delay_s=delay_s))
    cfg = config_mod.load(places.config_file)
    cfg.update({"llm.provider": "openai", "llm.model": "gpt-4.1-mini", "llm.base_url": fake.openai_url})
    config_mod.save(places.config_file, cfg)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    sock, _ = connect_or_start(places, vault)
    sock.close()
    return read_pid_file(places, vault)["pid"]


def test_stop_while_a_call_is_in_flight_still_answers_it(places, configured, reaper, monkeypatch):
    """`brain daemon stop` during a slow call: the caller gets its answer, not a dropped connection."""
    from llm_fakes import FakeLLM

    with FakeLLM() as fake:
        pid = _slow_llm_daemon(places, configured, monkeypatch, fake, delay_s=1.5)
        reaper()
        out: list = []

        def ask():
            try:
                out.append(send(places, configured, "synthesize",
                                       {"question": "Where does Alice Example work?"}))
            except Exception as e:  # noqa: BLE001 - the failure under test
                out.append(e)

        t = threading.Thread(target=ask)
        t.start()
        deadline = time.monotonic() + 10
        while not fake.calls("/chat/completions") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert fake.calls("/chat/completions"), "the call never reached the LLM"
        stop = run_brain("daemon", "stop")
        t.join(30)
        assert stop.returncode == 0 and f"stopped pid {pid}" in stop.stdout, stop.stdout + stop.stderr
        assert not alive(pid)
        assert len(out) == 1 and not isinstance(out[0], Exception), out
        body, is_error = out[0]
        assert not is_error, body
        assert body["answer"] == "Alice works at Acme."


def _stamp_version(places, vault, version: str) -> None:
    """Make the running daemon's pid file say it was started by another release."""
    import json

    from brain.daemon.rendezvous import pid_path

    info = read_pid_file(places, vault)
    info["version"] = version
    pid_path(places, vault).write_text(json.dumps(info))


def test_a_daemon_from_an_older_release_is_replaced(daemon, places, reaper):
    """After an upgrade the next call stops the old daemon gracefully and starts ours."""
    from brain import __version__

    _stamp_version(places, daemon["vault"], "0.0.1")
    r = run_brain("recall", "--entity", "people/bob", "--json")
    reaper()
    assert r.returncode == 0, r.stderr
    assert "0.0.1" in r.stderr and __version__ in r.stderr  # says why it restarted
    assert not alive(daemon["pid"])
    info = read_pid_file(places, daemon["vault"])
    assert info["pid"] != daemon["pid"] and alive(info["pid"]) and info["version"] == __version__
    # and the new one is left alone by the next call
    again = run_brain("recall", "--entity", "people/bob", "--json")
    assert again.returncode == 0 and again.stderr == ""
    assert read_pid_file(places, daemon["vault"])["pid"] == info["pid"]


def test_a_daemon_from_a_newer_release_is_kept_with_a_warning(daemon, places):
    """Never downgrade someone else's daemon: use it, and say how to replace it."""
    _stamp_version(places, daemon["vault"], "99.0.0")
    r = run_brain("recall", "--entity", "people/bob", "--json")
    assert r.returncode == 0, r.stderr
    assert "99.0.0" in r.stderr and "brain daemon stop" in r.stderr
    assert alive(daemon["pid"]) and read_pid_file(places, daemon["vault"])["pid"] == daemon["pid"]


def test_vault_deleted_under_the_daemon_refuses_writes_and_stops(daemon, places):
    """No write is acknowledged into a deleted folder; the daemon stops instead of serving a ghost."""
    import shutil

    from brain.daemon.client.spawn import DaemonStartError

    vault = daemon["vault"]
    body, is_error = send(places, vault, "remember",
                                 {"fact": "before", "provenance": "t", "entity": "people/bob"})
    assert not is_error
    shutil.rmtree(vault)
    body, is_error = send(places, vault, "remember",
                                 {"fact": "after the folder went away", "provenance": "t", "entity": "people/bob"})
    assert is_error and body["error"] == "unavailable", body
    assert str(vault) in body["message"] and "brain init" in body["suggestion"]
    deadline = time.monotonic() + 20
    while alive(daemon["pid"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(daemon["pid"])
    # no crash loop: the next call says what to fix instead of spawning
    with pytest.raises(DaemonStartError, match="not a folder"):
        send(places, vault, "recall", {"entity": "people/bob"})
    assert not os.path.exists(vault)


def test_vault_replaced_under_the_daemon_is_not_written_through_a_stale_log(daemon, places, reaper):
    """A folder restored at the same path (sync tool, backup) gets a fresh daemon, not the old file handles."""
    import shutil

    vault = daemon["vault"]
    shutil.move(str(vault), str(vault) + "-old")
    shutil.copytree(str(vault) + "-old", vault)
    body, is_error = send(places, vault, "remember",
                                 {"fact": "lands in the restored folder", "provenance": "t", "entity": "people/bob"})
    if is_error:  # the old daemon refused and stopped: the retry reaches a fresh one
        assert body["error"] == "unavailable", body
        deadline = time.monotonic() + 20
        while alive(daemon["pid"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        body, is_error = send(places, vault, "remember",
                                     {"fact": "lands in the restored folder", "provenance": "t",
                                      "entity": "people/bob"})
        reaper()
    assert not is_error, body
    from conftest import facts_log_lines

    assert any("lands in the restored folder" in line for line in facts_log_lines(vault))
    assert not alive(daemon["pid"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder")
def test_unreadable_vault_gets_a_clear_error(daemon, places):
    vault = daemon["vault"]
    os.chmod(vault, 0)
    try:
        body, is_error = send(places, vault, "recall", {"entity": "people/bob"})
    finally:
        os.chmod(vault, 0o755)
    assert is_error and body["error"] == "unavailable" and "chmod" in body["suggestion"], body
    assert alive(daemon["pid"])
    body, is_error = send(places, vault, "recall", {"entity": "people/bob"})
    assert not is_error


def test_a_missing_vault_is_never_created_by_a_call(places, tmp_path, monkeypatch):
    """A typo in BRAIN_VAULT is an error with a fix, on every path, and no folder appears."""
    import subprocess

    from daemon_fixtures import BRAIN, child_env

    missing = tmp_path / "no-such-vault"
    monkeypatch.setenv("BRAIN_VAULT", str(missing))
    for args in (["recall", "x"], ["recall", "x", "--no-daemon"], ["remember", "y", "-p", "t", "--no-daemon"]):
        r = run_brain(*args)
        assert r.returncode == 1 and "not a folder" in r.stderr and "brain init" in r.stderr, (args, r.stderr)
        assert not missing.exists(), args
    r = subprocess.run([BRAIN, "serve", "--no-daemon"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       env=child_env(), timeout=60)
    assert r.returncode == 1 and "not a folder" in r.stderr and "brain init" in r.stderr, r.stderr
    assert not missing.exists()


def test_a_daemon_started_under_another_runtime_dir_is_found(daemon, places, tmp_path):
    """A terminal whose BRAIN_HOME / XDG_RUNTIME_DIR differs from the MCP host's reaches the same
    daemon (the vault's lock names its socket) instead of waiting 20 s for one that never comes."""
    import subprocess

    from daemon_fixtures import BRAIN, child_env, daemon_pids_for

    env = child_env()
    env["BRAIN_HOME"] = str(tmp_path / "other-home")
    r = subprocess.run([BRAIN, "recall", "--entity", "people/bob", "--json"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert str(daemon["socket"]) in r.stderr and "BRAIN_HOME" in r.stderr  # says where, and why
    assert daemon_pids_for(str(tmp_path)) == [daemon["pid"]]


def test_sigterm_while_the_model_loads_then_a_clean_start(places, configured, reaper, tmp_path):
    """Stop during the embedding model's load (here its one-time ONNX export, into an empty model
    cache): a prompt clean exit that ends the export, and the next daemon starts with everything."""
    import subprocess
    import sys

    from daemon_fixtures import child_env

    from brain.daemon import config as config_mod
    from brain.daemon.client.spawn import wait_for_socket
    from brain.daemon.rendezvous import log_path

    cfg = config_mod.load(places.config_file)
    cfg["embeddings.enabled"] = True
    config_mod.save(places.config_file, cfg)
    env = child_env()
    env["BRAIN_MODEL_CACHE"] = str(tmp_path / "no-export-yet")
    proc = subprocess.Popen([sys.executable, "-m", "brain.daemon.server", "--vault", str(configured)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env)
    try:
        wait_for_socket(places, configured, proc).close()
        body, is_error = send(places, configured, "remember",
                                     {"fact": "written during warm-up", "provenance": "t", "entity": "people/bob"})
        assert not is_error, body
        assert "models ready" not in log_path(places, configured).read_text()  # still loading
        proc.send_signal(signal.SIGTERM)
        stopping = time.monotonic()
        assert proc.wait(timeout=60) == 0
        assert time.monotonic() - stopping < 10  # the export was ended, not waited for
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not places.socket_path(configured).exists() and read_pid_file(places, configured) is None
    body, is_error = send(places, configured, "recall", {"entity": "people/bob"})
    reaper()
    assert not is_error and [f["fact"] for f in body["facts"]] == ["written during warm-up"]
    log = log_path(places, configured).read_text()
    assert "Traceback" not in log and "ERROR" not in log, log


def test_stop_waits_longer_than_a_daemon_may_take_to_stop():
    """`brain daemon stop` must not SIGKILL a daemon that is still inside its own shutdown budget."""
    from brain.daemon.server import process as server
    from brain.daemon.client import stop

    assert stop.STOP_TIMEOUT_S > server.DRAIN_S + server.WARMUP_WAIT_S + server.FLUSH_S


def test_a_socket_path_too_long_fails_with_the_fix_and_closes_cleanly(configured, tmp_path, monkeypatch):
    """A BRAIN_HOME so deep the socket path cannot be bound: the error names the fix, and the daemon
    closes its caches instead of waiting for a warm-up that never started."""
    from brain.daemon.places import Places
    from brain.daemon.client.spawn import DaemonStartError, connect_or_start
    from brain.daemon.rendezvous import log_path

    home = tmp_path / ("h" * 100)
    monkeypatch.setenv("BRAIN_HOME", str(home))
    deep = Places.from_env()
    with pytest.raises(DaemonStartError) as err:
        connect_or_start(deep, configured)
    assert "too long" in str(err.value) and "BRAIN_HOME" in str(err.value)
    log = log_path(deep, configured).read_text()
    assert "cannot listen" in log and "exiting without closing the caches" not in log, log


def test_daemon_logs_line_count(daemon):
    r = run_brain("daemon", "logs", "-n", "1")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 1
    r = run_brain("daemon", "logs", "-n", "0")
    assert r.returncode == 0 and r.stdout == ""
    r = run_brain("daemon", "logs", "-n", "-5")
    assert r.returncode == 2 and "--lines" in r.stderr


def test_serve_http_bad_port_and_host_name_the_fix(daemon):
    r = run_brain("serve", "--http", "--port", "99999", timeout=30)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "0-65535" in r.stderr and "--port" in r.stderr
    # an address this machine does not have (TEST-NET-1): the fix is about --host, not the port
    r = run_brain("serve", "--http", "--host", "192.0.2.123", "--port", "0", timeout=30)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "--host" in r.stderr.split("fix:", 1)[1]
    r = run_brain("serve", "--http", "--host", "no-such-host.invalid", "--port", "0", timeout=30)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "--host" in r.stderr.split("fix:", 1)[1]


def test_stop_never_signals_a_process_that_reused_a_stale_pid(places, configured):
    """A pid file left by a dead daemon may name a pid the system has since given to something else."""
    import json
    import subprocess

    from brain.daemon.client.probe import daemon_status
    from brain.daemon.rendezvous import pid_path

    bystander = subprocess.Popen(["sleep", "60"])
    try:
        places.runtime_dir.mkdir(parents=True, exist_ok=True)
        pid_path(places, configured).write_text(json.dumps({"pid": bystander.pid, "version": "0.1.0"}))
        st = daemon_status(places, configured)
        assert not st["running"] and st["pid"] is None and st["stale_pid_file"]
        r = run_brain("daemon", "stop")
        assert r.returncode == 0 and "not running" in r.stdout, r.stdout + r.stderr
        assert bystander.poll() is None, "brain daemon stop killed an unrelated process"
        assert not pid_path(places, configured).exists()
    finally:
        bystander.kill()
        bystander.wait()


def test_a_silent_lock_holder_is_named_when_no_socket_answers(places, configured, reaper):
    """A daemon that holds the vault but is unreachable from here (say, an older one under another
    runtime dir): the error names its pid and the fix, not just "no daemon answered"."""
    from brain.daemon.client.spawn import DaemonStartError, start_daemon, wait_for_socket
    from brain.daemon.vault_lock import VaultLock

    lock = VaultLock(configured)
    lock.acquire("daemon")
    try:
        proc = start_daemon(places, configured)
        with pytest.raises(DaemonStartError) as err:
            wait_for_socket(places, configured, proc, timeout=3.0)
        proc.wait(10)
    finally:
        lock.release()
    assert f"pid {os.getpid()}" in str(err.value) and "BRAIN_HOME" in str(err.value)
