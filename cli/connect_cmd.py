"""`brain connect`: use a brain served by another machine (`brain serve --http` there).

    brain connect URL --token T [--name N] [--install claude|codex|opencode|cursor|vscode|gemini]
    brain connect --list | --remove NAME

Connecting checks the server (MCP initialize, then whoami), keeps the URL
in config.toml and the token in the state dir (0600; see remotes.py), and
optionally registers the remote with a harness. Afterwards `brain recall …
--remote NAME` asks it, `brain config set hooks.remote NAME` points the
session-start hook at it, and `brain serve --remote NAME` relays stdio to it.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from typing import NoReturn, Optional
from urllib.parse import urlparse

from . import completion, route
from ..hooks.harnesses import HARNESSES
from .hooks_cmd import MCP_HOST_HELP, mcp_file_install


def default_name(url: str) -> str:
    host = (urlparse(url).hostname or "remote").split(".")[0]
    return re.sub(r"[^A-Za-z0-9_-]", "-", host).strip("-")[:64] or "remote"


def check_server(url: str, token: str) -> dict:
    """initialize + whoami against the server; whoami's body (or {} on a verbs-only surface)."""
    from ..daemon.client.remote import HttpMcp

    client = HttpMcp(url, token, timeout_s=30.0)
    try:
        init = client.initialize()
        info = (init.get("result") or {}).get("serverInfo") or {}
        who, is_error = client.send("whoami", {})
        if is_error:  # a verbs-only server hides whoami: initialize already proved the token
            who = {}
        return {"server": info.get("name"), "version": info.get("version"), **who}
    finally:
        client.close()


def register(app) -> None:
    import typer

    def fail(message: str, fix: str | None = None) -> NoReturn:
        typer.echo(f"error: {message}", err=True)
        if fix:
            typer.echo(f"fix: {fix}", err=True)
        raise typer.Exit(1)

    @app.command("connect")
    def connect(url: Optional[str] = typer.Argument(None, metavar="URL", help="the remote MCP endpoint, "
                                                    "e.g. https://brain.example.org/mcp"),
                token: Optional[str] = typer.Option(None, "--token", help="a token from `brain auth token "
                                                    "create NAME` on the server machine"),
                name: Optional[str] = typer.Option(None, "--name", help="what to call it here (default: the host)"),
                install: Optional[str] = typer.Option(None, "--install", help="also register it with an MCP host: " + MCP_HOST_HELP,
                                                       autocompletion=completion.mcp_hosts),
                list_: bool = typer.Option(False, "--list", help="list the remote brains"),
                remove: Optional[str] = typer.Option(None, "--remove", metavar="NAME", help="forget a remote brain"),
                header: Optional[str] = typer.Option(None, "--header", metavar="NAME", hidden=True,
                                                     help="print NAME's auth header as JSON (Claude Code's headersHelper)")):
        """Connect to a brain served by another machine, check it, and optionally register it with a harness."""
        from .remotes import RemoteConfigError, load_remote, remotes, remove_remote, save_remote

        p = route.places()
        if header:
            try:
                _url, secret = load_remote(p, route.load_config(p), header)
            except RemoteConfigError as e:
                fail(str(e))
            typer.echo(json.dumps({"Authorization": f"Bearer {secret}"}))
            return
        if list_:
            known = remotes(route.load_config(p))
            if not known:
                typer.echo("no remote brains. `brain connect URL --token T` adds one.")
            hook = route.load_config(p).get("hooks.remote")
            for n, r in sorted(known.items()):
                typer.echo(f"{n:<20} {r['url']}  (token in {r.get('token_file')})" + ("  [hook]" if n == hook else ""))
            return
        if remove:
            if not remove_remote(p, remove):
                fail(f"no remote brain named {remove!r}", "see `brain connect --list`")
            by_cli = " or ".join(f"`{h.program} mcp remove {remove}`" for h in HARNESSES.values())
            typer.echo(f"forgot {remove!r}. If a harness has it registered: {by_cli}; for opencode, Cursor, "
                       f"VS Code or Gemini CLI delete the {remove!r} entry from its MCP config "
                       "(docs/harnesses.md lists the files).")
            return
        if not url or not token:
            fail("connect needs the server's URL and a token",
                 "run `brain connect https://HOST/mcp --token T` (make the token on the server with "
                 "`brain auth token create NAME`)")
        from ..hooks.mcp_files import FILE_HOSTS

        if install and install not in (*HARNESSES, *FILE_HOSTS):
            fail(f"--install {install!r}: no such MCP host", f"use one of {MCP_HOST_HELP}")
        if not url.startswith(("http://", "https://")):
            fail(f"{url!r} is not an http(s) URL", "pass the full endpoint, e.g. https://brain.example.org/mcp")
        from ..daemon.client.remote import RemoteError

        try:
            who = check_server(url, token)
        except RemoteError as e:
            message, _, fix = str(e).partition("; fix: ")
            fail(message, fix or None)
        name = name or default_name(url)
        try:
            path = save_remote(p, name, url, token)
        except RemoteConfigError as e:
            fail(str(e), "pass --name with letters, digits, '_' or '-'")
        access: dict[object, str] = {True: "read + write", False: "read only"}
        writes = access.get(who.get("can_write"), "access unknown")
        typer.echo(f"connected {name!r}: {who.get('server') or 'server'} {who.get('version') or ''} at {url} "
                   f"as {who.get('client_id', '?')} ({writes}, surface {who.get('surface', 'verbs')}).")
        typer.echo(f"token stored in {path} (0600); try `brain recall --remote {name} --limit 3`.")
        if install:
            raise typer.Exit(_install(install, name, url))

    def _install(harness: str, name: str, url: str) -> int:
        from ..hooks import InstallError
        from ..hooks import install as inst
        from ..hooks import mcp_files
        from ..hooks import mcp_register as mcp

        if harness in mcp_files.FILE_HOSTS:  # the stdio relay; the token stays in the 0600 token file
            return mcp_file_install(harness, "user", False, remote=name)
        try:
            argv = mcp.remote_add_argv(harness, name, url, inst.brain_program())
        except InstallError as e:
            fail(str(e))
        exe = HARNESSES[harness].find_program()
        if exe is None:
            typer.echo(f"`{argv[0]}` is not on PATH, so nothing was registered. Run this once it is:\n"
                       f"  {shlex.join(argv)}", err=True)
            return 1
        typer.echo(f"$ {shlex.join(argv)}")
        try:
            r = subprocess.run([exe, *argv[1:]], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            fail(f"{argv[0]} could not register it: {e}")
        typer.echo((r.stdout or "") + (r.stderr or ""), nl=False)
        if r.returncode != 0:
            typer.echo(f"fix: if {name!r} is already registered, remove it (`{argv[0]} mcp remove {name}`) "
                       "and run this again.", err=True)
        return r.returncode
