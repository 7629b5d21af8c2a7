"""Stopping daemons from the client side: `brain daemon stop` (one vault or all).

SIGTERM lets a daemon drain and close its caches; SIGKILL comes only after
its whole shutdown budget. Standard library only.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..rendezvous import pid_path, read_pid_file
from .probe import daemon_pid_alive, pid_alive, running_daemons, try_connect

# a stopping daemon drains calls (10 s), waits for its warm-up (15 s) and
# flushes answers (2 s): SIGKILL only after all of that had its chance
STOP_TIMEOUT_S = 30.0


def stop_daemon(places, vault: Path, timeout: float = STOP_TIMEOUT_S) -> str:
    """SIGTERM the vault's daemon and wait for it to exit; returns what happened."""
    vault = Path(vault).expanduser().resolve()
    info = read_pid_file(places, vault) or {}
    pid = info.get("pid")
    if not isinstance(pid, int) or not daemon_pid_alive(pid):
        # clean up what a crashed daemon left behind
        pid_path(places, vault).unlink(missing_ok=True)
        sock_path = places.socket_path(vault)
        if sock_path.exists() and try_connect(sock_path, timeout=1.0) is None:
            sock_path.unlink(missing_ok=True)
        return "not running"
    return terminate(pid, timeout)


def terminate(pid: int, timeout: float = STOP_TIMEOUT_S) -> str:
    """SIGTERM one daemon and wait for it to exit (SIGKILL after `timeout`); returns what happened."""
    import signal

    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:  # it exited between the look and the signal
        return "not running"
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            return f"killed pid {pid} (it did not stop within {timeout:.0f}s)"
        time.sleep(0.02)
    return f"stopped pid {pid}"


def stop_all(places, timeout: float = STOP_TIMEOUT_S) -> list[tuple[dict, str]]:
    """Stop every daemon `running_daemons` finds; [(its pid-file record, what happened)]."""
    return [(info, terminate(info["pid"], timeout)) for info in running_daemons(places)]
