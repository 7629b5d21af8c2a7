"""YAML frontmatter: the leading `---` block of a page.

Malformed YAML never costs the page: the block is cut off, the body is still
indexed, and the parse error travels with the page so `brain doctor` can name
the line to fix.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass, field

import yaml

try:  # libyaml is an order of magnitude faster; pure Python is the fallback
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the wheel
    _Loader = yaml.SafeLoader

# The opening fence must be the very first line; the closing one is `---`
# or YAML's document-end marker `...`.
_OPEN = re.compile(r"\A\ufeff?---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)


@dataclass
class Frontmatter:
    data: dict = field(default_factory=dict)   # JSON-safe values
    body: str = ""                             # the text after the block
    error: str | None = None                   # why the YAML was rejected
    body_line: int = 1                         # 1-based line where the body starts


def split_frontmatter(text: str) -> Frontmatter:
    """Separate the frontmatter block from the body and parse it."""
    m = _OPEN.match(text)
    if not m:
        return Frontmatter(body=text.lstrip("\ufeff"))
    close = _CLOSE.search(text, m.end())
    if close is None:
        # an opening rule with no closing one is a horizontal rule, not YAML
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
    fast = simple_yaml(raw)
    if fast is not None:
        return Frontmatter(data=fast, body=rest, body_line=body_line)
    try:
        loaded = yaml.load(raw, Loader=_Loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as e:
        return Frontmatter(body=rest, error=_describe(e), body_line=body_line)
    except (ValueError, TypeError, RecursionError) as e:  # odd scalars, deep nesting
        return Frontmatter(body=rest, error=f"frontmatter could not be read: {e}", body_line=body_line)
    if loaded is None:
        return Frontmatter(body=rest, body_line=body_line)
    if not isinstance(loaded, dict):
        return Frontmatter(body=rest, body_line=body_line,
                           error=f"frontmatter is a {type(loaded).__name__}, not a set of `key: value` lines")
    return Frontmatter(data=json_safe(loaded), body=rest, body_line=body_line)


# -- a fast path for the frontmatter most pages have ----------------------------
#
# `key: value`, `key: [a, "b"]` and block lists of scalars, nothing nested.
# Anything outside this subset (numbers, dates, anchors, multi-line values,
# escapes JSON does not know) returns None and goes to the YAML parser, so
# the result is always what YAML itself would say; a property test holds the
# two to that.

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*$")
_ITEM = re.compile(r"^[ \t]+-[ \t]+(.*?)[ \t]*$")
_PLAIN = re.compile(r"^[A-Za-z][A-Za-z0-9 _./()+&-]*$")
_DQ = re.compile(r'^"(?:[^"\\\n]|\\["\\/bfnrtu])*"$')
_SQ = re.compile(r"^'(?:[^'\n]|'')*'$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null"}
_FAIL = object()


def _scalar(text: str):
    if _DQ.match(text):
        try:
            return json.loads(text)
        except ValueError:
            return _FAIL
    if _SQ.match(text):
        return text[1:-1].replace("''", "'")
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text.rstrip()
    return _FAIL


def _flow_list(text: str):
    inner = text[1:-1].strip()
    if not inner:
        return []
    if any(c in inner for c in "[]{}#"):
        return _FAIL
    items = []
    for part in inner.split(","):
        part = part.strip()
        value = _scalar(part) if part else _FAIL
        if value is _FAIL or (part.startswith('"') and "," in value):
            return _FAIL  # a quoted comma would have split wrongly
        items.append(value)
    return items


def simple_yaml(raw: str) -> dict | None:
    """Parse the common subset of frontmatter; None when YAML must decide."""
    if "\t" in raw:
        return None     # tabs are indentation errors in some places, spaces in others
    out: dict = {}
    key = None          # the key whose block list is being read
    for line in raw.split("\n"):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] == " ":
            m = _ITEM.match(line)
            if key is None or not m:
                return None
            value = _scalar(m.group(1))
            if value is _FAIL:
                return None
            out[key] = (out[key] or []) + [value]
            continue
        m = _KEY.match(line)
        if not m:
            return None
        text = m.group(2)
        if not text:
            key = m.group(1)
            out[key] = None
            continue
        key = None
        value = _flow_list(text) if text.startswith("[") and text.endswith("]") else _scalar(text)
        if value is _FAIL:
            return None
        out[m.group(1)] = value
    return out


def _describe(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if mark is not None:
        # +2: the mark is 0-based and the block starts after the `---` line
        return f"invalid YAML at frontmatter line {mark.line + 2}: {problem}"
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
