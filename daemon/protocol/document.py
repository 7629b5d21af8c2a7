"""`brain protocol`: the MEMORY_VERBS v1 document, derived from the live code.

Nothing here is hand-copied: descriptions, input schemas and annotations come
from the tool registry the server advertises from (`tools.REGISTRY`), response
schemas from `shapes.RESPONSE_SCHEMAS`. The verbs come first; the server's
other tools follow under `tools`, with their surfaces and write scope. A test
pins the input schemas to what `tools/list` sends.
"""

from __future__ import annotations

import copy
import re
import textwrap

from .version import PROTOCOL, PROTOCOL_VERSION
from .shapes import ERROR_SCHEMA, RESPONSE_SCHEMAS
from .tools import REGISTRY

VERSIONING_POLICY = (
    "Additive forever: the v1 verb names, parameters and response fields never change "
    "meaning or type; new optional parameters and response fields may be added, so "
    "clients must ignore fields they do not know; a breaking change would be a new "
    "protocol, MEMORY_VERBS_v2 (none is planned)."
)


def build_document() -> dict:
    """The machine-readable protocol, as `brain protocol --json` prints it."""
    verbs, tools = {}, {}
    for tool in REGISTRY:
        entry = {
            "description": tool.description,
            "input_schema": tool.input_schema(),
            "annotations": dict(tool.annotations),
        }
        if tool.is_verb:
            verbs[tool.name] = dict(entry, response_schema=copy.deepcopy(RESPONSE_SCHEMAS.get(tool.name, {})))
        else:
            tools[tool.name] = dict(entry, surfaces=list(tool.surfaces), writes=tool.writes)
    return {
        "protocol": PROTOCOL,
        "protocol_version": PROTOCOL_VERSION,
        "versioning_policy": VERSIONING_POLICY,
        "verbs": verbs,
        "error_schema": copy.deepcopy(ERROR_SCHEMA),
        "tools": tools,
    }


def _first_sentence(text: str) -> str:
    # drop the "MEMORY VERB (v1): " / "[EXPENSIVE …] " lead so the line says what the verb does
    expensive = text.startswith("[EXPENSIVE")
    body = re.sub(r"^MEMORY VERB \(v1\):\s*|^\[[^\]]*\]\s*", "", text)
    m = re.search(r"(?<=[.!?])\s", body)
    sentence = (body[: m.start()] if m else body).strip()
    return f"[EXPENSIVE] {sentence}" if expensive else sentence


def _signature(name: str, tool: dict, note: str = "") -> list[str]:
    schema = tool["input_schema"]
    required = set(schema.get("required", []))
    params = [p if p in required else p + "?" for p in schema.get("properties", {})]
    return [f"  {name}({', '.join(params)}){note}",
            *textwrap.wrap(_first_sentence(tool["description"]), 96,
                           initial_indent="      ", subsequent_indent="      ")]


def render_text(doc: dict | None = None) -> str:
    """A readable summary: one signature and one sentence per verb."""
    doc = doc or build_document()
    lines = [f"{doc['protocol']} v{doc['protocol_version']} — the memory verbs this server speaks", ""]
    for name, verb in doc["verbs"].items():
        lines += _signature(name, verb)
    if doc.get("tools"):
        lines += ["", "Other tools of this server (on the surfaces named):"]
        for name, tool in doc["tools"].items():
            lines += _signature(name, tool, f" [{', '.join(tool['surfaces'])}{'; writes' if tool['writes'] else ''}]")
    lines += [
        "",
        "  ? marks an optional parameter. Every response carries protocol_version: 1;",
        "  errors are {error, message, suggestion, protocol_version} with isError set.",
        "",
        "Full schemas (inputs, responses, errors): brain protocol --json",
        "Certify a server against this protocol:  brain protocol conformance --target CMD|URL",
    ]
    return "\n".join(lines)
