"""The text-splicing JSON editor: an insert changes the value exactly as asked,
keeps every other byte, and removing what it inserted gives the input back."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from brain.hooks import install as inst
from brain.hooks import json_splice as js
from brain.hooks.harnesses import HARNESSES

scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=12)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.text(max_size=8), inner, max_size=4), max_leaves=12)
objects = st.dictionaries(st.text(max_size=8), values, max_size=5)
styles = st.sampled_from([None, 2, 4, "\t"])


def dump(value, style) -> str:
    return json.dumps(value, indent=style, ensure_ascii=False) + ("\n" if style is not None else "")


@settings(max_examples=150, deadline=None)
@given(objects, styles, values)
def test_add_member_then_remove_it_round_trips(doc, style, new):
    key = "\u00a7added"
    doc.pop(key, None)
    text = dump(doc, style)
    added = js.add_member(text, js.parse(text), key, new)
    assert json.loads(added) == {**doc, key: new}
    assert list(json.loads(added))[-1] == key
    assert js.remove_member(added, js.parse(added), key) == text


@settings(max_examples=150, deadline=None)
@given(st.lists(values, max_size=5), styles, values)
def test_add_item_then_remove_it_round_trips(items, style, new):
    text = dump({"list": items}, style)
    root = js.parse(text)
    added = js.add_item(text, root.get("list").node, new)
    assert json.loads(added) == {"list": [*items, new]}
    arr = js.parse(added).get("list").node
    assert js.remove_item(added, arr, len(arr.items) - 1) == text


@settings(max_examples=100, deadline=None)
@given(objects, styles)
def test_install_then_uninstall_is_the_identity_on_any_settings_file(doc, style):
    doc.pop("hooks", None)
    text = dump(doc, style)
    events = HARNESSES["codex"].events
    added = inst.add_hooks(text, events, "brain hook session-start", 5)
    assert inst.has_our_hooks(added) and not inst.has_our_hooks(text)
    assert inst.remove_hooks(added) == text


def test_parse_records_positions():
    text = '{ "a" : [1, {"b": "x\\"y"}], "c": null }'
    root = js.parse(text)
    assert [m.key for m in root.members] == ["a", "c"]
    arr = root.get("a").node
    assert text[arr.start:arr.end] == '[1, {"b": "x\\"y"}]'
    assert js.value_of(text, arr.items[1]) == {"b": 'x"y'}
    assert js.indent_unit('{\n\t"a": 1\n}') == "\t" and js.indent_unit("{}") == "  "
