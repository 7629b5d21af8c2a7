"""What bounds the OAuth endpoints anyone can reach without a credential.

`/register` and `/authorize` must answer strangers (that is how a new agent
connects), so nothing about the caller can be checked. What can be:

- the Host and Origin headers, exactly as on /mcp (DNS rebinding: a web page
  in the owner's browser must not register clients, park requests, or post
  to /token and /revoke);
- the body: every endpoint refuses one over its limit before reading it
  (body_limits);
- the rate: each endpoint has a token bucket, and past it the answer is 429
  with Retry-After;
- the store: at most MAX_CLIENTS registered clients and MAX_PENDING requests
  awaiting the owner (oauth_store), a registration the owner never approved
  expires in minutes (UNAPPROVED_CLIENT_TTL_S there), and when the store is
  full the oldest of those with nothing awaiting the owner makes room;
- redirect URIs: https, loopback http, or a private-use scheme of
  reverse-domain form (RFC 8252 §7.1-7.3); `javascript:`, `data:`, `file:`
  and plain http elsewhere would hand the authorization code to whatever the
  URI runs or names.

And `/revoke` takes a public client's request with only `client_id`, as
RFC 7009 §2.1 allows: the SDK's handler wants a `client_secret` field even
from clients that have none, so an absent one is added, empty, before it
reads the form (every brain client is public: oauth_store).

docs/protocol.md §11.5 describes these limits for clients.
"""

from __future__ import annotations

import json
import re
import time
from urllib.parse import parse_qsl, urlsplit

REGISTER_PATH = "/register"
AUTHORIZE_PATH = "/authorize"
REVOKE_PATH = "/revoke"
TOKEN_PATH = "/token"
# requests per endpoint: a burst of BURST, then one every REFILL_S
BURST = 20
REFILL_S = 3.0

_LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
# RFC 8252 §7.1: a private-use scheme is a reverse domain name, so it holds a dot
_PRIVATE_SCHEME = re.compile(r"[a-z][a-z0-9+\-]*(\.[a-z0-9+\-]+)+")


def redirect_uri_problem(uri: str) -> str | None:
    """Why a client may not register this redirect URI; None when it may."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return f"{uri!r} is not a URI"
    scheme = parts.scheme.lower()
    if parts.fragment:
        return f"{uri!r} has a fragment (#…); a redirect URI may not (RFC 6749 §3.1.2)"
    if scheme == "https" and parts.hostname:
        return None
    if scheme == "http" and (parts.hostname or "").lower() in _LOOPBACK_HOSTS:
        return None
    if _PRIVATE_SCHEME.fullmatch(scheme):
        return None
    return (f"{uri!r} is not accepted: a redirect URI must be https, http on a loopback address (127.0.0.1, "
            "[::1], localhost), or an app's private-use scheme in reverse-domain form such as "
            "com.example.app:/callback (RFC 8252)")


class RateBucket:
    """A token bucket: `take()` is True while the rate allows; else the seconds to wait."""

    def __init__(self, burst: int = BURST, refill_s: float = REFILL_S):
        self.burst, self.refill_s = burst, refill_s
        self.tokens, self.at = float(burst), time.monotonic()

    def take(self) -> float | None:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) / self.refill_s)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return None
        return (1 - self.tokens) * self.refill_s


def _json(status: int, body: dict, headers: list | None = None):
    data = json.dumps(body).encode()

    async def send_it(send) -> None:
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
            (b"cache-control", b"no-store"), *(headers or [])]})
        await send({"type": "http.response.body", "body": data})
    return send_it


class GuardedEndpoint:
    """ASGI wrapper of one OAuth endpoint: the Host/Origin check of /mcp, then the rate."""

    def __init__(self, app, security, bucket: RateBucket):
        from mcp.server.transport_security import TransportSecurityMiddleware

        self.app, self.security, self.bucket = app, TransportSecurityMiddleware(security), bucket

    async def __call__(self, scope, receive, send) -> None:
        from starlette.requests import Request

        if scope.get("type") != "http" or scope.get("method") == "OPTIONS":
            return await self.app(scope, receive, send)
        refused = await self.security.validate_request(Request(scope, receive), is_post=False)
        if refused is not None:
            return await refused(scope, receive, send)
        wait = self.bucket.take()
        if wait is not None:
            seconds = max(1, int(wait + 0.999))
            return await _json(429, {
                "error": "temporarily_unavailable",
                "error_description": f"too many requests to {scope.get('path')}; retry in {seconds} s",
            }, [(b"retry-after", str(seconds).encode())])(send)
        await self.app(scope, receive, send)


class OriginChecked:
    """ASGI wrapper of an endpoint a browser can post to but that needs no rate of its own: the Host/Origin check."""

    def __init__(self, app, security):
        from mcp.server.transport_security import TransportSecurityMiddleware

        self.app, self.security = app, TransportSecurityMiddleware(security)

    async def __call__(self, scope, receive, send) -> None:
        from starlette.requests import Request

        if scope.get("type") == "http" and scope.get("method") != "OPTIONS":
            refused = await self.security.validate_request(Request(scope, receive), is_post=False)
            if refused is not None:
                return await refused(scope, receive, send)
        await self.app(scope, receive, send)


class PublicRevocation:
    """ASGI wrapper of /revoke: a form without `client_secret` gets an empty one (see above)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        content_type = dict(scope.get("headers") or ()).get(b"content-type", b"")
        if scope.get("type") != "http" or scope.get("method") != "POST" or \
                not content_type.startswith(b"application/x-www-form-urlencoded"):
            return await self.app(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return await self.app(scope, _replay([message], receive), send)
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        fields = {k for k, _ in parse_qsl(body.decode("latin-1"), keep_blank_values=True)}
        if "client_secret" not in fields:
            body += b"&client_secret=" if body else b"client_secret="
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)


def _replay(messages: list, receive):
    async def next_message():
        return messages.pop(0) if messages else await receive()
    return next_message


def guard_oauth_endpoints(app, security) -> None:
    """Wrap the SDK's /register and /authorize routes of `app` in GuardedEndpoint, /token in
    OriginChecked, /revoke in both OriginChecked and PublicRevocation."""
    for route in app.router.routes:
        path = getattr(route, "path", None)
        if path in (REGISTER_PATH, AUTHORIZE_PATH):
            route.app = GuardedEndpoint(route.app, security, RateBucket())
        elif path == TOKEN_PATH:
            route.app = OriginChecked(route.app, security)
        elif path == REVOKE_PATH:
            route.app = OriginChecked(PublicRevocation(route.app), security)
