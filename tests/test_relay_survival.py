"""`brain serve` never exits while its MCP host is connected: daemon kills, a
daemon that cannot start for a while, calls in flight during a crash."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import threading
import time

import pytest

from daemon_fixtures import (  # noqa: F401  (fixtures)
    BRAIN, INIT, INITIALIZED, call_text, child_env, configured, daemon, reaper, small_vault, tool_call,
)

pytestmark = pytest.mark.usefixtures("reaper")


class Host:
    """An MCP host at the far end of a `brain serve` process's stdio."""

    def __init__(self):
        self.proc = subprocess.Popen([BRAIN, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=child_env())
        self.early: dict = {}
        self.buf = b""
        self.send(INIT, INITIALIZED)
        assert "result" in self.read(1)

    def send(self, *msgs) -> None:
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))
        self.proc.stdin.flush()

    def read(self, want, timeout: float = 60.0) -> dict:
        # raw reads: select() cannot see lines a buffered reader already holds
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while want not in self.early:
            while b"\n" in self.buf:
                line, _, rest = self.buf.partition(b"\n")
                self.buf = rest
                msg = json.loads(line)
                self.early[msg.get("id")] = msg
            if want in self.early:
                break
            left = deadline - time.monotonic()
            assert left > 0, f"no answer for {want!r}"
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            assert chunk, f"the relay exited (rc={self.proc.wait()}): {self.proc.stderr.read().decode()[-2000:]}"
            self.buf += chunk
        return self.early.pop(want)

    def close(self) -> str:
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=15)
        err = self.proc.stderr.read().decode()
        self.proc.stdout.close()
        self.proc.stderr.close()
        assert rc == 0, err
        return err


def _daemon_pid(places, vault) -> int:
    from brain.daemon.rendezvous import read_pid_file

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        info = read_pid_file(places, vault)
        if info and isinstance(info.get("pid"), int):
            return info["pid"]
        time.sleep(0.05)
    raise AssertionError("no daemon pid file")


def test_calls_in_flight_during_kills_are_answered_and_the_relay_serves_on(daemon, places, reaper):
    host = Host()
    rid = 100
    for _round in range(3):
        pid = _daemon_pid(places, daemon["vault"])
        ids = list(range(rid, rid + 20))
        rid += 20
        host.send(*(tool_call(i, "recall", {"limit": 5}) for i in ids))
        os.kill(pid, signal.SIGKILL)
        for i in ids:
            msg = host.read(i)
            if "error" in msg:
                assert msg["error"]["data"]["retry"] is True and "retry" in msg["error"]["message"]
            else:
                assert call_text(msg)["protocol_version"] == 1
        reaper()
        # the host does not initialize again: the relay replayed the handshake
        host.send(tool_call(rid, "whoami", {}))
        assert call_text(host.read(rid))["transport"] == "stdio"
        rid += 1
        reaper()
    err = host.close()
    assert "reconnected" in err


def test_a_daemon_that_cannot_start_for_a_while_does_not_end_the_relay(daemon, places, reaper):
    host = Host()
    vault = daemon["vault"]
    away = vault.with_name("v-away")
    os.kill(daemon["pid"], signal.SIGKILL)
    time.sleep(0.2)
    vault.rename(away)
    threading.Timer(2.0, away.rename, (vault,)).start()
    host.send(tool_call(2, "remember", {"fact": "written after the vault came back", "provenance": "t"}))
    assert call_text(host.read(2))["status"] == "inserted"
    reaper()
    host.send(tool_call(3, "recall", {"grep": "came back"}))
    assert len(call_text(host.read(3))["facts"]) == 1
    host.close()
