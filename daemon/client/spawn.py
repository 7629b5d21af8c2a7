"""Finding, starting and stopping the daemon, from the client side.

Lean on purpose (standard library only): the CLI's hot path and `brain
serve` call `connect_or_start` before anything else. A socket file that
refuses connections belongs to a dead daemon; a new daemon removes it once
it holds the vault's writer lock, so two clients racing to start one end up
sharing whichever won.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from ..rendezvous import EXIT_ALREADY_RUNNING, IDENTITY_KEY, log_path, pid_path, read_pid_file, start_log_path

# how long a client waits for a fresh daemon's socket
START_TIMEOUT_S = 20.0


class DaemonStartError(RuntimeError):
    pass


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


# a stopping daemon drains calls (10 s), waits for its warm-up (15 s) and
# flushes answers (2 s): SIGKILL only after all of that had its chance
STOP_TIMEOUT_S = 30.0


def stop_daemon(places, vault: Path, timeout: float = STOP_TIMEOUT_S) -> str:
    """SIGTERM the vault's daemon and wait for it to exit; returns what happened."""
    vault = Path(vault).expanduser().resolve()
    info = read_pid_file(places, vault) or {}
    pid = info.get("pid")
    if not daemon_pid_alive(pid):
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


def stop_all(places, timeout: float = STOP_TIMEOUT_S) -> list[tuple[dict, str]]:
    """Stop every daemon `running_daemons` finds; [(its pid-file record, what happened)]."""
    return [(info, terminate(info["pid"], timeout)) for info in running_daemons(places)]
