"""Exactly-once remember: a retried call never writes a second fact
(docs/protocol.md §3.2, "Retries")."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time

import pytest

from conftest import call, facts_log_lines
from daemon_fixtures import (  # noqa: F401  (fixtures)
    INIT, INITIALIZED, call_text, configured, daemon, raw_connect, read_until_id, reaper, send_lines,
    small_vault, tool_call,
)

from brain.daemon.protocol.caller import IDEMPOTENCY_META, Caller
from test_transport_http import http_url, tokens  # noqa: F401  (fixtures)

pytestmark = pytest.mark.usefixtures("reaper")

REMOTE = {"surface": "full", "lane": "remote", "client": "t"}


def _keyed(rid, args: dict, key) -> dict:
    msg = tool_call(rid, "remember", args)
    msg["params"]["_meta"] = {IDEMPOTENCY_META: key}
    return msg


def _log_facts(vault) -> list[str]:
    lines = [json.loads(x) for x in facts_log_lines(vault) if x.strip()]
    return [r["fact"] for r in lines if r.get("op") == "insert"]


def test_a_key_answers_once_per_caller(engine, remote):
    args = {"fact": "The office closes at six", "provenance": "t"}
    first, err = call(engine, "remember", args, remote.for_call({IDEMPOTENCY_META: "k1"}))
    assert not err and first["status"] == "inserted"
    again, err = call(engine, "remember", args, remote.for_call({IDEMPOTENCY_META: "k1"}))
    assert not err and again == first
    # another client counting its calls the same way gets its own fact
    other = Caller(remote=True, client_id="other-token", transport="http")
    theirs, err = call(engine, "remember", args, other.for_call({IDEMPOTENCY_META: "k1"}))
    assert not err and theirs["id"] != first["id"]
    # without a key the protocol's rule stands: no entity, never deduplicated
    plain, err = call(engine, "remember", args, remote)
    assert not err and plain["status"] == "inserted" and plain["id"] not in (first["id"], theirs["id"])


def test_a_key_reused_for_another_fact_or_malformed_is_invalid_params(engine, remote):
    call(engine, "remember", {"fact": "Tea at four", "provenance": "t"}, remote.for_call({IDEMPOTENCY_META: "k"}))
    body, err = call(engine, "remember", {"fact": "Coffee at five", "provenance": "t"},
                     remote.for_call({IDEMPOTENCY_META: "k"}))
    assert err and body["error"] == "invalid_params" and "different fact" in body["message"]
    for bad in (5, "", "x" * 201, {"a": 1}):
        body, err = call(engine, "remember", {"fact": "Lunch at one", "provenance": "t"},
                         remote.for_call({IDEMPOTENCY_META: bad}))
        assert err and body["error"] == "invalid_params" and IDEMPOTENCY_META in body["message"], bad


def test_a_key_survives_a_daemon_kill(daemon, places, reaper):
    """The key lives in the log: a retry that crosses a kill -9 finds the fact."""
    from brain.daemon.client.spawn import connect_or_start

    args = {"fact": "Parking is on level two", "provenance": "t"}
    s = raw_connect(daemon["socket"], REMOTE)
    send_lines(s, INIT, INITIALIZED, _keyed(2, args, "retry-1"))
    first = call_text(read_until_id(s, 2))
    s.close()
    os.kill(daemon["pid"], signal.SIGKILL)
    time.sleep(0.2)
    connect_or_start(places, daemon["vault"])[0].close()
    reaper()
    s = raw_connect(daemon["socket"], REMOTE)
    send_lines(s, INIT, INITIALIZED, _keyed(2, args, "retry-1"))
    again = call_text(read_until_id(s, 2))
    s.close()
    assert again["id"] == first["id"] and again["status"] == "inserted"
    assert _log_facts(daemon["vault"]).count(args["fact"]) == 1


class _AnswerEater:
    """Between the relay and a real daemon: passes every line on, but when the
    daemon's answer to request `eat` arrives, kills the daemon (kill -9) and
    cuts the relay off, so the call ran and its answer is lost."""

    def __init__(self, daemon_sock: socket.socket, pid: int, eat):
        self.near, relay_end = socket.socketpair()
        self.relay_end = relay_end
        self.far, self.pid, self.eat = daemon_sock, pid, eat
        threading.Thread(target=self._up, daemon=True).start()
        threading.Thread(target=self._down, daemon=True).start()

    def _up(self):
        try:
            while data := self.near.recv(1 << 16):
                self.far.sendall(data)
        except OSError:
            pass

    def _down(self):
        buf = b""
        try:
            while data := self.far.recv(1 << 16):
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if json.loads(line).get("id") == self.eat:
                        os.kill(self.pid, signal.SIGKILL)
                        break
                    self.near.sendall(line + b"\n")
                else:
                    continue
                break
        except OSError:
            pass
        self.near.shutdown(socket.SHUT_RDWR)  # wakes our own reader too, which close() alone would not
        self.near.close()


def test_a_relay_retry_of_a_saved_remember_writes_one_fact(daemon, places, reaper):
    from brain.daemon.client.relay import Relay
    from brain.daemon.client.spawn import connect_or_start

    vault = daemon["vault"]
    opened = []

    def connect():
        sock, restarted = connect_or_start(places, vault)
        if not opened:  # the first connection loses the answer to request 7
            opened.append(_AnswerEater(sock, daemon["pid"], 7))
            return opened[0].relay_end, restarted
        opened.append(sock)
        return sock, restarted

    host_in_r, host_in_w = os.pipe()
    host_out_r, host_out_w = os.pipe()
    relay = Relay(connect, "full", stdin=os.fdopen(host_in_r, "rb"), stdout=os.fdopen(host_out_w, "wb"),
                  reconnect_window_s=30.0)
    runner = threading.Thread(target=relay.run, daemon=True)
    runner.start()
    to_relay = os.fdopen(host_in_w, "wb")
    from_relay = os.fdopen(host_out_r, "rb")

    def send(msg):
        to_relay.write(json.dumps(msg).encode() + b"\n")
        to_relay.flush()

    def answer(rid):
        while True:
            msg = json.loads(from_relay.readline())
            if msg.get("id") == rid:
                return msg

    send(INIT)
    assert "result" in answer(1)
    send(INITIALIZED)
    args = {"fact": "The spare key is under the blue pot", "provenance": "chat"}
    send(tool_call(7, "remember", args))
    lost = answer(7)
    assert lost["error"]["data"]["retry"] is True
    assert _log_facts(vault).count(args["fact"]) == 1  # it ran before the daemon died
    send(tool_call(8, "remember", args))  # the host retries, as it was told
    retried = call_text(answer(8))
    reaper()
    assert retried["status"] == "inserted"
    assert _log_facts(vault).count(args["fact"]) == 1
    # a new call with the same words is a new call: the protocol never dedups facts without an entity
    send(tool_call(9, "remember", args))
    assert call_text(answer(9))["id"] != retried["id"]
    to_relay.close()
    runner.join(10)


def test_the_http_front_end_passes_the_key_to_the_daemon(http_url, tokens, daemon):
    from brain.daemon.client.remote import HttpMcp

    client = HttpMcp(http_url, tokens["writer"])
    client.initialize()
    params = {"name": "remember", "arguments": {"fact": "The gate code is 4711", "provenance": "t"},
              "_meta": {IDEMPOTENCY_META: "http-1"}}
    first = call_text(client._request("tools/call", params))
    again = call_text(client._request("tools/call", params))
    client.close()
    assert again["id"] == first["id"]
    assert _log_facts(daemon["vault"]).count("The gate code is 4711") == 1


def test_only_a_retry_of_an_unanswered_call_reuses_its_key():
    from brain.daemon.client.call_keys import CallKeys

    keys = CallKeys()
    args = {"fact": "The lease ends in May", "provenance": "t"}

    def key_of(msg):
        return msg["params"]["_meta"][IDEMPOTENCY_META]

    first = tool_call(1, "remember", dict(args))
    assert keys.stamp(first)
    keys.answered(1)
    second = tool_call(2, "remember", dict(args))
    keys.stamp(second)
    assert key_of(second) != key_of(first)  # answered: the same words again are a new call
    keys.unanswered(2)
    retry = tool_call(3, "remember", dict(args))
    keys.stamp(retry)
    assert key_of(retry) == key_of(second)  # unanswered: the host's retry is that call
    keys.unanswered(3)
    other = tool_call(4, "remember", {**args, "fact": "The lease ends in June"})
    keys.stamp(other)
    assert key_of(other) not in (key_of(first), key_of(second))
    # a host's own key is kept; other tools carry none
    own = _keyed(5, args, "host-key")
    keys.stamp(own)
    assert key_of(own) == "host-key"
    assert not keys.stamp(tool_call(6, "recall", {"query": "lease"}))
