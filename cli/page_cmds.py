"""`brain get PAGE` prints a page; `brain open PAGE` opens it (PAGE: a slug, a
file path in the vault, or a title only one page has: `page_lookup.Pages.resolve`).

open: an Obsidian vault (one with `.obsidian/`) gets Obsidian's own
`obsidian://open` URI, handed to the desktop's opener; any other vault opens
the file in $VISUAL or $EDITOR; with neither, the path is printed. The opener
is `xdg-open` (`open` on macOS) unless BRAIN_OPENER names another command.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from . import render


def _where():
    from .route import NoVault, places, vault_path

    p = places()
    try:
        vault = vault_path(p)
    except NoVault as e:
        print(f"error: {e}", file=sys.stderr)
        return None
    from .page_lookup import Pages

    return vault, Pages.of(p, vault)


def _not_found(name: str, pages) -> int:
    same_title = pages.titled(name)
    if len(same_title) > 1:  # not missing: more than one page has that title
        print(f"error: {name!r} is the title or alias of {len(same_title)} pages:", file=sys.stderr)
        for slug, rel in same_title:
            print(f"  {slug}  ({rel})", file=sys.stderr)
        print(f"fix: name one by its slug or file path, e.g. `{shlex.join(['brain', 'get', same_title[0][0]])}`",
              file=sys.stderr)
        return 1
    near = pages.near(name)
    print(f"error: no page {name!r} in the vault.", file=sys.stderr)
    if near:
        print("fix: did you mean " + " or ".join(f"{s} ({t})" for s, t in near) + "?", file=sys.stderr)
    else:
        print("fix: `brain recall WORDS` searches the pages; pass a slug like people/alice or a file path",
              file=sys.stderr)
    return 1


def get_page(name: str, *, no_daemon: bool = False, json_out: bool = False) -> int:
    where = _where()
    if where is None:
        return 1
    vault, pages = where
    hit = pages.resolve(name)
    slug = hit[0] if hit else name.strip().removesuffix(".md")
    from .route import route_or_report

    body, is_error = route_or_report("get_page", {"slug": slug}, no_daemon)
    if body is None:
        return 1
    if json_out:
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 1 if is_error else 0
    if is_error:
        if body.get("error") == "not_found":
            return _not_found(name, pages)
        render.error(body)
        return 1
    content = body.get("content") or ""
    sys.stdout.write(content if content.endswith("\n") else content + "\n")
    return 0


def obsidian_uri(vault: Path, rel_path: str) -> str:
    """Obsidian's URI for a note: the vault by its folder name, the file by its vault path."""
    return f"obsidian://open?vault={quote(vault.name, safe='')}&file={quote(rel_path.removesuffix('.md'), safe='')}"


def _opener() -> list[str]:
    chosen = os.environ.get("BRAIN_OPENER")
    if chosen:
        return shlex.split(chosen)
    return ["open"] if sys.platform == "darwin" else ["xdg-open"]


def _run(argv: list[str], what: str) -> int:
    try:
        return subprocess.call(argv)
    except OSError as e:
        print(f"error: could not start {argv[0]} to open {what}: {e.strerror or e}", file=sys.stderr)
        print("fix: set BRAIN_OPENER (or $EDITOR) to a command that exists", file=sys.stderr)
        return 1


def open_page(name: str) -> int:
    where = _where()
    if where is None:
        return 1
    vault, pages = where
    hit = pages.resolve(name)
    if hit is None:
        return _not_found(name, pages)
    rel = hit[1]
    if (vault / ".obsidian").is_dir():
        uri = obsidian_uri(vault, rel)
        return _run([*_opener(), uri], uri)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if editor:
        return _run([*shlex.split(editor), str(vault / rel)], rel)
    print(vault / rel)
    return 0
