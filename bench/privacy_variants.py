"""Pages that mark themselves private in the ways a person writes or damages a mark.

Generated, not listed: every prefix x block shape x key spelling x line
ending, each page with its own secret word, so a test or the abuse bench
checks the rule of docs/architecture.md "Private pages" on the product
rather than on one page. `HELD_BEFORE` are forms that were private before
the rule, kept as a family of their own so they keep holding.
"""

from __future__ import annotations

import itertools

SECRET = "SWORDFISH"

# what may come before the block
PREFIXES = {
    "none": "",
    "blank-line": "\n",
    "space": " ",
    "html-comment": "<!-- draft -->\n",
    "bom": "\ufeff",
}

# how the block is drawn around the key line `{key}`
SHAPES = {
    "closed": "---\ntitle: {title}\n{key}: private\n---\n",
    "four-dashes": "----\ntitle: {title}\n{key}: private\n----\n",
    "unclosed": "---\ntitle: {title}\n{key}: private\n\n",
    "nested": "---\ntitle: {title}\nmeta:\n  {key}: private\n---\n",
    "flow-nested": "---\ntitle: {title}\nmeta: {{{key}: private}}\n---\n",
    "dots-then-keys": "---\ntitle: {title}\n...\n{key}: private\n---\n",
    "after-block": "---\ntitle: {title}\n---\n{key}: private\n\n",
    "no-block": "{key}: private\n\n",
}

KEYS = {
    "plain": "visibility",
    "cased": "Visibility",
    "double-quoted": '"visibility"',
    "single-quoted": "'visibility'",
    "zero-width-inside": "vis\u200bibility",
    "zero-width-after": "visibility\u200d",
    "spaced": "visibility ",
    "dotted": "meta.visibility",
}

ENDINGS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}

# private before the rule: YAML errors, [private], case, trailing space,
# tabs, BOM, CRLF, typos, block lists, a doubled key
HELD_BEFORE = {
    "yaml-error": "---\ntitle: {title}\nvisibility: private\nowner: [unclosed\n---\n",
    "list-mark": "---\ntitle: {title}\nvisibility: [private]\n---\n",
    "cased-value": "---\ntitle: {title}\nVisibility: Private\n---\n",
    "trailing-space": "---\ntitle: {title}\nvisibility: private   \n---\n",
    "tab-indent": "---\ntitle: {title}\n\tvisibility: private\n---\n",
    "bom": "\ufeff---\ntitle: {title}\nvisibility: private\n---\n",
    "crlf": "---\r\ntitle: {title}\r\nvisibility: private\r\n---\r\n",
    "typo-value": "---\ntitle: {title}\nvisibility: privte\n---\n",
    "block-list": "---\ntitle: {title}\nvisibility:\n  - private\n---\n",
    "doubled": "---\ntitle: {title}\nvisibility: private\nvisibility: world\n---\n",
    "unclosed-plain": "---\ntitle: {title}\nvisibility: private\n\n",
}

# pages that plainly say world, or say nothing: these stay readable
WORLD = {
    "absent": "---\ntitle: {title}\n---\n",
    "world": "---\ntitle: {title}\nvisibility: world\n---\n",
    "public-crlf": "---\r\ntitle: {title}\r\nVisibility: Public\r\n---\r\n",
    "quoted-world": '---\ntitle: {title}\n"visibility": world\n---\n',
    "no-frontmatter": "",
}


def body(title: str, word: str, eol: str = "\n") -> str:
    return eol.join([f"# {title}", "", f"The code word is {word}; the plan links [[Quokka Hub]].", ""])


def private_variants() -> dict[str, str]:
    """rel path → page text, for every combination; each names `SECRET-<n>` in its body."""
    pages: dict[str, str] = {}
    combos = itertools.product(PREFIXES.items(), SHAPES.items(), KEYS.items(), ENDINGS.items())
    for n, ((p, prefix), (s, shape), (k, key), (e, eol)) in enumerate(combos):
        title = f"Quokka Plan {n}"
        head = prefix + shape.format(title=title, key=key)
        pages[f"plans/{p}-{s}-{k}-{e}.md"] = (head + body(title, f"{SECRET}-{n}")).replace("\n", eol)
    for n, (name, shape) in enumerate(HELD_BEFORE.items(), start=len(pages)):
        title = f"Quokka Plan {n}"
        pages[f"held/{name}.md"] = shape.format(title=title) + body(title, f"{SECRET}-{n}")
    return pages


def world_pages() -> dict[str, str]:
    """rel path → text of pages that must stay readable; each names `OPENWORD-<n>`."""
    return {f"open/{name}.md": shape.format(title=f"Open Quokka {n}") + body(f"Open Quokka {n}", f"OPENWORD-{n}")
            for n, (name, shape) in enumerate(WORLD.items())}
