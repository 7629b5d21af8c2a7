"""`brain protocol`: the MEMORY_VERBS v1 document, derived from the live code.

Nothing here is hand-copied: descriptions, input schemas and annotations come
from the tool definitions the server advertises (`tools.VERBS`), response
schemas from the registry (`schemas.RESPONSE_SCHEMAS`). A test pins the input
schemas to what `tools/list` sends.
"""

from __future__ import annotations

import copy
import re
import textwrap

from .wire import PROTOCOL, PROTOCOL_VERSION
from .shapes import ERROR_SCHEMA, RESPONSE_SCHEMAS
from .tools import VERBS

VERSIONING_POLICY = (
    "Additive forever: the v1 verb names, parameters and response fields never change "
    "meaning or type; new optional parameters and response fields may be added, so "
    "clients must ignore fields they do not know; a breaking change would be a new "
    "protocol, MEMORY_VERBS_v2 (none is planned)."
)


def build_document() -> dict:
    """The machine-readable protocol, as `brain protocol --json` prints it."""
    verbs = {}
    for tool in VERBS:
        verbs[tool.name] = {
            "description": tool.description,
            "input_schema": tool.input_schema(),
            "annotations": dict(tool.annotations),
            "response_schema": copy.deepcopy(RESPONSE_SCHEMAS[tool.name]),
        }
    return {
        "protocol": PROTOCOL,
        "protocol_version": PROTOCOL_VERSION,
        "versioning_policy": VERSIONING_POLICY,
        "verbs": verbs,
        "error_schema": copy.deepcopy(ERROR_SCHEMA),
    }


def _first_sentence(text: str) -> str:
    # drop the "MEMORY VERB (v1): " / "[EXPENSIVE …] " lead so the line says what the verb does
    expensive = text.startswith("[EXPENSIVE")
    body = re.sub(r"^MEMORY VERB \(v1\):\s*|^\[[^\]]*\]\s*", "", text)
    m = re.search(r"(?<=[.!?])\s", body)
    sentence = (body[: m.start()] if m else body).strip()
    return f"[EXPENSIVE] {sentence}" if expensive else sentence


def render_text(doc: dict | None = None) -> str:
    """A readable summary: one signature and one sentence per verb."""
    doc = doc or build_document()
    lines = [f"{doc['protocol']} v{doc['protocol_version']} — the memory verbs this server speaks", ""]
    for name, verb in doc["verbs"].items():
        schema = verb["input_schema"]
        required = set(schema.get("required", []))
        params = [p if p in required else p + "?" for p in schema.get("properties", {})]
        lines.append(f"  {name}({', '.join(params)})")
        lines += textwrap.wrap(_first_sentence(verb["description"]), 96,
                               initial_indent="      ", subsequent_indent="      ")
    lines += [
        "",
        "  ? marks an optional parameter. Every response carries protocol_version: 1;",
        "  errors are {error, message, suggestion, protocol_version} with isError set.",
        "",
        "Full schemas (inputs, responses, errors): brain protocol --json",
        "Certify a server against this protocol:  brain protocol conformance --target CMD|URL",
    ]
    return "\n".join(lines)
