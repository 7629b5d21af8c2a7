"""`brain auth token create|list|revoke`: bearer tokens for `brain serve --http`."""

from __future__ import annotations

from . import backend


def register(app) -> None:
    import typer

    auth_app = typer.Typer(help="Access tokens for the HTTP MCP server.", no_args_is_help=True)
    token_app = typer.Typer(help="Create, list and revoke bearer tokens.", no_args_is_help=True)
    auth_app.add_typer(token_app, name="token")
    app.add_typer(auth_app, name="auth")

    @token_app.command("create")
    def create(name: str = typer.Argument(..., help="who holds it (namespaces its delta cursors)"),
               write: bool = typer.Option(False, "--write", help="allow remember, forget and put_page")):
        """Create a token and print it once; only its hash is stored."""
        from ..daemon.auth import TokenError, create_token

        try:
            secret = create_token(backend.places(), name, can_write=write)
        except TokenError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(1)
        typer.echo(secret)
        typer.echo(f"token {name!r} ({'read + write' if write else 'read-only'}) created. "
                   "It is shown only now: store it where the agent can read it.", err=True)

    @token_app.command("list")
    def list_():
        """List token names, scopes and creation times (never the secrets)."""
        from ..daemon.auth import TokenError, list_tokens

        try:
            tokens = list_tokens(backend.places())
        except TokenError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(1)
        if not tokens:
            typer.echo("no tokens. `brain auth token create NAME [--write]` makes one.")
            return
        for t in tokens:
            typer.echo(f"{t.name:<24} {'write' if t.can_write else 'read':<6} created {t.created_at}")

    @token_app.command("revoke")
    def revoke(name: str):
        """Revoke a token by name; a running HTTP server refuses it from the next request."""
        from ..daemon.auth import TokenError, revoke_token

        try:
            gone = revoke_token(backend.places(), name)
        except TokenError as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(1)
        if not gone:
            typer.echo(f"error: no token named {name!r} (see `brain auth token list`).", err=True)
            raise typer.Exit(1)
        typer.echo(f"revoked {name!r}.")
