"""Printing a verb's answer: recall has a module of its own (recall_view.py: labels,
locations, the script formats), every other verb a renderer in render.py, and a
verb with neither is printed as JSON. Kept apart from both so neither imports
the other's caller."""

from __future__ import annotations

from . import render


def show(verb: str, body: dict, args: dict | None = None, **extra) -> None:
    if verb == "recall":
        from .recall_view import show_recall

        show_recall(body, args or {}, **extra)
        return
    fn = render.RENDERERS.get(verb)
    if fn is None:
        import json

        print(json.dumps(body, indent=2, ensure_ascii=False))
        return
    if verb == "entity":
        fn(body, args or {}, **extra)
    else:
        fn(body)
