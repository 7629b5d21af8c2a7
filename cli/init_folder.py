"""Which folder `brain init` registers, and the folders it refuses.

A typo must not replace the vault: `brain init ~/Notes` when the notes are in
`~/notes` would register an empty folder and stop the old vault's daemon, and
every agent would then see no pages. So a folder that does not exist is made
only when asked: yes on a terminal, or `--create`. Folders that cannot hold
notes (the root of the file system, the kernel's and devices' folders) are
refused with the reason, before anything is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

# the kernel's and devices' folders: brain would write `.brain/` there, or fail half-way
SYSTEM_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))


def on_a_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def refuse(problem: str, fix: str) -> None:
    typer.echo(f"error: {problem}", err=True)
    typer.echo(f"fix: {fix}", err=True)


def chosen_folder(path: Path | None, create: bool) -> Path | None:
    """The folder to register, or None once the reason was printed."""
    if path is None:
        return _current_folder()
    vault = path.expanduser().resolve()
    problem = unusable(vault)
    if problem is not None:
        refuse(problem, "name the folder of your Markdown notes, e.g. `brain init ~/notes`.")
        return None
    if vault.exists() or create:
        return vault
    nearby = _same_name_any_case(vault)
    hint = f" (did you mean {nearby}?)" if nearby else ""
    if not on_a_terminal():
        refuse(f"{vault} does not exist{hint}; nothing was registered.",
               f"check the path, or `brain init {vault} --create` makes an empty folder and registers it.")
        return None
    if not typer.confirm(f"{vault} does not exist{hint}. Create it as an empty notes folder and register it?",
                         default=False):
        typer.echo("nothing was registered; `brain init PATH` names another folder.")
        return None
    return vault


def unusable(vault: Path) -> str | None:
    """Why `vault` cannot be a notes folder, or None when it can (or may be created)."""
    if vault == Path(vault.anchor):
        return f"{vault} is the root of the file system: brain would index every Markdown file on the machine."
    for system in SYSTEM_FOLDERS:
        if vault == system or system in vault.parents:
            return f"{vault} is a system folder ({system} belongs to the kernel), not a folder of notes."
    if vault.exists() and not vault.is_dir():
        return f"{vault} is a file, not a folder."
    return None


def _same_name_any_case(vault: Path) -> Path | None:
    """A folder beside `vault` whose name differs only in case: the likely meant one."""
    try:
        siblings = list(vault.parent.iterdir())
    except OSError:
        return None
    for s in siblings:
        if s.name.lower() == vault.name.lower() and s.is_dir():
            return s
    return None


def _current_folder() -> Path | None:
    """Without PATH: ask on a terminal; refuse elsewhere (a script run from ~ would index
    every Markdown file under it), and never take ~ or / unasked."""
    here = Path.cwd().resolve()
    if here in (Path.home().resolve(), Path(here.anchor)):
        refuse(f"brain init without a folder would register {here}, every Markdown file under it.",
               "name your notes folder, e.g. `brain init ~/notes`.")
        return None
    if not on_a_terminal():
        refuse("brain init needs the folder of your notes.",
               f"`brain init PATH`, e.g. `brain init ~/notes`; `brain init .` registers {here}.")
        return None
    files = sum(1 for _ in here.rglob("*.md"))
    if not typer.confirm(f"Register {here} ({files:,} Markdown files) as your notes folder?", default=False):
        typer.echo("nothing was registered; `brain init PATH` names another folder.")
        return None
    return here
