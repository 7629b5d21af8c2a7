"""The same checks on an HTTP request body that the daemon's socket makes on a line.

The SDK's Streamable HTTP transport parses a POST body itself, and differs
from the socket in two ways that leave a caller without a proper answer: a
request whose `id` is null, 1.5 or an object is taken for a notification
(202, no answer ever), and arguments nested deeper than the daemon accepts
reach the daemon, which refuses the forwarded line, so the caller got
`unavailable` and a retry that can never succeed. This wrapper runs
`wire_guard` on the body first and answers those with the JSON-RPC error
the socket gives (docs/protocol.md §1.6): status 400, the error in the body,
the id where it can be read. It sits behind the bearer check, so only an
authenticated caller's body is ever read here.
"""

from __future__ import annotations

from ..protocol.wire_guard import refusal


def _error_response(line: bytes):
    async def send_it(send) -> None:
        await send({"type": "http.response.start", "status": 400, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(line)).encode())]})
        await send({"type": "http.response.body", "body": line})
    return send_it


class CheckedBodies:
    """ASGI wrapper: POST bodies pass `refusal` before the app sees them."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            return await self.app(scope, receive, send)
        chunks, trailing = [], None
        while True:
            message = await receive()
            if message["type"] != "http.request":
                trailing = message
                break
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        refused = refusal(body) if trailing is None else None
        if refused is not None:
            return await _error_response(refused)(send)
        queued = [{"type": "http.request", "body": body, "more_body": False}]
        if trailing is not None:
            queued = [trailing]

        async def replay():
            return queued.pop(0) if queued else await receive()

        await self.app(scope, replay, send)

