"""`brain auth …`: bearer tokens, OAuth clients and their surfaces for `brain serve --http`."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn, Optional

from . import route

if TYPE_CHECKING:
    from ..daemon.stores.auth import AuthStore


STORE_HELP = "the tokens of this shared PostgreSQL store, which its front ends accept (default: config store)"


def auth_store(store: str | None = None) -> "AuthStore":
    """The tokens and OAuth clients of this BRAIN_HOME (daemon/stores/auth.py), or, with a
    store (`--store`, or the `store` setting), the tokens every front end of that store accepts."""
    import typer

    from ..daemon import config as config_mod

    p = route.places()
    store = store or config_mod.get(route.load_config(p), "store")
    if store:
        from ..daemon.postgres.open_store import open_auth
        from .store_errors import open_or_explain

        auth = open_or_explain("brain auth", lambda: open_auth(str(store)))
        if auth is None:
            raise typer.Exit(1)
        return auth
    from ..daemon.http.auth_store import FileAuthStore

    return FileAuthStore(p)


def register(app) -> None:
    import typer

    auth_app = typer.Typer(help="Who may call the HTTP MCP server: tokens, OAuth clients, surfaces.",
                           no_args_is_help=True)
    token_app = typer.Typer(help="Create, list and revoke bearer tokens.", no_args_is_help=True)
    auth_app.add_typer(token_app, name="token")
    app.add_typer(auth_app, name="auth")
    register_clients(auth_app)

    @token_app.command("create")
    def create(name: str = typer.Argument(..., help="who holds it (namespaces its delta cursors)"),
               write: bool = typer.Option(False, "--write", help="allow remember, forget and put_page"),
               store: Optional[str] = typer.Option(None, "--store", metavar="URL", help=STORE_HELP)):
        """Create a token and print it once; only its hash is stored."""
        from ..daemon.stores.auth import AuthStoreError

        try:
            secret = auth_store(store).create_token(name, can_write=write)
        except AuthStoreError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(1)
        typer.echo(secret)
        typer.echo(f"token {name!r} ({'read + write' if write else 'read-only'}) created. "
                   "It is shown only now: store it where the agent can read it.", err=True)

    @token_app.command("list")
    def list_(store: Optional[str] = typer.Option(None, "--store", metavar="URL", help=STORE_HELP)):
        """List token names, scopes and creation times (never the secrets)."""
        from ..daemon.stores.auth import AuthStoreError

        try:
            tokens = auth_store(store).tokens()
        except AuthStoreError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(1)
        if not tokens:
            typer.echo("no tokens. `brain auth token create NAME [--write]` makes one.")
            return
        for t in tokens:
            typer.echo(f"{t.name:<24} {'write' if t.can_write else 'read':<6} created {t.created_at}")

    @token_app.command("revoke")
    def revoke(name: str,
               store: Optional[str] = typer.Option(None, "--store", metavar="URL", help=STORE_HELP)):
        """Revoke a token by name; a running HTTP server refuses it from the next request."""
        from ..daemon.stores.auth import AuthStoreError

        try:
            gone = auth_store(store).revoke_token(name)
        except AuthStoreError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(1)
        if not gone:
            typer.echo(f"error: no token named {name!r} (see `brain auth token list`).", err=True)
            raise typer.Exit(1)
        typer.echo(f"revoked {name!r}.")


def register_clients(auth_app) -> None:
    """`brain auth clients|rescope-client|revoke-client|pending|approve|deny`: who may call the HTTP server."""
    import typer

    def _fail(message: str, fix: str | None = None) -> NoReturn:
        typer.echo(f"error: {message}", err=True)
        if fix:
            typer.echo(f"fix: {fix}", err=True)
        raise typer.Exit(1)

    @auth_app.command("clients")
    def clients():
        """List HTTP clients (bearer tokens and OAuth clients) with what they were granted:
        scopes of their live credentials and the surface they see."""
        from ..daemon.client.relay import SurfaceError, resolve_surface
        from ..daemon.http.client_rows import server_ceiling
        from ..daemon.stores.auth import AuthStoreError

        p = route.places()
        try:
            ceiling, source = server_ceiling(p, resolve_surface(None, route.load_config(p))[0])
            rows = auth_store().clients(ceiling)
        except (AuthStoreError, SurfaceError) as e:
            _fail(str(e))
        if not rows:
            typer.echo("no clients. `brain auth token create NAME` makes a token; OAuth clients appear "
                       "when they register with `brain serve --http`.")
            return
        typer.echo(f"server surface: {ceiling} (from {source}); no client sees more")
        for r in rows:
            why = f"set by {r.surface_set_by}" if r.surface else "the server's"
            granted = r.granted or "nothing live"
            asked = "" if r.kind == "token" else f"  asked {r.asked!r}  {r.name!r}"
            surface = f"{r.effective} ({why})"
            typer.echo(f"{r.id:<46} {r.kind:<6} granted {granted:<12} surface {surface:<28} "
                       f"created {r.created_at}{asked}")

    @auth_app.command("rescope-client")
    def rescope_client(client_id: str = typer.Argument(..., metavar="ID", help="an id from `brain auth clients`"),
                       surface: str = typer.Option(..., "--surface", help="verbs | starter | full (never wider "
                                                   "than the server's own surface)")):
        """Set a client's surface; its next request sees it."""
        from ..daemon.protocol.errors import VerbError
        from ..daemon.protocol.surfaces import SURFACE_ORDER

        if surface not in SURFACE_ORDER:
            _fail(f"unknown surface {surface!r}", f"use one of {', '.join(SURFACE_ORDER)}")
        try:
            found = auth_store().set_client_surface(client_id, surface, "operator")
        except VerbError as e:
            _fail(str(e))
        if not found:
            _fail(f"no client {client_id!r}", "see `brain auth clients` for the ids")
        typer.echo(f"{client_id}: surface {surface} from its next request (never wider than the server's).")

    @auth_app.command("revoke-client")
    def revoke_client(client_id: str = typer.Argument(..., metavar="ID", help="an id from `brain auth clients`")):
        """Revoke an OAuth client and every token it holds (bearer tokens: `brain auth token revoke`)."""
        from ..daemon.http.client_rows import OAUTH_PREFIX

        if not client_id.startswith(OAUTH_PREFIX):
            _fail(f"{client_id!r} is not an OAuth client id (they start with {OAUTH_PREFIX})",
                  f"for a bearer token run `brain auth token revoke {client_id}`")
        if not auth_store().revoke_oauth_client(client_id):
            _fail(f"no client {client_id!r}", "see `brain auth clients` for the ids")
        typer.echo(f"revoked {client_id}: its next request gets 401.")

    @auth_app.command("pending")
    def pending():
        """List OAuth authorization requests waiting for your approval."""
        rows = auth_store().pending()
        if not rows:
            typer.echo("no requests waiting.")
        for r in rows:
            typer.echo(f"{r.user_code}  {r.client_name!r} (oauth:{r.client_id}) asks for "
                       f"{' + '.join(r.scopes)}")

    @auth_app.command("approve")
    def approve(code: str = typer.Argument(..., metavar="CODE", help="the code the waiting page shows"),
                read_only: bool = typer.Option(False, "--read-only", help="grant read even if write was asked")):
        """Approve an OAuth client's request; its browser continues by itself."""
        row = auth_store().approve(code, read_only=read_only)
        if row is None:
            _fail(f"no request waiting with code {code!r} (codes expire after 10 minutes)",
                  "see `brain auth pending`, or start connecting again from the agent")
        typer.echo(f"approved {row.client_name!r} (oauth:{row.client_id}) for {' + '.join(row.scopes)}.")

    @auth_app.command("deny")
    def deny(code: str = typer.Argument(..., metavar="CODE")):
        """Deny an OAuth client's request."""
        if not auth_store().deny(code):
            _fail(f"no request waiting with code {code!r}", "see `brain auth pending`")
        typer.echo("denied.")
