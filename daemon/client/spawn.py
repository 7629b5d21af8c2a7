"""Starting the vault's daemon, or connecting to the one that runs, from the client side.

Lean on purpose (standard library only): the CLI's hot path and `brain
serve` call `connect_or_start` before anything else. A socket file that
refuses connections belongs to a dead daemon; a new daemon removes it once
it holds the vault's writer lock, so two clients racing to start one end up
sharing whichever won.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

from ..rendezvous import EXIT_ALREADY_RUNNING, read_pid_file, start_log_path
from .probe import pid_alive, probe_daemon, try_connect
from .stop import STOP_TIMEOUT_S, stop_daemon

# how long a client waits for a fresh daemon's socket
START_TIMEOUT_S = 20.0


class DaemonStartError(RuntimeError):
    pass


def start_daemon(places, vault: Path):
    """Spawn a detached daemon for `vault`; returns its Popen."""
    import subprocess

    places.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    places.runtime_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    # the daemon's stderr until its own log is set up: read back if it fails early
    err = os.fdopen(os.open(start_log_path(places, vault), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb")
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "brain.daemon.server", "--vault", str(vault)],
            stdin=subprocess.DEVNULL, stdout=err, stderr=err, close_fds=True,
            start_new_session=True, cwd="/",
        )
    finally:
        err.close()


def _start_failure(places, vault: Path, code) -> DaemonStartError:
    try:
        tail = start_log_path(places, vault).read_text(errors="replace").strip().splitlines()[-5:]
    except OSError:
        tail = []
    detail = "\n".join(tail) or f"exit code {code}"
    return DaemonStartError(
        f"the brain daemon for {vault} did not start: {detail}\n"
        f"fix: run `brain daemon start --foreground` to see why, or `brain daemon logs`."
    )


def wait_for_socket(places, vault: Path, proc=None, timeout: float = START_TIMEOUT_S) -> socket.socket:
    from ..vault_lock import VaultLock

    path = places.socket_path(vault)
    deadline = time.monotonic() + timeout
    delay = 0.005
    respawns = 0
    while True:
        s = try_connect(path)
        if s is not None:
            return s
        if proc is not None:
            code = proc.poll()
            if code == EXIT_ALREADY_RUNNING:
                elsewhere = _daemon_elsewhere(places, vault)
                if elsewhere is not None:
                    return elsewhere
                # another daemon held the vault: wait for its socket, unless it
                # was a daemon on its way out (it stopped while we started)
                if respawns < 3 and try_connect(path) is None and VaultLock(vault).is_free():
                    respawns += 1
                    proc = start_daemon(places, vault)
                    continue
            elif code is not None:
                raise _start_failure(places, vault, code)
        if time.monotonic() > deadline:
            lock = VaultLock(vault)
            holder = {} if lock.is_free() else lock.holder()
            if holder.get("kind") == "daemon" and pid_alive(holder.get("pid")):
                raise DaemonStartError(
                    f"a daemon (pid {holder.get('pid')}) holds the vault {vault} but does not answer on {path}; "
                    "it may run with another BRAIN_HOME or XDG_RUNTIME_DIR.\n"
                    f"fix: run brain with the same environment everywhere, or stop it (`kill {holder.get('pid')}`).")
            raise DaemonStartError(
                f"no daemon answered on {path} within {timeout:.0f}s.\n"
                f"fix: check `brain daemon logs`, or run `brain daemon start --foreground`."
            )
        time.sleep(delay)
        delay = min(delay * 1.5, 0.05)


def _release(version) -> tuple[int, ...] | None:
    """The numeric release of a version string ("0.1.0rc1" -> (0, 1, 0)), or None."""
    import re

    m = re.match(r"\d+(?:\.\d+)*", str(version or ""))
    return tuple(int(x) for x in m.group(0).split(".")) if m else None


_WARNED_NEWER: set = set()


def _older_daemon(places, vault: Path) -> dict | None:
    """The pid-file record of a running daemon started by an older release of brain.

    A newer (or differently built) daemon is kept: downgrading it would only
    make the two installs take turns replacing each other. It gets a warning
    naming the fix instead.
    """
    from ... import __version__

    info = read_pid_file(places, vault)
    theirs = (info or {}).get("version")
    if not theirs or theirs == __version__:
        return None
    old, ours = _release(theirs), _release(__version__)
    if old is not None and ours is not None and old < ours:
        return info
    if vault in _WARNED_NEWER:  # once per process: a long-lived server calls often
        return None
    _WARNED_NEWER.add(vault)
    print(f"brain: warning: the daemon for {vault} runs brain {theirs}, this is brain {__version__}.\n"
          "fix: run `brain daemon stop`; the next command starts a daemon from this install.",
          file=sys.stderr)
    return None


def _daemon_elsewhere(places, vault: Path) -> socket.socket | None:
    """The vault's daemon when it listens outside our runtime dir, found via the vault's lock.

    Its socket must be ours (same uid) before we talk to it as the local lane.
    """
    from ..vault_lock import VaultLock

    holder = VaultLock(vault).holder()
    other = holder.get("socket")
    if holder.get("kind") != "daemon" or not isinstance(other, str) or other == str(places.socket_path(vault)):
        return None
    try:
        if os.stat(other).st_uid != os.getuid():
            return None
    except OSError:
        return None
    # the stamp may have been copied with the vault (`cp -r`): the daemon there
    # must say it serves this very folder
    if not (probe_daemon(other, vault) or {}).get("same"):
        return None
    s = try_connect(Path(other), timeout=2.0)
    if s is not None and vault not in _WARNED_ELSEWHERE:
        _WARNED_ELSEWHERE.add(vault)
        print(f"brain: warning: the daemon for {vault} (pid {holder.get('pid')}) listens on {other}, not in this "
              f"runtime dir {places.runtime_dir}: it was started with another BRAIN_HOME or XDG_RUNTIME_DIR.\n"
              "fix: run brain with the same environment everywhere; `brain daemon stop` here cannot see it "
              f"(stop it with `kill {holder.get('pid')}`).", file=sys.stderr)
    return s


_WARNED_ELSEWHERE: set = set()


def _other_vaults_daemon(places, vault: Path) -> bool:
    """True when the daemon on the vault's socket served another folder and has now gone.

    That happens when the vault was moved, deleted or replaced under a
    running daemon: asked, the daemon notices and stops, so wait for it
    (DaemonStartError if it stays).
    """
    path = places.socket_path(vault)
    info = probe_daemon(path, vault)
    if info is None or info["same"]:
        return False
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        s = try_connect(path, timeout=1.0)
        if s is None:
            return True
        s.close()
        time.sleep(0.05)
    raise DaemonStartError(
        f"the daemon on {path} (pid {info.get('pid')}) serves the folder {info.get('vault')}, not {vault}.\n"
        f"fix: stop it (`kill {info.get('pid')}`), then run the command again.")


def connect_or_start(places, vault: Path, on_start=None, verify: bool = True) -> tuple[socket.socket, bool]:
    """Connect to the vault's daemon, starting one if none answers.

    A daemon started by an older release (its pid file says which) is
    stopped gracefully and replaced. Returns (socket, started). `on_start()`
    is called just before spawning. With `verify` the daemon is first asked
    which folder it serves; a caller that names the vault in its own preamble
    (the daemon then refuses another folder's calls) passes False.
    """
    from ... import __version__

    vault = Path(vault).expanduser().resolve()
    s = try_connect(places.socket_path(vault))
    if s is not None and verify and _other_vaults_daemon(places, vault):
        s.close()
        s = try_connect(places.socket_path(vault))
    if s is not None:
        old = _older_daemon(places, vault)
        if old is None:
            return s, False
        s.close()
        print(f"brain: the daemon for {vault} runs brain {old.get('version')}; "
              f"restarting it with brain {__version__}.", file=sys.stderr)
        stop_daemon(places, vault)
        s = try_connect(places.socket_path(vault))
        if s is not None:  # another client already started the new one
            return s, False
    if not vault.is_dir():
        raise DaemonStartError(f"the vault {vault} is not a folder.\nfix: run `brain init PATH` with your notes folder.")
    s = _daemon_elsewhere(places, vault)
    if s is not None:
        return s, False
    if on_start is not None:
        on_start()
    proc = start_daemon(places, vault)
    return wait_for_socket(places, vault, proc), True
