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

Every request needs `Authorization: Bearer <credential>`: a bearer token
(`brain auth token create NAME [--write]`) or an OAuth access token (the
SDK's authorization server, wired in `build_app`; see oauth_provider);
without a valid one it is answered 401 before any MCP handling. Each answer
is one JSON body (no SSE stream per call). Each HTTP session keeps one
connection to the daemon (daemon_link), used from the event loop; each
request's surface is the narrowest of the server's and the client's row
(client_rows). DNS-rebinding protection is on: Host and Origin must be
loopback names, plus the bind address when it is not a loopback one.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from ..protocol.caller import IDEMPOTENCY_META, Caller
from ..protocol.errors import Unavailable
from ..stores.auth import AuthStore, AuthStoreError
from .auth_store import FileAuthStore

log = logging.getLogger("brain.http")

MCP_PATH = "/mcp"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def _explaining_auth(app) -> None:
    """Give the SDK's 401/403 on /mcp our message and fix next to the OAuth error (docs/protocol.md §11)."""
    from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware

    from .wire_check import CheckedBodies

    class ExplainingRequireAuth(RequireAuthMiddleware):
        async def _send_auth_error(self, send, status_code: int, error: str, description: str) -> None:
            www = f'Bearer error="{error}", error_description="{description}"'
            if self.resource_metadata_url:
                www += f', resource_metadata="{self.resource_metadata_url}"'
            body = json.dumps({
                "error": error, "error_description": description,
                "message": "a valid bearer token or OAuth access token is required",
                "suggestion": "Send `Authorization: Bearer <token>`: a token from `brain auth token create NAME` "
                              "on the server machine, or an OAuth access token (connect with an MCP client that "
                              "speaks OAuth; the vault's owner approves it with `brain auth approve CODE`).",
            }).encode()
            await send({"type": "http.response.start", "status": status_code, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", www.encode())]})
            await send({"type": "http.response.body", "body": body})

    for route in app.router.routes:
        gate = getattr(route, "app", None)
        if getattr(route, "path", None) == MCP_PATH and isinstance(gate, RequireAuthMiddleware):
            route.app = ExplainingRequireAuth(CheckedBodies(gate.app), gate.required_scopes, gate.resource_metadata_url)


def caller_for_request(ctx, ceiling: str) -> Caller:
    """The remote Caller of one HTTP request, its surface recomputed from the client's row
    on every request; fail closed when the credential is missing."""
    from .client_rows import OAUTH_PREFIX
    from .oauth_provider import BrainAccess
    from ..protocol.surfaces import effective_surface

    req = getattr(ctx, "request", None)
    user = req.scope.get("user") if req is not None else None
    access = getattr(user, "access_token", None)
    if not isinstance(access, BrainAccess):
        return Caller(remote=True, client_id="remote", transport="http", surface="verbs", can_write=False)
    client_id = access.name if access.kind == "token" else OAUTH_PREFIX + access.client_id
    return Caller(remote=True, client_id=client_id, transport="http",
                  surface=effective_surface(ceiling, access.surface), can_write="write" in access.scopes,
                  session=req.headers.get("mcp-session-id") if req is not None else None)


def daemon_sender(places, vault: Path):
    """An async call function that forwards each call to the vault's daemon,
    on one connection per HTTP session (see daemon_link)."""
    from ..client.calls import DaemonCallError
    from .daemon_link import DaemonLinks
    from ..client.spawn import DaemonStartError, connect_or_start

    links = DaemonLinks(lambda: connect_or_start(places, vault)[0])

    async def send_call(name: str, arguments, caller: Caller) -> tuple[dict, bool]:
        preamble = {"surface": caller.surface, "lane": "remote", "client": "brain-http",
                    "transport": "http", "client_id": caller.client_id, "read_only": not caller.can_write}
        try:
            # the idempotency key travels on, so a retried write runs once (docs/protocol.md §3.2)
            meta = {IDEMPOTENCY_META: caller.idempotency_key} if caller.idempotency_key is not None else None
            return await links.send(caller.session, preamble, name, arguments, meta)
        except (DaemonCallError, DaemonStartError, OSError) as e:
            log.warning("call %s failed to reach the daemon: %s", name, e)
            return Unavailable(
                "the brain daemon could not answer this call.",
                "Retry; if it keeps failing, run `brain doctor` on the server machine.",
                detail=str(e).splitlines()[0] if str(e) else None,
            ).envelope(), True

    return send_call


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
    addrs = [str(info[4][0]) for info in infos] + _interface_addresses()
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


def build_app(places, vault: Path, surface: str, host: str, call=None, base_url: str | None = None,
              auth: AuthStore | None = None):
    """The ASGI app: the SDK's Streamable HTTP transport behind its bearer-auth middleware,
    which accepts our tokens and OAuth access tokens; with `base_url` (the URL agents use),
    also the SDK's OAuth authorization server and our approval page."""
    import anyio
    from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions

    from .client_rows import request_tools
    from ..server.mcp import build_server
    from .oauth_provider import BrainOAuthProvider, BrainTokenVerifier
    from .oauth_store import SCOPES, OAuthStore

    forward = call or daemon_sender(places, vault)

    async def send_call(name: str, arguments, caller: Caller) -> tuple[dict, bool]:
        # the client's row lives with the HTTP server: narrowing it never reaches the daemon
        if name == "request_tools":
            return await anyio.to_thread.run_sync(request_tools, places, arguments, caller)
        return await forward(name, arguments, caller)

    server = build_server(send_call, lambda ctx: caller_for_request(ctx, surface))
    store = OAuthStore(places) if base_url else None
    verifier = BrainTokenVerifier(places, store, auth)
    provider, routes = None, None
    if base_url and store is not None:
        from .oauth_approval import approval_routes

        auth = AuthSettings(
            issuer_url=base_url, resource_server_url=base_url + MCP_PATH, validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=list(SCOPES), default_scopes=["read"]),
            revocation_options=RevocationOptions(enabled=True))
        provider, routes = BrainOAuthProvider(store, base_url), approval_routes(store)
    else:
        auth = AuthSettings(issuer_url="http://127.0.0.1", resource_server_url=None)
    # json_response: each request's answer is one JSON body, which Streamable HTTP lets a server choose
    # and every client must accept. An SSE stream per call cost framing, and the SDK's client drops
    # the connection when it stops reading one, so every call paid a new TCP connection. brain never
    # sends a request or notification to the client in the middle of a call, so nothing is lost.
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH, json_response=True, host=host, transport_security=security_settings(host),
        auth=auth,
        token_verifier=verifier, auth_server_provider=provider,
        custom_starlette_routes=routes,
    )
    _explaining_auth(app)
    if base_url:
        from .oauth_guard import guard_oauth_endpoints

        guard_oauth_endpoints(app, security_settings(host))
    from .body_limits import BoundedBodies

    # outside every route, the bearer check included: no body is read past its bound (body_limits.py)
    app.add_middleware(BoundedBodies, mcp_path=MCP_PATH)
    # the connection limits classify each request by the same check (limits.py)
    app.state.credential_ok = verifier.known
    return app


def oauth_base_url(cfg: dict, host: str, port: int) -> str | None:
    """The URL OAuth metadata names: `http.public_url` (https, behind a TLS proxy), or this
    loopback server; None on a plain-HTTP non-loopback bind (OAuth needs https there)."""
    public = (cfg.get("http.public_url") or "").rstrip("/")
    if public:
        return public[: -len(MCP_PATH)] if public.endswith(MCP_PATH) else public
    if host in LOOPBACK:
        return f"http://{host}:{port}"
    return None


def listening_socket(host: str, port: int):
    """The server's TCP socket, bound and listening (accepting from here on); OSError when it cannot bind.

    It is made as an explicit IPPROTO_TCP socket: asyncio turns TCP_NODELAY on
    only for sockets that say so, and without it the answer to a keep-alive
    client's next request waits for that client's delayed ACK (about 40 ms).
    """
    import socket

    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def run_http(places, vault: Path | None, cfg: dict, *, surface: str, host: str, port: int,
             front_end=None) -> int:
    """Serve until SIGINT/SIGTERM; returns the exit code. `front_end`: a FrontEnd
    (daemon/server/front_end.py) serving the verbs over a shared store in this process,
    instead of forwarding them to this vault's daemon."""
    import uvicorn

    from .tokens import TokenError
    from ..client.spawn import DaemonStartError, connect_or_start

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="brain serve --http: %(levelname)s %(name)s: %(message)s")
    auth = front_end.auth if front_end is not None else FileAuthStore(places)
    try:
        tokens = auth.tokens()
    except (TokenError, AuthStoreError) as e:
        print(f"error: {e}.", file=sys.stderr)
        print("fix: repair that file, or delete it and create the tokens again "
              "(`brain auth token create NAME [--write]`).", file=sys.stderr)
        return 1
    if not tokens and (front_end is not None or oauth_base_url(cfg, host, port) is None):
        where = f" --store {front_end.label}" if front_end is not None else ""
        print("brain serve --http: warning: no tokens exist yet, so every request will get 401. "
              f"Create one with `brain auth token create NAME [--write]{where}`.", file=sys.stderr)
    if front_end is None:
        assert vault is not None
        try:
            s, _ = connect_or_start(places, vault)
            s.close()
        except DaemonStartError as e:
            print(f"brain serve --http: {e}", file=sys.stderr)
            return 1
    # bind first, so a busy port is a clear message rather than a traceback
    try:
        sock = listening_socket(host, port)
    except OSError as e:
        import errno

        print(f"error: cannot listen on {host}:{port}: {e.strerror or e}.", file=sys.stderr)
        if e.errno in (errno.EADDRINUSE, errno.EACCES):
            print("fix: pass another --port, or stop the process using it.", file=sys.stderr)
        else:  # an address this machine does not have, or a name that does not resolve
            print("fix: pass --host with an address of this machine (127.0.0.1 for local agents, "
                  "0.0.0.0 for every interface).", file=sys.stderr)
        return 1
    bound_port = sock.getsockname()[1]
    # OAuth's grants live in this host's files: a front end over a shared store takes tokens only
    base_url = oauth_base_url(cfg, host, bound_port) if front_end is None else None
    app = build_app(places, vault or Path("."), surface, host, base_url=base_url,
                    call=front_end.call if front_end is not None else None, auth=auth)
    print(f"brain serve --http: MCP on http://{host}:{bound_port}{MCP_PATH} (surface {surface}); "
          "every request needs a bearer token" + (" or an OAuth access token." if base_url else "."),
          file=sys.stderr, flush=True)
    if front_end is not None:
        print(f"brain serve --http: a front end over {front_end.label}: no state of its own; "
              "pages come from `brain index --store`.", file=sys.stderr, flush=True)
    elif base_url is None:
        print("brain serve --http: OAuth is off: it needs https on a non-loopback address. Put a TLS proxy in "
              "front and set `brain config set http.public_url https://NAME/mcp`.", file=sys.stderr, flush=True)
    if host.strip("[]") in ("0.0.0.0", "::"):
        names = ", ".join(n for n in security_settings(host).allowed_hosts if not n.endswith(":*"))
        print(f"brain serve --http: requests must name this machine as one of: {names} (others get 421; "
              "to be reached by another name, pass it as --host).", file=sys.stderr, flush=True)
    from .client_rows import forget_serving, note_serving
    from .limits import uvicorn_settings

    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False,
                            **uvicorn_settings(authenticated=app.state.credential_ok))
    note_serving(places, surface, f"http://{host}:{bound_port}{MCP_PATH}")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        forget_serving(places)
        if front_end is not None:
            front_end.close()
    return 0
