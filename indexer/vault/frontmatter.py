"""YAML frontmatter: the leading `---` block of a page.

Malformed YAML never costs the page: the block is cut off, the body is still
indexed, and the parse error travels with the page so `brain doctor` can name
the line to fix. A page whose block was refused is private until it is fixed
(docs/architecture.md, "Private pages"), since what it meant to say about its
visibility cannot be known.

Hostile blocks are bounded (docs/architecture.md, "Hostile content"): a block
over MAX_FRONTMATTER_BYTES, or whose aliases (`*name`) would expand past
MAX_FRONTMATTER_NODES values, is refused before anything is built from it.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from .visibility_lines import is_plain_key, visibility_lines

# libyaml is an order of magnitude faster; pure Python is the fallback (a wheel built without it)
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Real frontmatter is a few hundred bytes; 64 KB parses in ~40 ms, while the
# 4 MB a page may hold took 2-3 s of libyaml alone.
MAX_FRONTMATTER_BYTES = 64 * 1024
# Values the block stands for once every alias is expanded: a 400-byte
# "billion laughs" block stands for 10^9 and, expanded, stalled the daemon.
MAX_FRONTMATTER_NODES = 20_000


class _BoundedLoader(_SafeLoader):
    """The safe loader, refusing alias bombs, self-references and a doubled `visibility`."""

    def construct_document(self, node):
        _expanded_size(node)
        return super().construct_document(node)

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            # YAML keeps the last of two equal keys; for visibility that would
            # let a later line quietly undo `visibility: private`
            seen = [k for k, _ in node.value if isinstance(k, yaml.ScalarNode)
                    and isinstance(k.value, str) and k.value.strip().lower() == "visibility"]
            if len(seen) > 1:
                raise yaml.constructor.ConstructorError(
                    None, None, "`visibility` is given more than once", seen[1].start_mark)
        return super().construct_mapping(node, deep=deep)


def _expanded_size(root) -> int:
    """How many values `root` stands for with its aliases expanded; refuses past the cap or on a cycle."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise yaml.constructor.ConstructorError(
                None, None, "an alias refers to the value that contains it", node.start_mark)
        open_nodes.add(key)
        n = 1
        if isinstance(node, yaml.SequenceNode):
            n += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            n += sum(size(k) + size(v) for k, v in node.value)
        open_nodes.discard(key)
        if n > MAX_FRONTMATTER_NODES:
            raise yaml.constructor.ConstructorError(
                None, None, f"its aliases (*name) expand to more than {MAX_FRONTMATTER_NODES:,} values; "
                            "write the values out instead of repeating aliases", node.start_mark)
        sizes[key] = n
        return n

    return size(root)

# The opening fence must be the very first line; the closing one is `---`
# or YAML's document-end marker `...`.
_OPEN = re.compile(r"\A\ufeff?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
_VISIBILITY_LINE = re.compile(r"^[ \t]*visibility[ \t]*:", re.MULTILINE | re.IGNORECASE)


@dataclass
class Frontmatter:
    data: dict = field(default_factory=dict)   # JSON-safe values
    body: str = ""                             # the text after the block
    error: str | None = None                   # why the YAML was rejected
    body_line: int = 1                         # 1-based line where the body starts
    visibility_line: int | None = None         # 1-based line of the first visibility key
    stray_visibility: tuple[int, str] | None = None   # a visibility line the block does not account for


def leading_block(text: str) -> str | None:
    """The text up to the end of its frontmatter block ("" when it has none); None when the block never closes."""
    m = _OPEN.match(text)
    if not m:
        return ""
    close = _CLOSE.search(text, m.end())
    return text[:close.end()] if close else None


def split_frontmatter(text: str) -> Frontmatter:
    """Separate the frontmatter block from the body and parse it, noting any stray visibility line."""
    fm = _split_block(text)
    fm.stray_visibility = _stray_visibility(text, fm)
    return fm


def _stray_visibility(text: str, fm: Frontmatter) -> tuple[int, str] | None:
    """The first head line that reads as a `visibility` key but is not the parsed block's own top-level key.

    docs/architecture.md "Private pages": such a line is a mark the owner
    meant, which YAML did not see or saw somewhere else.
    """
    lines = visibility_lines(text)
    if not lines:
        return None
    has_key = fm.error is None and any(k.strip().lower() == "visibility" for k in fm.data)
    for n, line in lines:
        # lines 2 .. body_line - 2 are the block's own, between its two rules
        if has_key and 2 <= n <= fm.body_line - 2 and is_plain_key(line):
            continue
        return n, line
    return None


def _split_block(text: str) -> Frontmatter:
    m = _OPEN.match(text)
    if not m:
        return Frontmatter(body=text.lstrip("\ufeff"))
    close = _CLOSE.search(text, m.end())
    if close is None:
        # an opening rule with no closing one is a horizontal rule, not YAML;
        # but one followed by a visibility line was meant as frontmatter
        if _VISIBILITY_LINE.search(text, m.end()):
            return Frontmatter(body=text.lstrip("\ufeff"),
                               error="the frontmatter opens with `---` but never closes; "
                                     "add a `---` line after its last key")
        return Frontmatter(body=text.lstrip("\ufeff"))
    raw = text[m.end():close.start()]
    rest = text[close.end():]
    if rest.startswith("\r\n"):
        rest = rest[2:]
    elif rest.startswith("\n"):
        rest = rest[1:]
    body_line = text.count("\n", 0, len(text) - len(rest)) + 1
    if not raw.strip():
        return Frontmatter(body=rest, body_line=body_line)
    vis = _VISIBILITY_LINE.search(text, m.end(), close.start())
    vis_line = text.count("\n", 0, vis.start()) + 1 if vis else None
    if len(raw) > MAX_FRONTMATTER_BYTES:
        return Frontmatter(body=rest, body_line=body_line,
                           error=f"the frontmatter is {len(raw) // 1024} KB, over the "
                                 f"{MAX_FRONTMATTER_BYTES // 1024} KB limit; move the data into the page body")
    # PyYAML with libyaml only: a hand-written fast path for simple blocks
    # saved ~45 µs a page (41 vs 88 µs) and was a second parser to keep right
    try:
        loaded = yaml.load(raw, Loader=_BoundedLoader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as e:
        return Frontmatter(body=rest, error=_describe(e), body_line=body_line)
    except (ValueError, TypeError, RecursionError) as e:  # odd scalars, deep nesting
        return Frontmatter(body=rest, error=f"frontmatter could not be read: {e}", body_line=body_line)
    if loaded is None:
        return Frontmatter(body=rest, body_line=body_line, visibility_line=vis_line)
    if not isinstance(loaded, dict):
        return Frontmatter(body=rest, body_line=body_line,
                           error=f"frontmatter is a {type(loaded).__name__}, not a set of `key: value` lines")
    return Frontmatter(data=json_safe(loaded), body=rest, body_line=body_line, visibility_line=vis_line)


# the values that clearly mean "every agent may read this" (docs/protocol.md
# §4.8); a missing key means the same
PUBLIC_VISIBILITIES = frozenset({"world", "public"})


def page_visibility(fm: Frontmatter) -> tuple[str, str | None]:
    """('world' | 'private', why the page is private although it did not plainly say so).

    Privacy fails closed: a refused block, a visibility key (in any case)
    whose value is not a plain public word, or a line a person reads as a
    visibility mark that the block does not hold as its top-level key, makes
    the page private until fixed.
    """
    if fm.error:
        return "private", None   # the error itself is reported
    for key, value in fm.data.items():
        if key.strip().lower() != "visibility":
            continue
        word = value.strip().lower() if isinstance(value, str) else None
        if word in PUBLIC_VISIBILITIES:
            continue
        if word == "private":   # keys and values in any case (docs/protocol.md §4.8)
            return "private", None
        where = f"frontmatter line {fm.visibility_line}" if fm.visibility_line else "the frontmatter"
        return "private", (f"`{key}: {value}` at {where} is not `visibility: private`, `world` or `public`; "
                           "the page is private until it says one of them")
    if fm.stray_visibility:
        n, line = fm.stray_visibility
        shown = " ".join(line.split())[:80].encode("unicode_escape").decode("ascii")
        return "private", (f"line {n} (`{shown}`) reads as a visibility mark that the frontmatter does not hold; "
                           "the page is private until `visibility: ...` is a plain top-level key of a block "
                           "that opens with `---` on the first line and closes with `---` (and no other "
                           "line says visibility)")
    return "world", None


def _describe(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if mark is not None:
        # +2: the mark is 0-based and the block starts after the `---` line
        where = f"invalid YAML at frontmatter line {mark.line + 2}"
        start = getattr(e, "context_mark", None)
        if start is not None and start.line != mark.line:
            # libyaml notices an unclosed `[` or `{` where the block ends: name where it opened too
            where += f" ({getattr(e, 'context', None) or 'in the value'} from line {start.line + 2})"
        return f"{where}: {problem}"
    return f"invalid YAML: {problem}"


def json_safe(value, depth: int = 0):
    """Frontmatter as JSON can carry it: dates become ISO strings, keys strings."""
    if depth > 20:
        return str(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [json_safe(v, depth + 1) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def scalar_text(value) -> str | None:
    """A frontmatter value meant as one piece of text (title, type, summary)."""
    if value is None or isinstance(value, (dict, list)):
        return None
    text = " ".join(str(value).split())
    return text or None


def split_tags(value) -> list[str]:
    """`tags` as a list, or a string separated by commas or spaces; `#` optional."""
    if value is None:
        return []
    if isinstance(value, str):
        items = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        items = []
        for v in value:
            if isinstance(v, str):
                items.extend(re.split(r"[,\s]+", v))
            elif v is not None and not isinstance(v, (dict, list)):
                items.append(str(v))
    else:
        items = [str(value)]
    out: list[str] = []
    for item in items:
        tag = item.strip().lstrip("#").lower()
        if tag and tag not in out:
            out.append(tag)
    return out
