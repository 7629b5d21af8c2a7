"""Slugs and alias keys: the names pages are found by.

Three normalizers, each used on both the write and the read side:
`path_to_slug` (a vault file → its page slug), `slugify` (a free-text name →
a slug-shaped key, docs/protocol.md §4.4) and `normalize_alias` (§4.5);
`alias_display` keeps an alias's case for showing it.
"""

from __future__ import annotations

import re
import unicodedata

_COMBINING = re.compile(r"[\u0300-\u036f]")
_HEBREW_POINTS = re.compile(r"[\u0591-\u05c7]")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_WS = re.compile(r"\s+")
_LEADING_OPEN = re.compile(r"^[\"'`\[(]+")
_TRAILING_CLOSE = re.compile(r"[\"'`\])]+$")
_SLUG_SHAPED = re.compile(r"^[a-z0-9/_-]+$")


def slugify(name: str) -> str:
    """Lowercase ASCII words joined by '-' ("Alice Exämple" → "alice-example")."""
    s = unicodedata.normalize("NFKD", name.lower())
    s = _COMBINING.sub("", s)
    s = _NON_ALNUM.sub("-", s)
    return s.strip("-")


def slugify_path(name: str) -> str:
    """slugify each '/'-separated segment, keeping the folders."""
    return "/".join(p for p in (slugify(seg) for seg in name.split("/")) if p)


def name_slug(name: str) -> str:
    """The slug a typed entity name files facts under when no page has it (docs/protocol.md §4.4):
    each `/` segment slugified for a path-like name, else the whole name."""
    raw = name.strip()
    return (slugify_path(raw) or slugify(raw)) if "/" in raw else slugify(raw)


def looks_like_slug(text: str) -> bool:
    return bool(_SLUG_SHAPED.match(text))


def _segment(seg: str) -> str:
    s = unicodedata.normalize("NFD", seg)
    s = _COMBINING.sub("", s)
    s = _HEBREW_POINTS.sub("", s)
    s = unicodedata.normalize("NFC", s).lower()
    kept = []
    for ch in s:
        cat = unicodedata.category(ch)
        if ch.isspace():
            kept.append(" ")
        elif cat[0] in "LNM" or ch in "._-":
            kept.append(ch)
    s = _WS.sub("-", "".join(kept).strip())
    s = re.sub(r"-{2,}", "-", s)
    return s.strip("-")


def path_to_slug(rel_path: str) -> str:
    """A vault-relative file path → its slug ("People/Alice Smith.md" → "people/alice-smith")."""
    p = rel_path.replace("\\", "/")
    p = re.sub(r"\.(md|mdx|markdown)$", "", p, flags=re.IGNORECASE)
    p = p.lstrip("./") if p.startswith("./") else p.lstrip("/")
    return "/".join(s for s in (_segment(seg) for seg in p.split("/")) if s)


def alias_display(alias: str) -> str:
    """An alias as the page writes it, tidied: NFKC, single spaces, no wrapping quotes; case kept."""
    s = unicodedata.normalize("NFKC", alias)
    s = _WS.sub(" ", s).strip()
    s = _LEADING_OPEN.sub("", s)
    s = _TRAILING_CLOSE.sub("", s)
    return s.strip()


def normalize_alias(alias: str) -> str:
    """The lookup key for an alias (§4.5): its display form, lowercased."""
    return alias_display(alias).lower()


def split_aliases(value) -> list[str]:
    """Frontmatter `aliases` (a list, or a comma-separated string) in their display form,
    one per lookup key (the first spelling wins)."""
    if value is None:
        return []
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = [str(v) for v in value if v is not None and not isinstance(v, (dict, list, tuple))]
    elif isinstance(value, dict):
        items = []   # a mapping is a YAML slip, not a name
    else:
        items = [str(value)]
    out, keys = [], set()
    for item in items:
        shown = alias_display(item)
        key = normalize_alias(shown)
        if key and key not in keys:
            keys.add(key)
            out.append(shown)
    return out
