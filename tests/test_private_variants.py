"""Privacy decides from what a person would read: every generated variant of a private mark hides the page.

The pages come from bench/privacy_variants.py: each prefix (blank line,
space, HTML comment, BOM) x block shape (closed, `----`, unclosed, nested,
flow, `...` then keys, after the block, no block) x key spelling (case,
quotes, zero-width characters, dotted) x line ending (LF, CRLF, CR alone),
plus the forms that were private before the rule (docs/architecture.md
"Private pages"). Probed as a remote caller through the real dispatch.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import call
from daemon_fixtures import BRAIN, child_env  # noqa: F401

from brain.indexer.vault.parse import parse_page

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from privacy_variants import SECRET, private_variants, world_pages  # noqa: E402

VARIANTS = private_variants()
WORLD = world_pages()
HUB = "# Quokka Hub\n\nWhere every quokka plan is filed; no code word here.\n"


def test_every_variant_parses_private_and_says_why():
    open_ones = [rel for rel, text in VARIANTS.items() if parse_page(rel, text).visibility != "private"]
    assert open_ones == [], f"{len(open_ones)} of {len(VARIANTS)} variants read as world: {open_ones[:5]}"
    for rel, text in VARIANTS.items():
        p = parse_page(rel, text)
        said = p.frontmatter_error or p.visibility_doubt
        # a plain `visibility: private` needs no explanation; every other form names its line
        if said is None:
            assert p.frontmatter.get("visibility", "").lower() == "private" or \
                p.frontmatter.get("Visibility", "").lower() == "private", rel
        elif p.visibility_doubt:
            assert "line " in p.visibility_doubt, rel


def test_pages_that_plainly_say_world_or_nothing_stay_world():
    for rel, text in WORLD.items():
        p = parse_page(rel, text)
        assert (p.visibility, p.visibility_doubt) == ("world", None), rel
    # a page that talks about the mark in its prose, after its heading or in code, stays world
    prose = ("---\ntitle: How to mark\n---\n# How to mark a page\n\nvisibility: private hides a page.\n\n"
             "```yaml\nvisibility: private\n```\n")
    assert parse_page("notes/how.md", prose).visibility == "world"
    assert parse_page("notes/inline.md", "Set `visibility: private` in the block.\n").visibility == "world"


@pytest.mark.parametrize("text, line", [
    ("\n---\nvisibility: private\n---\n# Plan\n", 3),
    ("---\rtitle: Plan\rvisibility: private\r---\r# Plan\r", 3),
    ("---\nvis\u200bibility: private\n---\n# Plan\n", 2),
    ("---\ntitle: Plan\n...\nvisibility: private\n---\n# Plan\n", 4),
    ("---\nmeta:\n  visibility: private\n---\n# Plan\n", 3),
    ("---\nvisibility: world\n---\nvisibility: private\n\n# Plan\n", 4),
])
def test_the_doubt_names_the_line_a_person_reads(text, line):
    p = parse_page("secret/plan.md", text)
    assert p.visibility == "private" and p.visibility_doubt and p.visibility_doubt.startswith(f"line {line} "), \
        p.visibility_doubt


def _seed(vault: Path) -> None:
    pages = {**VARIANTS, **WORLD, "notes/quokka-hub.md": HUB}
    for rel, text in pages.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


def test_no_read_tool_serves_a_variant_to_a_remote_caller(engine, vault, remote, local):
    _seed(vault)
    engine.attach_index(watch=False)
    owner, err = call(engine, "list_pages", {"prefix": "plans/", "limit": 2000}, local)
    assert not err and owner["count"] == sum(rel.startswith("plans/") for rel in VARIANTS)
    answers = []

    def probe(tool, args):
        body, err = call(engine, tool, args, remote)
        text = json.dumps(body, ensure_ascii=False)
        for value in args.values() if tool in ("context_pack", "get_page") else ():   # slugs asked for come back
            for piece in [str(value), *str(value).split(", ")]:
                text = text.replace(json.dumps(piece, ensure_ascii=False)[1:-1], "")
        answers.append(text)
        return body, err

    for query in ("quokka plan code word", SECRET, "swordfish"):
        probe("recall", {"query": query, "limit": 50})
        probe("search", {"query": query, "limit": 50})
    probe("recall", {"grep": "code word"})
    probe("get_backlinks", {"slug": "notes/quokka-hub"})
    slugs = [rel[:-3] for rel in VARIANTS]
    for i in range(0, len(slugs), 40):
        probe("context_pack", {"entities": ", ".join(slugs[i:i + 40])})
    for n, slug in enumerate(slugs):
        body, err = probe("get_page", {"slug": slug})
        assert err and body["error"] == "not_found", slug
        card, _ = probe("entity", {"name": f"Quokka Plan {n}"})
        assert card.get("found") is not True or f"{SECRET}-" not in json.dumps(card), slug
    served = "\n".join(answers)
    assert not re.search(SECRET + r"-\d", served) and "plans/" not in served and "held/" not in served
    # the probes reached real pages: the plain world ones are served
    for rel in WORLD:
        body, err = probe("get_page", {"slug": rel[:-3]})
        assert not err and "OPENWORD-" in json.dumps(body), rel
    hub_links, _ = call(engine, "get_backlinks", {"slug": "notes/quokka-hub"}, remote)
    assert any(b.get("slug", "").startswith("open/") for b in hub_links.get("backlinks", [])), hub_links


def test_doctor_names_each_misplaced_mark_and_its_line(vault, places):
    from brain.daemon import config as config_mod

    pages = {"secret/blank.md": "\n---\nvisibility: private\n---\n# Plan\n\nSWORDFISH\n",
             "secret/cr.md": "---\rvisibility: private\r---\r# Plan\r\rSWORDFISH\r",
             "secret/zwsp.md": "---\nvis\u200bibility: private\n---\n# Plan\n\nSWORDFISH\n"}
    for rel, text in pages.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_bytes(text.encode())
    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": False})
    r = subprocess.run([BRAIN, "doctor", "index", "--json"], capture_output=True, text=True,
                       env={**child_env(), "BRAIN_VAULT": str(vault)}, timeout=120)
    rows = [x for x in json.loads(r.stdout) if x["check"] == "bad frontmatter" and x["status"] == "warn"]
    details = {x["detail"].split(":", 1)[0]: x["detail"] for x in rows}
    assert set(details) == set(pages), details
    assert "line 3" in details["secret/blank.md"] and "line 2" in details["secret/cr.md"]
    assert "line 2" in details["secret/zwsp.md"] and "\\u200b" in details["secret/zwsp.md"]
