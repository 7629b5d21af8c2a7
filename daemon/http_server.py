"""`brain serve --http`: Streamable HTTP MCP in front of the daemon.

Design: this process speaks HTTP and MCP (the SDK's Streamable HTTP
transport under uvicorn) but never opens the engine. Every tools/call is
forwarded over the daemon's Unix socket, announcing the caller as remote with
the token's name (its delta-cursor namespace) and, for read-only tokens, a
read-only claim the daemon honours (`scope_denied` on writes). So the
daemon stays the vault's one writer; the HTTP front end can start, stop and
crash on its own; and a daemon that dies is restarted by the next call, as
for every other client. tools/list is answered here from the same tool
definitions the daemon uses.

Every request needs `Authorization: Bearer <token>` (`brain auth token
create NAME [--write]`); without a valid one it is answered 401 before any
MCP handling. DNS-rebinding protection is on: Host and Origin must be
loopback names, plus the bind address when it is not a loopback one.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from .auth import Token, TokenChecker
from .protocol import Caller, Unavailable

log = logging.getLogger("brain.http")

MCP_PATH = "/mcp"
SCOPE_KEY = "brain.token"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


class BearerGate:
    """ASGI wrapper: a valid bearer token or a 401, before MCP sees anything."""

    def __init__(self, app, checker: TokenChecker):
        self.app = app
        self.checker = checker

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        token = None
        for k, v in scope.get("headers") or []:
            if k == b"authorization":
                kind, _, value = v.decode("latin-1").partition(" ")
                if kind.lower() == "bearer":
                    token = value.strip()
                break
        found = self.checker.check(token)
        if found is None:
            body = json.dumps({
                "error": "unauthorized",
                "message": "a valid bearer token is required" if token else "missing bearer token",
                "suggestion": "Create one with `brain auth token create NAME` and send "
                              "`Authorization: Bearer <token>` on every request.",
            }).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="brain"'),
                (b"content-length", str(len(body)).encode()),
            ]})
            await send({"type": "http.response.body", "body": body})
            return
        scope[SCOPE_KEY] = found
        return await self.app(scope, receive, send)


def caller_for_request(ctx, surface: str) -> Caller:
    """The remote Caller of one HTTP request; fail closed when the token is missing."""
    req = getattr(ctx, "request", None)
    tok: Token | None = req.scope.get(SCOPE_KEY) if req is not None else None
    session = req.headers.get("mcp-session-id") if req is not None else None
    if tok is None:
        return Caller(remote=True, client_id="remote", transport="http", surface=surface, can_write=False)
    return Caller(remote=True, client_id=tok.name, transport="http", surface=surface, can_write=tok.can_write,
                  session=session)


def daemon_call(places, vault: Path):
    """A blocking call function that forwards each call to the vault's daemon,
    on one connection per HTTP session (see daemon_link)."""
    from .client import DaemonCallError
    from .daemon_link import DaemonLinks
    from .spawn import DaemonStartError, connect_or_start

    links = DaemonLinks(lambda: connect_or_start(places, vault)[0])

    def run_call(name: str, arguments, caller: Caller) -> tuple[dict, bool]:
        preamble = {"surface": caller.surface, "lane": "remote", "client": "brain-http",
                    "transport": "http", "client_id": caller.client_id, "read_only": not caller.can_write}
        try:
            return links.call(caller.session, preamble, name, arguments)
        except (DaemonCallError, DaemonStartError, OSError) as e:
            log.warning("call %s failed to reach the daemon: %s", name, e)
            return Unavailable(
                "the brain daemon could not answer this call.",
                "Retry; if it keeps failing, run `brain doctor` on the server machine.",
                detail=str(e).splitlines()[0] if str(e) else None,
            ).envelope(), True

    run_call.links = links
    return run_call


def _interface_addresses() -> list[str]:
    """Every interface's address (Linux: ioctl for IPv4, /proc for IPv6); [] where unsupported."""
    import socket

    found: list[str] = []
    try:
        import fcntl
        import struct

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for _i, name in socket.if_nameindex():
                try:
                    raw = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))  # SIOCGIFADDR
                except OSError:
                    continue  # no IPv4 address on this interface
                found.append(socket.inet_ntoa(raw[20:24]))
    except (ImportError, OSError, AttributeError):
        pass
    try:
        with open("/proc/net/if_inet6") as f:
            for line in f:
                hexaddr = line.split()[0]
                found.append(socket.inet_ntop(socket.AF_INET6, bytes.fromhex(hexaddr)))
    except (OSError, ValueError, IndexError):
        pass
    return found


def this_machines_names() -> list[str]:
    """Names and addresses remote agents may use for this machine (for a wildcard bind)."""
    import socket

    found: list[str] = []
    host = socket.gethostname()
    for name in (host, socket.getfqdn()):
        if name and name not in found and name not in LOOPBACK:
            found.append(name)
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        infos = []
    addrs = [info[4][0] for info in infos] + _interface_addresses()
    # the address of the route out (no packet is sent by a UDP connect)
    for family, probe in ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1")):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect((probe, 9))
                addrs.append(s.getsockname()[0])
        except OSError:
            pass
    for a in addrs:
        name = f"[{a}]" if ":" in a else a
        if name not in found and name not in LOOPBACK:
            found.append(name)
    return found


def security_settings(host: str):
    from mcp.server.transport_security import TransportSecuritySettings

    names = list(LOOPBACK)
    bare = host.strip("[]")
    if bare in ("0.0.0.0", "::"):
        # bound for remote agents: they name this machine; other names are still
        # refused (DNS rebinding), and every request still needs a token
        names += this_machines_names()
    elif host not in LOOPBACK:
        names.append(f"[{bare}]" if ":" in bare else bare)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:*" for n in names] + names,
        allowed_origins=[f"http://{n}:*" for n in names] + [f"https://{n}:*" for n in names],
    )


def build_app(places, vault: Path, surface: str, host: str, call=None):
    """The ASGI app: bearer gate → SDK Streamable HTTP → forwarding server."""
    from .mcp_server import build_server

    server = build_server(call or daemon_call(places, vault), lambda ctx: caller_for_request(ctx, surface))
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, host=host, transport_security=security_settings(host),
    )
    return BearerGate(app, TokenChecker(places))


def run_http(places, vault: Path, cfg: dict, *, surface: str, host: str, port: int) -> int:
    """Serve until SIGINT/SIGTERM; returns the exit code."""
    import socket

    import uvicorn

    from .auth import TokenError, list_tokens
    from .spawn import DaemonStartError, connect_or_start

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="brain serve --http: %(levelname)s %(name)s: %(message)s")
    try:
        tokens = list_tokens(places)
    except TokenError as e:
        print(f"error: {e}.", file=sys.stderr)
        print("fix: repair that file, or delete it and create the tokens again "
              "(`brain auth token create NAME [--write]`).", file=sys.stderr)
        return 1
    if not tokens:
        print("brain serve --http: warning: no tokens exist yet, so every request will get 401. "
              "Create one with `brain auth token create NAME [--write]`.", file=sys.stderr)
    try:
        s, _ = connect_or_start(places, vault)
        s.close()
    except DaemonStartError as e:
        print(f"brain serve --http: {e}", file=sys.stderr)
        return 1
    # bind first, so a busy port is a clear message rather than a traceback
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as e:
        import errno

        sock.close()
        print(f"error: cannot listen on {host}:{port}: {e.strerror or e}.", file=sys.stderr)
        if e.errno in (errno.EADDRINUSE, errno.EACCES):
            print("fix: pass another --port, or stop the process using it.", file=sys.stderr)
        else:  # an address this machine does not have, or a name that does not resolve
            print("fix: pass --host with an address of this machine (127.0.0.1 for local agents, "
                  "0.0.0.0 for every interface).", file=sys.stderr)
        return 1
    sock.listen(128)  # accept from here on: the address printed below already works
    bound_port = sock.getsockname()[1]
    app = build_app(places, vault, surface, host)
    print(f"brain serve --http: MCP on http://{host}:{bound_port}{MCP_PATH} (surface {surface}); "
          "every request needs a bearer token.", file=sys.stderr, flush=True)
    if host.strip("[]") in ("0.0.0.0", "::"):
        names = ", ".join(n for n in security_settings(host).allowed_hosts if not n.endswith(":*"))
        print(f"brain serve --http: requests must name this machine as one of: {names} (others get 421; "
              "to be reached by another name, pass it as --host).", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])
    return 0
