"""The daemon's life: start, one per vault, status, stop, crash recovery, logs."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import threading
import time

import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    BRAIN, INIT, INITIALIZED, alive, call_text, child_env, configured, daemon, raw_connect, reaper,
    read_until_id, run_brain, send_lines, small_vault, tool_call,
)

from brain.daemon.client.calls import send
from brain.daemon.client.probe import daemon_status
from brain.daemon.client.spawn import connect_or_start
from brain.daemon.client.stop import stop_daemon
from brain.daemon.rendezvous import read_pid_file

pytestmark = pytest.mark.usefixtures("reaper")


def test_start_status_stop_via_cli(places, configured, reaper):
    r = run_brain("daemon", "start")
    assert r.returncode == 0, r.stderr
    assert "daemon started" in r.stdout
    reaper()
    info = read_pid_file(places, configured)
    assert alive(info["pid"])
    sock = places.socket_path(configured)
    assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
    assert stat.S_ISSOCK(os.stat(sock).st_mode)
    again = run_brain("daemon", "start")
    assert again.returncode == 0 and "already running" in again.stdout
    st = run_brain("daemon", "status", "--json")
    assert st.returncode == 0
    doc = json.loads(st.stdout)
    assert doc["running"] and doc["pid"] == info["pid"]
    stop = run_brain("daemon", "stop")
    assert stop.returncode == 0 and f"stopped pid {info['pid']}" in stop.stdout
    assert not alive(info["pid"])
    assert not sock.exists() and read_pid_file(places, configured) is None
    st = run_brain("daemon", "status")
    assert st.returncode == 3 and "not running" in st.stdout
    # its log went to the state dir, never to a terminal
    logs = run_brain("daemon", "logs", "-n", "20")
    assert "listening on" in logs.stdout and "draining" in logs.stdout


def test_second_daemon_exits_naming_the_holder(daemon, places):
    r = subprocess.run([BRAIN.replace("/brain", "/python"), "-m", "brain.daemon.server", "--vault",
                        str(daemon["vault"])], capture_output=True, text=True, timeout=30, env=child_env())
    assert r.returncode == 3
    assert f"pid {daemon['pid']}" in r.stderr and "daemon" in r.stderr
    assert "brain daemon stop" in r.stderr
    # the first daemon is untouched and still serving
    body, is_error = send(places, daemon["vault"], "whoami", {})
    assert not is_error and body["lane"] == "local"
    assert read_pid_file(places, daemon["vault"])["pid"] == daemon["pid"]


def test_foreground_start_refuses_while_one_runs(daemon):
    r = run_brain("daemon", "start", "--foreground", timeout=30)
    assert r.returncode == 3 and f"pid {daemon['pid']}" in r.stderr


def test_kill9_then_next_call_starts_a_new_daemon_and_no_write_is_lost(daemon, places, reaper):
    vault = daemon["vault"]
    ids = []
    for i in range(20):
        body, is_error = send(places, vault, "remember",
                                     {"fact": f"acknowledged fact {i}", "provenance": "crash test",
                                      "entity": "people/bob"})
        assert not is_error and body["status"] == "inserted"
        ids.append(body["id"])
    os.kill(daemon["pid"], signal.SIGKILL)
    # the thread group leader turns zombie before the last thread drops the
    # socket: wait until the socket stops answering too
    deadline = time.monotonic() + 5
    while (alive(daemon["pid"]) or daemon_status(places, vault)["running"]) and time.monotonic() < deadline:
        time.sleep(0.01)
    st = daemon_status(places, vault)
    assert not st["running"] and st["stale_socket"]
    body, is_error = send(places, vault, "recall", {"entity": "people/bob", "limit": 100})
    reaper()
    assert not is_error
    assert sorted(f["fact_id"] for f in body["facts"]) == sorted(ids)
    new_pid = read_pid_file(places, vault)["pid"]
    assert new_pid != daemon["pid"] and alive(new_pid)


def test_sigterm_drains_a_call_in_flight(daemon, places):
    """Writes racing SIGTERM: each one acknowledged is in the facts log."""
    vault = daemon["vault"]
    acked, errors = [], []

    def writer(n):
        for i in range(15):
            try:
                body, is_error = send(places, vault, "remember",
                                             {"fact": f"w{n}-{i}", "provenance": "drain", "entity": "people/bob"})
            except Exception as e:  # the daemon went away between calls: fine, as long as no ack is lost
                errors.append(str(e))
                return
            if not is_error:
                acked.append(body["id"])
            elif body.get("error") == "unavailable":
                return

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.15)
    os.kill(daemon["pid"], signal.SIGTERM)
    for t in threads:
        t.join(30)
    deadline = time.monotonic() + 10
    while alive(daemon["pid"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(daemon["pid"])
    # every acknowledged write is in the log (the system of record)
    from conftest import facts_log_lines

    lines = facts_log_lines(vault)
    logged = {str(json.loads(line).get("id")) for line in lines if line.strip()}
    assert acked and set(acked) <= logged


def test_stale_pid_and_socket_files_are_recovered(places, configured, reaper):
    places.runtime_dir.mkdir(parents=True, exist_ok=True)
    sock_path = places.socket_path(configured)
    # a socket file nobody listens on, and a pid file naming a dead process
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(sock_path))
    s.close()
    dead = subprocess.Popen(["true"])
    dead.wait()
    sock_path.with_suffix(".pid").write_text(json.dumps({"pid": dead.pid}))
    st = daemon_status(places, configured)
    assert st["stale_socket"] and st["stale_pid_file"] and not st["running"]
    sock, started = connect_or_start(places, configured)
    sock.close()
    reaper()
    assert started
    info = read_pid_file(places, configured)
    assert info["pid"] != dead.pid and alive(info["pid"])
    assert stop_daemon(places, configured).startswith("stopped")


def test_two_clients_racing_to_start_share_one_daemon(places, configured, reaper):
    results = []

    def go():
        results.append(send(places, configured, "whoami", {}))

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    reaper()
    assert len(results) == 4 and all(not err for _, err in results)
    ps = subprocess.run(["ps", "-eww", "-o", "pid,args"], capture_output=True, text=True).stdout
    running = [line for line in ps.splitlines() if "brain.daemon.server" in line and str(configured) in line]
    assert len(running) == 1, running


def test_calls_answer_while_the_model_is_absent(daemon, places):
    """The embedding model is off in these tests: search degrades, never errors."""
    body, is_error = send(places, daemon["vault"], "recall", {"query": "bricks"})
    assert not is_error
    assert body.get("search_degraded")


def test_cli_verbs_use_the_daemon(daemon, places):
    r = run_brain("remember", "Acme ships rockets", "--provenance", "cli", "--entity", "companies/acme", "--json")
    assert r.returncode == 0, r.stderr
    fid = json.loads(r.stdout)["id"]
    r = run_brain("recall", "--entity", "companies/acme", "--json")
    assert r.returncode == 0
    assert [f["fact_id"] for f in json.loads(r.stdout)["facts"]] == [fid]
    # the CLI lane is trusted-local: it sees its own private facts
    run_brain("remember", "Acme's private plan", "-p", "cli", "-e", "companies/acme", "--visibility", "private")
    r = run_brain("recall", "--entity", "companies/acme", "--json")
    assert {f["visibility"] for f in json.loads(r.stdout)["facts"]} == {"world", "private"}
    # and it went through the daemon: the same daemon is still the only writer
    assert read_pid_file(places, daemon["vault"])["pid"] == daemon["pid"]
    r = run_brain("call", "whoami")
    assert json.loads(r.stdout)["transport"] == "socket" and json.loads(r.stdout)["lane"] == "local"


def test_daemon_watches_the_vault(daemon, places):
    """A note saved while the daemon runs becomes searchable without a restart."""
    (daemon["vault"] / "notes").mkdir(exist_ok=True)
    (daemon["vault"] / "notes" / "zeppelin.md").write_text("# Zeppelin plans\n\nThe quokkazeppelin launch.\n")
    deadline = time.monotonic() + 15
    slugs = []
    while time.monotonic() < deadline:
        body, is_error = send(places, daemon["vault"], "recall", {"query": "quokkazeppelin"})
        assert not is_error
        slugs = [r["slug"] for r in body.get("results", [])]
        if "notes/zeppelin" in slugs:
            break
        time.sleep(0.2)
    assert "notes/zeppelin" in slugs


def test_a_non_daemon_writer_makes_the_spawn_fail_with_its_name(places, configured, reaper):
    """While `brain serve --no-daemon` owns the vault, a client gets a clear error, fast."""
    from brain.daemon.client.spawn import DaemonStartError
    from brain.daemon.vault_lock import VaultLock

    lock = VaultLock(configured)
    lock.acquire("serve --no-daemon")
    try:
        with pytest.raises(DaemonStartError) as err:
            send(places, configured, "whoami", {})
        # the daemon's own reason, not a generic "no daemon answered"
        assert "serve --no-daemon" in str(err.value) and f"pid {os.getpid()}" in str(err.value)
    finally:
        lock.release()


def test_sigterm_right_after_start_exits_cleanly(places, configured, reaper):
    """A stop during the warm-up (index attach) is an orderly exit, not a crash."""
    import sys

    from brain.daemon.client.spawn import wait_for_socket

    proc = subprocess.Popen([sys.executable, "-m", "brain.daemon.server", "--vault", str(configured)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=child_env())
    try:
        wait_for_socket(places, configured, proc).close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stderr.close()
    assert not places.socket_path(configured).exists()
