"""The CLI's lean client: one tool call over the daemon's socket.

Standard library only — no MCP SDK, typer, numpy or torch — so `brain
recall` costs a Python start-up plus one round trip. It sends the local-lane
preamble (the daemon grants it only to a peer with our uid), the MCP
handshake and the call, all in one write, and reads until the call's answer.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..protocol.version import MCP_PROTOCOL_VERSION
from ..rendezvous import IDENTITY_KEY
from .probe import try_connect, vault_identity
from .spawn import connect_or_start

CALL_ID = 2


class DaemonCallError(RuntimeError):
    pass


def json_line(msg) -> bytes:
    """One newline-framed JSON message, as the daemon's socket reads them."""
    return json.dumps(msg, ensure_ascii=False).encode() + b"\n"


def _request_bytes(verb: str, args, preamble: dict) -> bytes:
    client = preamble.get("client", "brain")
    lines = [
        preamble,
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": MCP_PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": client, "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call", "params": {"name": verb, "arguments": args}},
    ]
    return b"".join(json_line(m) for m in lines)


def _read_answer(sock) -> dict:
    buf = bytearray()
    while True:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise DaemonCallError(
                "the daemon closed the connection before answering (it may have stopped or crashed).\n"
                "fix: run the command again (a new daemon starts by itself); if it keeps failing, "
                "see `brain daemon logs`.")
        buf += chunk
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                break
            line = bytes(buf[:nl])
            del buf[: nl + 1]
            if not line.strip():
                continue
            msg = json.loads(line)
            if IDENTITY_KEY in msg:  # the daemon saying it serves our vault
                continue
            # the call's answer, or a refusal of the preamble (no id) or of the handshake (id 1)
            if msg.get("id") == CALL_ID or ("error" in msg and msg.get("id") in (None, 1)):
                return msg


class _NotSent(ConnectionError):
    """The daemon closed the connection before our request was written: nothing ran."""


def _send_once(sock, verb: str, args, preamble: dict) -> dict:
    try:
        try:
            sock.sendall(_request_bytes(verb, args, preamble))
        except (BrokenPipeError, ConnectionResetError) as e:
            raise _NotSent(str(e)) from e
        return _read_answer(sock)
    finally:
        sock.close()


def _send_fresh(places, vault: Path, verb: str, args, preamble: dict, attempts: int = 3) -> dict:
    """`_send_once` on a daemon that proved it serves `vault`; a daemon that was
    stopping when we connected (its folder was replaced) closes before reading,
    and the call, never sent, is tried again on its successor."""
    import time

    for attempt in range(attempts):
        try:
            return _send_once(connect_or_start(places, vault)[0], verb, args, preamble)
        except _NotSent:
            if attempt == attempts - 1:
                raise
            time.sleep(0.2 * (attempt + 1))
    raise AssertionError("unreachable")


def _wrong_vault(msg: dict) -> bool:
    data = (msg.get("error") or {}).get("data") if isinstance(msg.get("error"), dict) else None
    return isinstance(data, dict) and IDENTITY_KEY in data


def send(places, vault: Path, verb: str, args: dict, *,
                client: str = "brain-cli") -> tuple[dict, bool]:
    """Run one tool call through the vault's daemon as the trusted local lane.

    Starts the daemon when none runs. Returns (body, is_error) exactly as
    `dispatch.dispatch` would in-process.
    """
    return send_with_preamble(places, vault, verb, args, {"surface": "full", "lane": "local", "client": client})


def send_with_preamble(places, vault: Path, verb: str, args, preamble: dict) -> tuple[dict, bool]:
    """One tools/call on a fresh connection that opens with `preamble`.

    The preamble names the vault folder, so a daemon serving another folder
    refuses before the call runs (docs/architecture.md, "The vault folder").
    """
    ident = vault_identity(vault)
    if ident is not None:  # a vanished folder: the daemon says so itself
        preamble = {**preamble, "vault": ident}
    msg = _send_once(connect_or_start(places, vault, verify=False)[0], verb, args, preamble)
    if _wrong_vault(msg):
        # the daemon at our socket serves another folder (ours was replaced under
        # it) and refused before running anything: it is stopping, so a retry
        # that waits for it reaches a fresh daemon for this folder
        msg = _send_fresh(places, vault, verb, args, preamble)
    return answer_body(msg)


def send_if_running(places, vault: Path, verb: str, args: dict, *, timeout_s: float = 1.0,
                    client: str = "brain-complete") -> tuple[dict, bool] | None:
    """One local-lane call to the vault's daemon when one answers at its socket; None when
    none does, or it serves another folder. Never starts a daemon (shell completion: a
    keystroke must not spawn a process that indexes the vault)."""
    sock = try_connect(places.socket_path(Path(vault).expanduser().resolve()), timeout=timeout_s)
    if sock is None:
        return None
    sock.settimeout(timeout_s)
    preamble: dict[str, object] = {"surface": "full", "lane": "local", "client": client}
    ident = vault_identity(vault)
    if ident is not None:
        preamble["vault"] = ident
    try:
        msg = _send_once(sock, verb, args, preamble)
    except (OSError, ValueError, DaemonCallError):
        return None
    if _wrong_vault(msg) or "error" in msg:
        return None
    return answer_body(msg)


def answer_body(msg: dict) -> tuple[dict, bool]:
    """(body, is_error) of the daemon's JSON-RPC answer to a tools/call."""
    if "error" in msg:
        err = msg["error"] or {}
        raise DaemonCallError(f"the daemon refused the call: {err.get('message')} (JSON-RPC {err.get('code')})")
    result = msg.get("result") or {}
    texts = [c.get("text", "") for c in result.get("content") or [] if c.get("type") == "text"]
    try:
        body = json.loads("\n".join(texts))
    except ValueError as e:
        raise DaemonCallError(f"the daemon's answer is not JSON: {e}") from None
    return body, bool(result.get("isError"))
