"""The tool registry: one declaration per tool, read by everything else.

A `ToolDef` says all there is to say about a tool: its name, description,
parameters (hence its input schema), annotations, the handler that runs it
(a "module:function" string imported on the first call, so listing tools or
printing help never imports a verb), whether it writes (the scope check of
docs/protocol.md §1.4 step 7), the narrowest surface it is on (docs/protocol.md
§7) and, for the MEMORY_VERBS v1 verbs, whether the protocol requires it.

tools/list, dispatch, the scope check, surface filtering, `brain protocol`,
the CLI's help and the conformance runner all read `REGISTRY`.
"""

from __future__ import annotations

import importlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Iterator

from .limits import MAX_STRING_CHARS
from .surfaces import SURFACE_ORDER

# a MEMORY_VERBS v1 verb every server must offer, or one it may leave out
# (docs/protocol.md §5); other tools are neither
CORE, OPTIONAL = "core", "optional"


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    description: str
    required: bool = False
    enum: tuple[str, ...] | None = None
    # limits of a number param, for the CLI's help and checks; the wire schema
    # keeps them in prose (docs/protocol.md §2) and the handler enforces them
    default: int | None = None
    maximum: int | None = None
    # strings only: None means MAX_STRING_CHARS; 0 means no cap here
    max_length: int | None = None
    # say the cap in the schema (maxLength)
    advertise_max: bool = False

    @property
    def length_cap(self) -> int | None:
        if self.type != "string" or self.max_length == 0:
            return None
        return self.max_length or MAX_STRING_CHARS

    def schema(self) -> dict:
        s: dict[str, object] = {"type": self.type, "description": self.description}
        if self.enum:
            s["enum"] = list(self.enum)
        if self.advertise_max and self.length_cap:
            s["maxLength"] = self.length_cap
        return s


@dataclass(frozen=True)
class ToolDef:
    name: str
    description: str
    params: tuple[Param, ...]
    annotations: dict = field(default_factory=dict)
    summary: str = ""  # one line for a person (CLI help); `description` is for agents
    handler: str = ""  # "package.module:function", called as fn(engine, args, caller)
    writes: bool = False  # needs a caller that may write
    surface: str = "full"  # the narrowest surface showing it; every wider one does too
    verb: str = ""  # CORE or OPTIONAL for a MEMORY_VERBS v1 verb, else ""
    reads_pages: bool = False  # its answer depends on the page index
    slow: bool = False  # may take seconds to minutes: runs on its own threads (server/mcp.py)

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    @property
    def is_verb(self) -> bool:
        return bool(self.verb)

    @property
    def surfaces(self) -> tuple[str, ...]:
        return SURFACE_ORDER[SURFACE_ORDER.index(self.surface):]

    def on(self, surface: str) -> bool:
        return surface in self.surfaces

    def input_schema(self) -> dict:
        return {
            "type": "object",
            "properties": {p.name: p.schema() for p in self.params},
            "required": [p.name for p in self.params if p.required],
        }

    def listing(self) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema(),
            "annotations": dict(self.annotations),
        }


class ToolRegistry:
    """The tools this server knows, in declaration order."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolDef] = {}
        self._handlers: dict[str, Callable] = {}
        # every tool by name, read-only and live
        self.by_name = MappingProxyType(self._tools)
        # bumped on every change, so a cached listing knows it is stale
        self.generation = 0

    def register(self, tool: ToolDef) -> ToolDef:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        if tool.surface not in SURFACE_ORDER:
            raise ValueError(f"tool {tool.name!r}: unknown surface {tool.surface!r}")
        if tool.verb not in ("", CORE, OPTIONAL):
            raise ValueError(f"tool {tool.name!r}: verb must be {CORE!r}, {OPTIONAL!r} or empty")
        if ":" not in tool.handler:
            raise ValueError(f"tool {tool.name!r}: handler must be \"module:function\"")
        self._tools[tool.name] = tool
        self.generation += 1
        return tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)
        self._handlers.pop(name, None)
        self.generation += 1

    @contextmanager
    def registered(self, tool: ToolDef) -> Iterator[ToolDef]:
        """The tool is known inside the block and forgotten after it."""
        self.register(tool)
        try:
            yield tool
        finally:
            self.unregister(tool.name)

    def get(self, name: str) -> ToolDef | None:
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolDef]:
        return iter(list(self._tools.values()))

    def on_surface(self, surface: str) -> list[ToolDef]:
        """The tools a surface exposes, in declaration order: verbs ⊂ starter ⊂ full."""
        if surface not in SURFACE_ORDER:
            raise ValueError(f"unknown surface {surface!r}; choose one of {', '.join(SURFACE_ORDER)}")
        return [t for t in self._tools.values() if t.on(surface)]

    def verbs(self) -> list[ToolDef]:
        return [t for t in self._tools.values() if t.is_verb]

    def handler(self, name: str) -> Callable:
        """The function behind a tool, imported on its first call."""
        fn = self._handlers.get(name)
        if fn is None:
            mod_name, _, attr = self._tools[name].handler.partition(":")
            fn = getattr(importlib.import_module(mod_name), attr)
            self._handlers[name] = fn
        return fn
