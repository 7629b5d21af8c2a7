"""What a client can learn about the vault's daemon without starting or stopping it.

Is a pid alive and a brain daemon, does anyone answer on a socket, which
folder does the daemon there serve (the identity preamble,
docs/architecture.md "The vault folder"), and the status `brain daemon
status` prints. Standard library only: the CLI's hot path imports this.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from ..rendezvous import IDENTITY_KEY, log_path, read_pid_file


def pid_alive(pid) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (dead child not yet reaped) still answers kill(0)
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().split(b")")[-1].split()[0] != b"Z"
    except OSError:
        return True


def daemon_pid_alive(pid) -> bool:
    """pid_alive, and the process is a brain daemon: a stale pid file may name a pid since reused."""
    if not pid_alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().split(b"\0")
    except OSError:
        return True  # no /proc to ask: trust the pid file
    return b"brain.daemon.server" in args or {b"daemon", b"start", b"--foreground"} <= set(args)


def try_connect(path: Path, timeout: float | None = None) -> socket.socket | None:
    """A connected socket, or None when nobody listens there."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if timeout is not None:
            s.settimeout(timeout)
        s.connect(str(path))
        s.settimeout(None)
        return s
    except OSError:
        s.close()
        return None


def vault_identity(vault: Path) -> dict | None:
    """What names a vault folder to its daemon: the device and inode of its real path.

    A copy (`cp -r`) is another folder even though its `.brain/` is the same
    bytes, so it gets its own daemon (docs/architecture.md, "The vault folder").
    None when the folder is gone: there is nothing to confuse it with.
    """
    try:
        st = os.stat(Path(vault).expanduser().resolve())
    except OSError:
        return None
    return {"dev": st.st_dev, "ino": st.st_ino}


PROBE_TIMEOUT_S = 5.0


def probe_daemon(path, vault: Path, timeout: float = PROBE_TIMEOUT_S) -> dict | None:
    """Ask the daemon on `path` which vault it serves.

    Returns {"same": bool, ...its identity}, or None when nobody answers
    there or the vault folder is gone.
    """
    ident = vault_identity(vault)
    s = try_connect(Path(path), timeout=timeout) if ident is not None else None
    if s is None:
        return None
    try:
        s.settimeout(timeout)
        s.sendall(json.dumps({"surface": "verbs", "lane": "remote", "client": "brain-probe",
                              "vault": ident}).encode() + b"\n")
        line = s.makefile("rb").readline(65536)
        reply = json.loads(line) if line.strip() else {}
    except (OSError, ValueError):
        return None
    finally:
        s.close()
    if not isinstance(reply, dict):
        return None
    if isinstance(reply.get(IDENTITY_KEY), dict):
        return {**reply[IDENTITY_KEY], "same": True}
    data = (reply.get("error") or {}).get("data") if isinstance(reply.get("error"), dict) else None
    if isinstance(data, dict) and isinstance(data.get(IDENTITY_KEY), dict):
        return {**data[IDENTITY_KEY], "same": False}
    return None


def find_daemon(places, vault: Path) -> dict | None:
    """The identity of the daemon serving this very folder (its own word), wherever it listens."""
    from ..vault_lock import VaultLock

    vault = Path(vault).expanduser().resolve()
    places_socket = str(places.socket_path(vault))
    other = VaultLock(vault).holder().get("socket")
    for path in dict.fromkeys([places_socket, other if isinstance(other, str) else places_socket]):
        info = probe_daemon(path, vault)
        if info is not None and info["same"]:
            return {**info, "socket": path}
    return None


def daemon_status(places, vault: Path) -> dict:
    """What a client can see of the daemon: pid file, liveness, socket answer."""
    vault = Path(vault).expanduser().resolve()
    info = read_pid_file(places, vault) or {}
    sock_path = places.socket_path(vault)
    s = try_connect(sock_path, timeout=1.0)
    answering = s is not None
    if s is not None:
        s.close()
    pid = info.get("pid")
    if answering:
        # the daemon's own word: it may serve another folder (the vault was replaced under it)
        ident = probe_daemon(sock_path, vault, timeout=1.0)
        if ident is not None:
            answering = ident["same"]
            pid = ident.get("pid") if answering else None
    return {
        "running": answering,
        "pid": pid if daemon_pid_alive(pid) else None,
        "stale_pid_file": bool(info) and not daemon_pid_alive(pid),
        "stale_socket": sock_path.exists() and not answering,
        "socket": str(sock_path),
        "log": str(log_path(places, vault)),
        "started_at": info.get("started_at"),
        "version": info.get("version"),
    }


def running_daemons(places) -> list[dict]:
    """Every live daemon of this user in this runtime dir, whatever vault it serves.

    Each daemon leaves a pid file (pid, vault, socket, started_at, version)
    next to its socket; a pid file whose process is gone is skipped.
    """
    found = []
    try:
        files = sorted(Path(places.runtime_dir).glob("*.pid"))
    except OSError:
        return []
    for path in files:
        try:
            info = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and daemon_pid_alive(info.get("pid")):
            found.append(info)
    found.sort(key=lambda d: str(d.get("started_at") or ""))
    return found
