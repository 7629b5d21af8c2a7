"""Where brain keeps things (docs/architecture.md, "Where state lives").

Read once at an entry point (`Places.from_env`) and handed down; nothing
below the entry points looks at the environment.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

APP = "brain"


@dataclass(frozen=True)
class Places:
    config_dir: Path
    cache_root: Path
    state_dir: Path
    runtime_dir: Path

    @classmethod
    def from_env(cls, environ: dict | None = None) -> "Places":
        env = os.environ if environ is None else environ
        home = env.get("BRAIN_HOME")
        if home:
            root = Path(home).expanduser().resolve()
            return cls(root / "config", root / "cache", root / "state", root / "run")
        import warnings

        import platformdirs

        with warnings.catch_warnings():
            # without XDG_RUNTIME_DIR platformdirs falls back to /tmp/runtime-<uid>
            # and warns on every call; the fallback is fine (the socket is 0600)
            warnings.simplefilter("ignore")
            runtime = platformdirs.user_runtime_dir(APP)
        return cls(
            Path(platformdirs.user_config_dir(APP)),
            Path(platformdirs.user_cache_dir(APP)),
            Path(platformdirs.user_state_dir(APP)),
            Path(runtime),
        )

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def usage_file(self) -> Path:
        return self.state_dir / "usage.jsonl"

    def vault_key(self, vault: Path) -> str:
        """A short stable name for a vault, used to separate per-vault files."""
        resolved = str(Path(vault).expanduser().resolve())
        return Path(resolved).name.replace(" ", "-")[:40] + "-" + hashlib.sha256(resolved.encode()).hexdigest()[:10]

    def cache_dir(self, vault: Path) -> Path:
        return self.cache_root / self.vault_key(vault)

    def vault_state_dir(self, vault: Path) -> Path:
        return self.state_dir / "vaults" / self.vault_key(vault)

    def socket_path(self, vault: Path) -> Path:
        # AF_UNIX paths are limited to ~108 bytes: keep the name short
        return self.runtime_dir / f"{hashlib.sha256(str(Path(vault).resolve()).encode()).hexdigest()[:12]}.sock"
