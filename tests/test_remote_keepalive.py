"""The remote-brain client (daemon/client/remote.py) keeps its connections alive: against a real
`brain serve --http` on loopback, with a TCP forwarder in front that counts the connections the
client opens and drops or cuts them as a server would (tests/tcp_forwarder.py)."""

from __future__ import annotations

import errno
import json
import os
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from daemon_fixtures import configured, daemon, reaper, small_vault  # noqa: F401  (fixtures)
from tcp_forwarder import Forwarder
from test_connect import client, client_home, server  # noqa: F401  (fixtures)

from brain.daemon.client.remote import HttpMcp, RemoteError, _Pool
from brain.daemon.protocol.version import MCP_PROTOCOL_VERSION
from brain.daemon.http.limits import KEEP_ALIVE_S

pytestmark = pytest.mark.usefixtures("reaper")

ENTITY = "people/alice-example"


@pytest.fixture
def fwd(server):
    url, token = server
    f = Forwarder(url)
    yield f, token
    f.close()


def _recall(c: HttpMcp) -> dict:
    body, is_error = c.send("recall", {"entity": ENTITY})
    assert not is_error and "facts" in body, body
    return body


def _gone(url: str) -> str:
    refused = os.strerror(errno.ECONNREFUSED)
    return (f"cannot reach {url} ([Errno {errno.ECONNREFUSED}] {refused}); fix: check the URL and that "
            "`brain serve --http` runs there")


def test_a_remote_recall_opens_one_connection_and_close_ends_the_session(fwd, server):
    f, token = fwd
    c = HttpMcp(f.url, token, timeout_s=30)
    for _ in range(3):  # initialize, initialized, three tools/call
        _recall(c)
    session = c.session
    c.close()  # DELETE, then the kept connection is closed
    assert f.accepted == 1
    assert f.open_count() == 0
    later = HttpMcp(server[0], token)
    later.session, later.protocol = session, MCP_PROTOCOL_VERSION
    with pytest.raises(RemoteError) as e:
        later.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "recall", "arguments": {"entity": ENTITY}}})
    assert e.value.status == 404  # the DELETE went out on the kept connection


def test_the_cli_recall_remote_opens_one_connection(fwd, client_home):
    f, token = fwd
    assert client(client_home, "connect", f.url, "--token", token, "--name", "lab").returncode == 0
    before = f.accepted
    got = client(client_home, "recall", "--entity", ENTITY, "--remote", "lab", "--json")
    assert got.returncode == 0, got.stderr
    assert "facts" in json.loads(got.stdout)
    assert f.accepted - before == 1


def test_parallel_calls_each_get_their_own_answer_and_the_pool_stays_capped(fwd):
    f, token = fwd
    c = HttpMcp(f.url, token, timeout_s=30)
    c.initialize()
    threads, rounds = 8, 3
    answers: dict[str, list] = {}
    start = threading.Barrier(threads)

    def call(i: int, r: int) -> None:
        start.wait()
        rid = f"t{r}-{i}"
        answers[rid] = c.post({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                               "params": {"name": "recall", "arguments": {"query": f"alice {i}"}}})

    for r in range(rounds):
        running = [threading.Thread(target=call, args=(i, r)) for i in range(threads)]
        for t in running:
            t.start()
        for t in running:
            t.join(60)
        assert len(c._pool._idle) <= _Pool.MAX_IDLE
    assert len(answers) == threads * rounds
    for rid, got in answers.items():
        assert [m["id"] for m in got] == [rid] and "result" in got[0]
    # parallel requests took connections of their own, and kept ones served later rounds
    assert 2 <= f.accepted < threads * rounds
    c.close()
    assert f.open_count() == 0


def test_a_connection_the_server_dropped_while_idle_is_not_used(fwd):
    f, token = fwd
    c = HttpMcp(f.url, token, timeout_s=30)
    _recall(c)
    f.drop_all()
    time.sleep(0.2)  # the close reaches the client
    _recall(c)
    assert (f.accepted, f.cuts) == (2, 0)
    c.close()


def test_a_request_cut_as_it_is_sent_on_a_kept_connection_is_sent_again_once(fwd):
    f, token = fwd
    c = HttpMcp(f.url, token, timeout_s=30)
    _recall(c)
    f.cut()  # the server closes the kept connection as the next request arrives
    body, is_error = c.send("remember", {"fact": "Alice sails on Sundays", "provenance": "t", "entity": ENTITY})
    assert not is_error and body["status"] == "inserted"
    assert (f.cuts, f.accepted) == (1, 2)
    assert [x["fact"] for x in _recall(c)["facts"]].count("Alice sails on Sundays") == 1

    # a failure on the fresh connection too is reported, after one retry only
    f.cut(2, fresh_too=True)
    with pytest.raises(RemoteError) as e:
        _recall(c)
    assert str(e.value) == (f"cannot reach {f.url} (Remote end closed connection without response); fix: check "
                            "the URL and that `brain serve --http` runs there")
    assert f.cuts == 3 and f.accepted == 3
    _recall(c)
    c.close()


def test_a_connection_idle_past_the_reuse_limit_is_closed_not_used(fwd):
    f, token = fwd
    # the limit sits well under the server's keep-alive timeout (daemon/http/limits.py)
    assert _Pool.REUSE_IDLE_S <= KEEP_ALIVE_S - 1
    c = HttpMcp(f.url, token, timeout_s=30)
    c._pool.max_idle_s = 0.2
    _recall(c)
    time.sleep(0.3)
    _recall(c)
    assert (f.accepted, f.cuts) == (2, 0)
    assert f.open_count() == 1  # the stale one was closed
    c.close()


def test_the_servers_own_idle_timeout_costs_nothing_but_a_new_connection(fwd):
    f, token = fwd
    c = HttpMcp(f.url, token, timeout_s=30)
    c._pool.max_idle_s = 60  # would reuse it: the server's close must be noticed
    _recall(c)
    time.sleep(KEEP_ALIVE_S + 1)  # uvicorn closes the silent connection
    assert f.open_count() == 0
    _recall(c)
    assert f.accepted == 2
    c.close()


def test_a_server_that_is_gone_gives_the_same_error_as_before(fwd):
    f, token = fwd
    c = HttpMcp(f.url, token, timeout_s=30)
    _recall(c)
    f.close()  # stops listening and drops the kept connection
    with pytest.raises(RemoteError) as e:
        _recall(c)
    assert str(e.value) == _gone(f.url) and e.value.status is None
    with pytest.raises(RemoteError) as e:
        _recall(HttpMcp(f.url, token, timeout_s=30))
    assert str(e.value) == _gone(f.url)


def test_https_keeps_one_connection_and_checks_the_certificate_as_urllib_does(server, tmp_path, monkeypatch):
    url, token = server
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    front = Forwarder(url, tls=tls)  # an https front end to the plain server
    try:
        monkeypatch.delenv("SSL_CERT_FILE", raising=False)
        with pytest.raises(urllib.error.URLError) as by_urllib:
            urllib.request.urlopen(front.url, timeout=30)
        with pytest.raises(RemoteError) as e:  # a certificate nobody vouches for
            _recall(HttpMcp(front.url, token, timeout_s=30))
        assert str(e.value).startswith(f"cannot reach {front.url} ({by_urllib.value.reason}); fix:")
        assert "CERTIFICATE_VERIFY_FAILED" in str(e.value)

        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # now the system's CA file vouches for it
        before = front.accepted
        c = HttpMcp(front.url, token, timeout_s=30)
        for _ in range(3):
            _recall(c)
        c.close()
        assert front.accepted - before == 1
    finally:
        front.close()


@pytest.fixture
def proxy_env(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def test_behind_a_proxy_every_message_goes_through_urllib(server, proxy_env):
    url, token = server
    proxy = Forwarder(url, proxy=True)
    try:
        proxy_env.setenv("http_proxy", f"http://127.0.0.1:{proxy.port}")
        c = HttpMcp(url, token, timeout_s=30)
        _recall(c)
        c.close()
        # urllib's way through a proxy: the whole URL on the request line, one connection each
        assert proxy.request_lines == [f"POST {url} HTTP/1.1".encode()] * 3 + [f"DELETE {url} HTTP/1.1".encode()]
        assert proxy.accepted == 4
    finally:
        proxy.close()

    with socket.create_server(("127.0.0.1", 0)) as s:
        nobody = s.getsockname()[1]
    proxy_env.setenv("http_proxy", f"http://127.0.0.1:{nobody}")
    with pytest.raises(RemoteError) as e:  # the server is up: the error is the proxy's
        _recall(HttpMcp(url, token, timeout_s=30))
    assert str(e.value) == _gone(url)

    proxy_env.setenv("no_proxy", "127.0.0.1")  # the proxy does not apply: straight there, kept alive
    c = HttpMcp(url, token, timeout_s=30)
    _recall(c)
    assert c._pool is not None and len(c._pool._idle) == 1
    c.close()
