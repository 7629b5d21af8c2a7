"""Start-up sweeps brain's own leftover temp files from the vault, and nothing else."""

from __future__ import annotations

import os
import time

from indexer_fixtures import open_index, write  # noqa: F401  (fixture)
from brain.indexer.vault.visibility import Viewer


def _age(path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_leftover_temp_files_are_swept_at_start(vault, open_index):
    write(vault, "people/alice.md", "# Alice\n")
    crashed = [write(vault, ".home.md.k3j9x_2a.tmp", "half"), write(vault, "people/.alice.md.0abcdefg.tmp", "half")]
    fresh = write(vault, "people/.alice.md.zzzzzzzz.tmp", "a writer is still busy with this one")
    users = [write(vault, ".notes.tmp", "mine"), write(vault, "people/.draft.md.tmp", "mine"),
             write(vault, "people/draft.md.k3j9x_2a.tmp", "mine, not hidden")]
    for p in crashed + users:
        _age(p, 3600)
    e = open_index(vault)
    assert [p for p in crashed if p.exists()] == []
    assert fresh.exists()
    assert all(p.exists() for p in users)
    assert e.pages.get_page("people/alice", Viewer.owner()) is not None
