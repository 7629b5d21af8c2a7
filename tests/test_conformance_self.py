"""brain certifies itself: `brain protocol conformance` against our own server,
over stdio (the default self target) and over Streamable HTTP with a token."""

import functools
import json
import socket
import subprocess
import sys
import time

import anyio
import pytest

from brain.daemon.conformance.runner import certify, connect_http, load_cases
from daemon_fixtures import BRAIN, child_env, configured, reaper, small_vault, stop_pid  # noqa: F401

SYNTH = "synthesize answers or says unavailable with a fix"


def expected_tally() -> tuple[int, int]:
    """(passed, skipped) against our full surface without --synthesize: all but one case pass."""
    return len(load_cases()) + 10 - 1, 1


def test_self_certifies_over_stdio():
    proc = subprocess.run([sys.executable, "-m", "brain.cli.entry", "protocol", "conformance", "--json"],
                          capture_output=True, text=True, timeout=240, env=child_env())
    report = json.loads(proc.stdout)
    failures = [f"{r['name']}: {r['detail']}" for r in report["results"] if r["status"] == "fail"]
    assert failures == [] and proc.returncode == 0, proc.stderr[-2000:]
    assert [r["name"] for r in report["results"] if r["status"] == "skip"] == [SYNTH]
    assert (report["passed"], report["skipped"]) == expected_tally()


def test_self_certifies_with_synthesize_as_a_clean_unavailable():
    proc = subprocess.run([sys.executable, "-m", "brain.cli.entry", "protocol", "conformance", "--synthesize"],
                          capture_output=True, text=True, timeout=240, env=child_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "MEMORY_VERBS v1 conformance — target: self (stdio)"
    assert f"  ✓ {SYNTH}" in lines
    assert lines[-2] == f"{len(load_cases()) + 10} passed, 0 failed, 0 skipped" and lines[-1] == "CONFORMANT"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"brain serve --http exited: {proc.stderr.read()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"brain serve --http did not listen on {port} within {timeout}s")


@pytest.fixture
def http_server(places, configured, reaper):  # noqa: F811
    from brain.daemon.http.tokens import create_token

    token = create_token(places, "conformance", can_write=True)
    port = _free_port()
    proc = subprocess.Popen([BRAIN, "serve", "--http", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=child_env())
    try:
        _wait_for_port(port, proc)
        reaper()
        yield f"http://127.0.0.1:{port}/mcp", token
    finally:
        stop_pid(proc.pid)
        proc.wait(timeout=15)
        reaper()


def test_self_certifies_over_http(http_server):
    url, token = http_server
    report = anyio.run(functools.partial(certify, functools.partial(connect_http, url, token)))
    failures = [f"{r['name']}: {r['detail']}" for r in report["results"] if r["status"] == "fail"]
    assert failures == []
    assert [r["name"] for r in report["results"] if r["status"] == "skip"] == [SYNTH]
    assert (report["passed"], report["skipped"]) == expected_tally()


def test_http_without_a_token_is_not_conformant(http_server):
    url, _ = http_server
    report = anyio.run(functools.partial(certify, functools.partial(connect_http, url, None)))
    assert report["ok"] is False
    assert report["results"][0]["name"] == "connect" and report["passed"] == 0
    assert "HTTP 401" in report["results"][0]["detail"] and "--token" in report["results"][0]["detail"]
