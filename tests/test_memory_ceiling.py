"""Bounds in bytes: what a page's frontmatter stands for once expanded, and the indexer's memory.

docs/architecture.md "Hostile content": frontmatter whose aliases expand
past MAX_EXPANDED_BYTES of text is refused in milliseconds (a 6 KB string
aliased 19,000 times stayed under the count cap and took 6.8 s and 114 MB);
links and tags taken from frontmatter are capped; and a process indexing the
worst pages we can make stays under the stated memory ceiling.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

from brain.indexer.vault.frontmatter import MAX_FRONTMATTER_ITEMS
from brain.indexer.vault.parse import parse_page

# docs/architecture.md "Hostile content": the daemon's stated ceiling (embeddings off)
CEILING_MB = 1024


def bytes_bomb(string_kb: int = 6, uses: tuple = (19, 10, 99), link: bool = False) -> str:
    """One string aliased 19 x 10 x 99 = 18,810 times: under the 20,000-value cap, 113 MB expanded."""
    s = ("[[Acme]] " if link else "") + "x" * (string_kb * 1024)
    names = "abcd"
    lines = [f'a: &a "{s}"']
    for i, n in enumerate(uses):
        lines.append(f"{names[i + 1]}: &{names[i + 1]} [" + ", ".join([f"*{names[i]}"] * n) + "]")
    return "---\nvisibility: world\n" + "\n".join(lines) + "\n---\n# Bomb\n\nbody\n"


def test_a_bomb_in_bytes_is_refused_in_milliseconds_and_leaves_the_page_private():
    for link in (False, True):
        page = bytes_bomb(link=link)
        assert len(page) < 8 * 1024
        t0 = time.perf_counter()
        parsed = parse_page("notes/bomb.md", page)
        took = time.perf_counter() - t0
        assert took < 0.2, took
        assert parsed.visibility == "private" and "KB of text" in parsed.frontmatter_error
        assert parsed.frontmatter == {} and parsed.links == []


def test_links_and_tags_from_frontmatter_are_counted_out():
    many = 3 * MAX_FRONTMATTER_ITEMS
    page = ("---\nrelated: [" + ", ".join(f'"[[p{i}]]"' for i in range(many)) + "]\n"
            "tags: [" + ", ".join(f"t{i}" for i in range(many)) + "]\n---\n# Many\n")
    parsed = parse_page("notes/many.md", page)
    assert len([x for x in parsed.links if x.source == "frontmatter"]) == MAX_FRONTMATTER_ITEMS
    assert len(parsed.tags) == MAX_FRONTMATTER_ITEMS


_INDEXER = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    from brain.daemon.places import Places
    from brain.daemon.server.vault_engine import VaultEngine
    vault, home = Path(sys.argv[1]), sys.argv[2]
    e = VaultEngine(vault, Places.from_env({"BRAIN_HOME": home}), {"embeddings.enabled": False}, writer="test")
    e.attach_index()
    n = e.page_db.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
    e.close()
    hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
    print(json.dumps({"pages": n, "hwm_mb": int(hwm) / 1024}))
""")


def test_indexing_the_worst_pages_stays_under_the_memory_ceiling(tmp_path):
    """The worst pages we can make, indexed by a fresh process: its peak resident memory (VmHWM)."""
    from brain.indexer.vault.frontmatter import MAX_FRONTMATTER_BYTES
    from brain.indexer.vault.scan import MAX_PAGE_BYTES

    vault = tmp_path / "vault"
    (vault / "worst").mkdir(parents=True)
    pages = {
        "bytes-bomb": bytes_bomb(),
        "bytes-bomb-links": bytes_bomb(link=True),
        # just under every frontmatter cap: 64 KB, close to 20,000 values and 256 KB once expanded
        "full-block": "---\n" + "".join(f"k{i}: [[L{i}]]\n" for i in range(3000))[:MAX_FRONTMATTER_BYTES - 200]
                      .rsplit("\n", 1)[0] + "\n---\n# Full\n",
        # a page just under the size limit, all links, then all dated bullets, then all headings
        "links": "# Links\n\n" + "[[p]] " * ((MAX_PAGE_BYTES - 100) // 6),
        "dates": "# Dates\n\n" + "- 2026-12-07 met [[Acme]]\n" * ((MAX_PAGE_BYTES - 100) // 27),
        "headings": "# Headings\n\n" + "## h\n\nx\n\n" * ((MAX_PAGE_BYTES - 100) // 10),
    }
    for name, text in pages.items():
        assert len(text.encode()) < MAX_PAGE_BYTES, name
        (vault / "worst" / f"{name}.md").write_text(text)
    r = subprocess.run([sys.executable, "-c", _INDEXER, str(vault), str(tmp_path / "home")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["pages"] == len(pages), got
    assert got["hwm_mb"] < CEILING_MB, got
