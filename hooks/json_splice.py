"""Edit a JSON document as text, so every byte we do not touch stays as it was.

Settings files belong to the user and to other tools: re-serializing one would
reorder nothing (Python keeps key order) but could still rewrite escapes,
spacing and one-line arrays. Instead we parse with positions and splice: an
insertion adds exactly one member or element in the file's own indentation
style, and removing that same item deletes exactly the bytes the insertion
added, so install followed by uninstall gives the original file back.

Only valid JSON is handled (the caller validates with `json.loads` first).
A JSONC file (comments, trailing commas: VS Code's own format) is edited
through its blanked twin: `blank_comments` turns every comment and trailing
comma into spaces, the edit is made there, and `carry` applies it to the real
text at the same offsets, so the comments stay where they were.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_WS = " \t\r\n"
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"', re.S)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_INDENTED_LINE = re.compile(r"\n([ \t]+)\S")
_LITERAL = re.compile(r"true|false|null")


@dataclass
class Node:
    """A JSON value and where it sits: text[start:end] is the value."""

    kind: str                 # "object" | "array" | "scalar"
    start: int
    end: int
    members: list["Member"] = field(default_factory=list)   # objects
    items: list["Node"] = field(default_factory=list)       # arrays

    def get(self, key: str) -> "Member | None":
        for m in self.members:
            if m.key == key:
                return m
        return None


@dataclass
class Member:
    key: str
    start: int      # where the key's opening quote is
    key_end: int    # just after the key's closing quote
    node: Node


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.i = 0

    def ws(self) -> None:
        t, i = self.text, self.i
        while i < len(t) and t[i] in _WS:
            i += 1
        self.i = i

    def value(self) -> Node:
        self.ws()
        t, i = self.text, self.i
        c = t[i]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c == '"':
            m = _STRING.match(t, i)
        elif c in "-0123456789":
            m = _NUMBER.match(t, i)
        else:
            m = _LITERAL.match(t, i)
        if not m:
            raise ValueError(f"unexpected character at offset {i}")
        self.i = m.end()
        return Node("scalar", i, m.end())

    def obj(self) -> Node:
        node = Node("object", self.i, -1)
        self.i += 1
        self.ws()
        if self.text[self.i] == "}":
            self.i += 1
            node.end = self.i
            return node
        while True:
            self.ws()
            m = _STRING.match(self.text, self.i)
            if not m:
                raise ValueError(f"expected a key at offset {self.i}")
            key = json.loads(m.group(0))
            self.i = m.end()
            self.ws()
            self.i += 1  # the colon
            child = self.value()
            node.members.append(Member(key, m.start(), m.end(), child))
            self.ws()
            c = self.text[self.i]
            self.i += 1
            if c == "}":
                node.end = self.i
                return node

    def arr(self) -> Node:
        node = Node("array", self.i, -1)
        self.i += 1
        self.ws()
        if self.text[self.i] == "]":
            self.i += 1
            node.end = self.i
            return node
        while True:
            node.items.append(self.value())
            self.ws()
            c = self.text[self.i]
            self.i += 1
            if c == "]":
                node.end = self.i
                return node


def parse(text: str) -> Node:
    """The value tree of a valid JSON document, with positions."""
    json.loads(text)  # the real validator: raises a precise JSONDecodeError
    return _Parser(text).value()


def indent_unit(text: str) -> str:
    """The file's indentation step: the first indented line's leading
    whitespace (two spaces when the file has none)."""
    m = _INDENTED_LINE.search(text)
    return m.group(1) if m else "  "


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    j = line_start
    while j < len(text) and text[j] in " \t":
        j += 1
    return text[line_start:j]


def _render(value, unit: str, indent: str | None) -> str:
    """JSON for `value`: block style continued at `indent`, or one line when
    indent is None (the surrounding container is written on one line)."""
    if indent is None:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return json.dumps(value, ensure_ascii=False, indent=unit).replace("\n", "\n" + indent)


def _key_sep(text: str, obj: Node) -> str:
    """The spelling between a key and its value in this object (`: ` or `:`)."""
    if obj.members:
        m = obj.members[0]
        return text[m.key_end:m.node.start]
    return ": "


def _insert(text: str, container: Node, spans: list[tuple[int, int]], piece_for, unit: str) -> str:
    """Append one piece after the last of `spans` (start, end) in `container`,
    separated the way the container already separates its pieces."""
    open_, close = container.start, container.end - 1
    if not spans:
        base = _line_indent(text, open_)
        inner = base + unit
        return text[: open_ + 1] + "\n" + inner + piece_for(inner) + "\n" + base + text[close:]
    if len(spans) > 1:
        sep = text[spans[0][1]: spans[1][0]]          # e.g. ",\n    " or ", "
    else:
        lead = text[open_ + 1: spans[0][0]]
        sep = "," + lead if "\n" in lead else "," + (lead or " ")
    # the line break and indentation only: blank lines and blanked comments are not repeated
    sep = ",\n" + sep.rsplit("\n", 1)[1] if "\n" in sep else ("," + " " if " " in sep else ",")
    indent = sep.rsplit("\n", 1)[1] if "\n" in sep else None
    last_end = spans[-1][1]
    return text[:last_end] + sep + piece_for(indent) + text[last_end:]


def add_member(text: str, obj: Node, key: str, value) -> str:
    """Append `"key": value` as the object's last member."""
    unit = indent_unit(text)
    sep = _key_sep(text, obj)
    spans = [(m.start, m.node.end) for m in obj.members]
    return _insert(text, obj, spans,
                   lambda ind: json.dumps(key, ensure_ascii=False) + sep + _render(value, unit, ind), unit)


def add_item(text: str, arr: Node, value) -> str:
    """Append `value` as the array's last element."""
    unit = indent_unit(text)
    return _insert(text, arr, [(n.start, n.end) for n in arr.items], lambda ind: _render(value, unit, ind), unit)


def _remove(text: str, container: Node, spans: list[tuple[int, int]], idx: int) -> str:
    if len(spans) == 1:
        return text[: container.start + 1] + text[container.end - 1:]
    if idx > 0:
        return text[: spans[idx - 1][1]] + text[spans[idx][1]:]
    return text[: spans[0][0]] + text[spans[1][0]:]


def remove_member(text: str, obj: Node, key: str) -> str:
    """Delete the member `key` and the separator that came with it."""
    spans = [(m.start, m.node.end) for m in obj.members]
    idx = next(i for i, m in enumerate(obj.members) if m.key == key)
    return _remove(text, obj, spans, idx)


def remove_item(text: str, arr: Node, idx: int) -> str:
    """Delete element `idx` and the separator that came with it."""
    return _remove(text, arr, [(n.start, n.end) for n in arr.items], idx)


def value_of(text: str, node: Node):
    """The Python value of a node."""
    return json.loads(text[node.start:node.end])


def replace_value(text: str, node: Node, value) -> str:
    """`text` with `node`'s value replaced by `value`, in the file's indentation."""
    unit = indent_unit(text)
    line = _line_indent(text, node.start)
    one_line = "\n" not in text[node.start:node.end] and node.kind != "scalar"
    return text[:node.start] + _render(value, unit, None if one_line else line) + text[node.end:]


_JSONC_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/|,(?=(?:\s|//[^\n]*|/\*.*?\*/)*[}\]])|/\*',
                          re.S)


def blank_comments(text: str) -> str:
    """`text` with each comment and trailing comma turned into spaces (newlines kept), so
    offsets stay the same and the result is plain JSON when the file was valid JSONC."""
    out = []
    last = 0
    for m in _JSONC_TOKEN.finditer(text):
        tok = m.group(0)
        if tok.startswith('"'):
            continue
        if tok == "/*":
            raise ValueError(f"a comment opened at offset {m.start()} is never closed")
        out.append(text[last:m.start()])
        out.append(re.sub(r"[^\n]", " ", tok))
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def carry(original: str, before: str, after: str) -> str:
    """Apply the edit that turned `before` (the blanked twin of `original`) into `after`
    to `original` itself. Refused (ValueError) when it would delete or split a comment."""
    p = 0
    n = min(len(before), len(after))
    while p < n and before[p] == after[p]:
        p += 1
    q = 0
    while q < n - p and before[len(before) - 1 - q] == after[len(after) - 1 - q]:
        q += 1
    gone = slice(p, len(before) - q)
    if original[gone] != before[gone]:
        raise ValueError("the edit would remove a comment")
    if 0 < p < len(original) and original[p - 1] != before[p - 1] and original[p] != before[p]:
        raise ValueError("the edit would land inside a comment")
    return original[:p] + after[p:len(after) - q] + original[len(before) - q:]
