"""Every request body is bounded before it is read, on every endpoint, with or without a credential.

A body is held in memory by whatever reads it (the SDK's form and JSON
handlers, oauth_guard, wire_check), so the bound has to come first: an
unauthenticated `/revoke` with a 300 MB form grew `brain serve` from 67 to
966 MB and was answered 413 only once all of it had been read. This ASGI
middleware sits outside every route:

- a declared `Content-Length` over the path's limit is answered 413 at once,
  and not one byte of the body is read;
- a body sent without a length (chunked) is counted as it is read, and
  answered 413 as soon as it passes the limit; the app then sees the client
  as gone, and whatever it would still send is dropped.

The 413 says `Connection: close`, so the rest of the body is never waited
for. The limits are in docs/protocol.md §11.5.
"""

from __future__ import annotations

import json
import logging

log = logging.getLogger("brain.http")

# the SDK's own bound on a Streamable HTTP message, kept so /mcp answers as before
MCP_BODY_BYTES = 4 * 1024 * 1024
# every other endpoint takes a small form or JSON object (OAuth, the approval page)
FORM_BODY_BYTES = 64 * 1024


def body_limit(path: str, mcp_path: str) -> int:
    """The most bytes a request body to `path` may hold."""
    return MCP_BODY_BYTES if path.rstrip("/") == mcp_path.rstrip("/") else FORM_BODY_BYTES


def declared_length(scope) -> int | None:
    """The request's `Content-Length`, or None when it sends none (or one that is not a number)."""
    for name, value in scope.get("headers") or ():
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _too_large(send, limit: int, path: str) -> None:
    data = json.dumps({"error": "invalid_request",
                       "error_description": f"the request body is over the {limit:,} bytes {path} accepts"}).encode()
    await send({"type": "http.response.start", "status": 413, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
        (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": data})


class BoundedBodies:
    """ASGI middleware: a request body over its path's limit is refused with 413 before it is read."""

    def __init__(self, app, mcp_path: str):
        self.app, self.mcp_path = app, mcp_path

    async def __call__(self, scope, receive, send) -> None:
        if scope.get("type") != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")
        limit = body_limit(path, self.mcp_path)
        declared = declared_length(scope)
        if declared is not None and declared > limit:
            return await _too_large(send, limit, path)
        read, started, refused = 0, False, False

        async def bounded_receive():
            nonlocal read, started, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message.get("type") == "http.request":
                read += len(message.get("body", b""))
                if read > limit:
                    refused = True
                    if not started:
                        started = True
                        await _too_large(send, limit, path)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message) -> None:
            nonlocal started
            if refused:
                return   # the 413 is the whole answer
            if message.get("type") == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, bounded_receive, guarded_send)
        except Exception:
            if not refused:
                raise
            # the app saw the client leave because the body was cut off; the 413 was the answer
            log.info("refused a request body over %d bytes on %s", limit, path)
