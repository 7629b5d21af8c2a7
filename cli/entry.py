"""The `brain` console script.

Verb commands (declared in `verb_commands.py`: recall, remember, forget, entity,
context, delta, get, open, call) take a lean argparse path that imports
neither typer nor anything heavy; everything else, and `--help` and shell
completion for every command, goes to the typer app.
"""

from __future__ import annotations

import os
import sys


def _wants_help(args: list[str]) -> bool:
    return any(a in ("-h", "--help") for a in args)


def _dispatch(argv: list[str]) -> int:
    if not argv and "_BRAIN_COMPLETE" not in os.environ:  # a shell asking for completions has no argv either
        from .status_view import bare_brain

        return bare_brain()
    if argv and argv[0] in ("--version", "-V"):
        from .. import __version__

        print(f"brain {__version__}")
        return 0
    if argv[:2] == ["hook", "session-start"] and not _wants_help(argv[2:]):
        from ..hooks.session_start import main as session_start  # a harness waits on this: stay lean

        return session_start(argv[2:])
    if argv and not _wants_help(argv[1:]):
        from .verb_commands import COMMANDS

        if argv[0] in COMMANDS:
            from .verb_main import run

            return run(argv)
    if argv and argv[0] == "serve" and not _wants_help(argv[1:]):
        # what MCP hosts spawn: the relay must answer initialize fast
        from .daemon_cmd import serve_main

        return serve_main(argv[1:])
    from .app import run_app

    return run_app(argv)


def _quiet_stdout() -> None:
    """After the reader of our output went away: send the rest nowhere, so the
    interpreter's final flush cannot fail a second time."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    from ..daemon.private_files import restrict_umask

    restrict_umask()  # caches, logs and tokens are private from their first byte
    from ..indexer.embeddings.telemetry_off import turn_off_telemetry

    turn_off_telemetry(os.environ)  # before any model library starts, here or in a child
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _dispatch(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:  # `brain recall … | head -1`: the reader has what it wanted
        _quiet_stdout()
        return 141  # what a shell reports for a program ended by SIGPIPE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
