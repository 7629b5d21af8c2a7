"""The page an OAuth client's browser waits on until the vault's owner decides.

/authorize (the SDK's handler) ends at `BrainOAuthProvider.authorize`,
which parks the request and sends the browser here. While the owner has
not run `brain auth approve CODE` (or `brain auth deny CODE`) on the
server machine, the page shows that command and reloads itself every two
seconds; once approved it mints the authorization code and redirects to the
client's redirect URI with it, once denied it redirects with
`error=access_denied`. The request id in the URL is the only handle on the
request (its hash is what is stored), and each decision is handed out once.
"""

from __future__ import annotations

import html

from mcp.server.auth.provider import construct_redirect_uri
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from .oauth_provider import APPROVAL_PATH
from .oauth_store import OAuthStore, OAuthStoreError

POLL_S = 2

_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>brain: {title}</title>{refresh}</head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>{title}</h1>
{body}
</body></html>
"""


def _page(title: str, body: str, status: int = 200, refresh: bool = False) -> HTMLResponse:
    meta = f'<meta http-equiv="refresh" content="{POLL_S}">' if refresh else ""
    return HTMLResponse(_PAGE.format(title=html.escape(title), body=body, refresh=meta), status_code=status,
                        headers={"Cache-Control": "no-store"})


def approval_routes(store: OAuthStore) -> list[Route]:
    async def approve_page(request: Request) -> Response:
        request_id = request.query_params.get("request") or ""
        try:
            state, row = store.take_decided(request_id)
        except OAuthStoreError:
            return _page("Server error", "<p>The server's OAuth file is unreadable; see its log.</p>", 500)
        if state == "unknown" or row is None:
            return _page("Request expired", "<p>This request expired or was already used. Start connecting "
                         "again from your agent.</p>", 400)
        if state == "waiting":
            code = html.escape(row["user_code"])
            scopes = html.escape(" + ".join(row["scopes"]))
            return _page("Waiting for the owner's approval",
                         f"<p>This client asks for <b>{scopes}</b> access to the brain.</p>"
                         f"<p>On the machine that serves it, the vault's owner runs:</p>"
                         f'<pre id="approve" data-user-code="{code}">brain auth approve {code}</pre>'
                         "<p>This page continues by itself once they do.</p>", refresh=True)
        params = {"state": row.get("state")}
        if state == "denied":
            params.update(error="access_denied", error_description="the vault's owner denied the request")
        else:
            params["code"] = store.add_code({k: row[k] for k in (
                "client_id", "scopes", "code_challenge", "redirect_uri", "redirect_uri_explicit", "resource")})
        return RedirectResponse(construct_redirect_uri(row["redirect_uri"], **params), status_code=302,
                                headers={"Cache-Control": "no-store"})

    return [Route(APPROVAL_PATH, endpoint=approve_page, methods=["GET"])]
