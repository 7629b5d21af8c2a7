"""The `brain` console script.

Hot verb commands (recall, remember, forget, entity, context, delta, call)
take a lean argparse path that imports neither typer nor anything heavy;
everything else goes to the typer app.
"""

from __future__ import annotations

import sys

HOT = {"recall", "remember", "forget", "entity", "context", "delta", "call"}


def main(argv: list[str] | None = None) -> int:
    from ..daemon.private_files import restrict_umask

    restrict_umask()  # caches, logs and tokens are private from their first byte
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        from .status_view import bare_brain

        return bare_brain()
    if argv[0] in ("--version", "-V"):
        from .. import __version__

        print(f"brain {__version__}")
        return 0
    if argv[:2] == ["hook", "session-start"] and not any(a in ("-h", "--help") for a in argv[2:]):
        from ..hooks.session_start import main as session_start  # a harness waits on this: stay lean

        return session_start(argv[2:])
    if argv and argv[0] in HOT and not any(a in ("-h", "--help") for a in argv[1:]):
        from .fast import run

        return run(argv)
    if argv and argv[0] == "serve" and not any(a in ("-h", "--help") for a in argv[1:]):
        # what MCP hosts spawn: the relay must answer initialize fast
        from .daemon_cmd import serve_main

        return serve_main(argv[1:])
    from .app import app

    try:
        app(args=argv, prog_name="brain", standalone_mode=True)
    except SystemExit as e:
        return int(e.code or 0) if not isinstance(e.code, str) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
