"""Where a client meets the daemon: what both sides know of its files and handshake.

The daemon process writes its pid file and log and answers the identity
preamble; the client side reads the pid file, tails the logs, reads the exit
code of a daemon it spawned and the identity answer. Both import these from
here, so the server never imports the client side (docs/architecture.md,
"Layers"). Standard library only: the CLI's hot path imports this.
"""

from __future__ import annotations

import json
from pathlib import Path

# exit code of a daemon that found the vault already served: its spawner then
# connects to the one that is (daemon/server/process.py exits with it)
EXIT_ALREADY_RUNNING = 3

# the key of the daemon's reply to a preamble that names a vault
IDENTITY_KEY = "brain_daemon"


def pid_path(places, vault: Path) -> Path:
    return places.socket_path(vault).with_suffix(".pid")


def log_path(places, vault: Path) -> Path:
    return places.log_dir / f"daemon-{places.vault_key(vault)}.log"


def start_log_path(places, vault: Path) -> Path:
    """The daemon's stderr until its own log is set up: read back by a spawner if it fails early."""
    return places.log_dir / f"daemon-{places.vault_key(vault)}.start"


def read_pid_file(places, vault: Path) -> dict | None:
    try:
        data = json.loads(pid_path(places, vault).read_text())
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None
