"""Shared pieces of the retrieval evaluations: a brain in a temp BRAIN_HOME,
tool calls through the real MCP SDK client over `brain serve` (stdio), and
the ranking metrics.

    with TempBrain(vault, embeddings=True) as brain:
        brain.wait_ready()
        body = anyio.run(brain.call_many, [("recall", {"query": "…"})])

Callers over `brain serve` are remote (world-visible data only), exactly as
an MCP host sees the memory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path

BRAIN = str(Path(sys.executable).parent / "brain")
CUTOFFS = (1, 5, 10)


class TempBrain:
    """A private BRAIN_HOME whose config names `vault`; stops its daemon on exit."""

    def __init__(self, vault: Path, embeddings: bool):
        self.vault = Path(vault)
        self.embeddings = embeddings
        self.home: Path | None = None
        self.env: dict = {}

    def __enter__(self) -> "TempBrain":
        from brain.daemon import config as config_mod
        from brain.daemon.places import Places

        # short path: AF_UNIX socket paths must stay under ~108 bytes
        self.home = Path(tempfile.mkdtemp(prefix="bh-eval-", dir="/tmp"))
        self.env = {**os.environ, "BRAIN_HOME": str(self.home), "BRAIN_VAULT": str(self.vault),
                    "HF_HUB_OFFLINE": "1"}
        self.env.pop("BRAIN_MCP_FORCE_SURFACE", None)
        places = Places.from_env({"BRAIN_HOME": str(self.home)})
        config_mod.save(places.config_file, {"vault": str(self.vault), "embeddings.enabled": self.embeddings,
                                             "protocol_installed_at": "2026-01-01T00:00:00.000Z"})
        return self

    def __exit__(self, *exc) -> None:
        subprocess.run([BRAIN, "daemon", "stop"], env=self.env, capture_output=True, timeout=60)
        shutil.rmtree(self.home, ignore_errors=True)

    def brain(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([BRAIN, *args], env=self.env, capture_output=True, text=True, timeout=timeout)

    def status(self) -> dict:
        out = self.brain("status", "--json")
        return json.loads(out.stdout) if out.returncode == 0 else {}

    def wait_ready(self, timeout: float = 600) -> dict:
        """Start the daemon if needed; wait for the index and, with embeddings, the vectors."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.status()
            ready = st.get("daemon") and st.get("index_ready")
            if self.embeddings:
                ready = ready and st.get("model_state") == "ready" and st.get("vectors_ready")
                if st.get("model_state") == "failed":
                    raise RuntimeError(f"embedding model failed: {st.get('model_error')}")
            if ready:
                return st
            if time.monotonic() > deadline:
                raise TimeoutError(f"brain not ready after {timeout}s: {st}")
            if not st.get("daemon"):
                self.brain("daemon", "start")
            time.sleep(0.5)

    @asynccontextmanager
    async def session(self):
        """The MCP SDK's ClientSession over `brain serve` (stdio)."""
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=BRAIN, args=["serve"], env=self.env)
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (r, w):
                async with ClientSession(r, w) as s:
                    await s.initialize()
                    yield s


async def call(session, name: str, args: dict) -> dict:
    """One tool call; the JSON body of its single text block."""
    result = await session.call_tool(name, args)
    return json.loads(result.content[0].text)


def rank_metrics(runs: list[tuple[list[str], set[str]]]) -> dict:
    """R@k (share of a question's evidence found in the top k, averaged) and MRR
    (1 / rank of the first evidence item, 0 when absent) over (ranked ids, evidence) pairs."""
    n = len(runs)
    out: dict = {}
    for k in CUTOFFS:
        total = sum(len(set(ranked[:k]) & ev) / len(ev) for ranked, ev in runs) if n else 0.0
        out[f"R@{k}"] = round(total / n, 3) if n else 0.0
    rr = 0.0
    for ranked, ev in runs:
        for i, item in enumerate(ranked):
            if item in ev:
                rr += 1.0 / (i + 1)
                break
    out["MRR"] = round(rr / n, 3) if n else 0.0
    out["n"] = n
    return out


def loadavg() -> float:
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return -1.0
