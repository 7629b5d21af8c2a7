"""entity: one card for a person, company or project (docs/protocol.md §3.3)."""

from __future__ import annotations

import time

from .cards import lookup
from ..protocol.caller import Caller
from ..protocol.errors import InvalidParams
from ..protocol.version import PROTOCOL_VERSION
from ..stores.engine import Engine


def entity(engine: Engine, args: dict, caller: Caller) -> dict:
    """Resolve `name` and return its card, or found:false with near misses. Never errors on a miss."""
    started = time.monotonic()
    name = args["name"].strip()
    if not name:
        raise InvalidParams(
            "name is empty.",
            'Pass the entity to look up as `name`: a name ("Alice Example"), an alias, or a '
            'slug ("people/alice-example").',
        )
    # remote callers see world data only; the trusted local lane sees everything
    body = lookup(engine, name, world_only=caller.remote)
    body["latency_ms"] = int((time.monotonic() - started) * 1000)
    body["protocol_version"] = PROTOCOL_VERSION
    return body
