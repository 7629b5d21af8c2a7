"""The settings that keep the model's libraries from writing or sending anything of their own.

brain's usage data is local JSONL only (docs/architecture.md, "Where files live"),
and it writes nowhere but BRAIN_HOME, the vault and the model cache. The libraries
the model loads with do not agree by default: onnxruntime keeps a device id and a
queue of telemetry events under ~/.cache/Microsoft/DeveloperTools/.onnxruntime
each time a session is created. They read these settings from the environment
when they start, before any call could turn them off (onnxruntime's
disable_telemetry_events() comes after the device id is written), so the entry
points (the CLI, the daemon) set them on their own environment and the model
children inherit it.
"""

from __future__ import annotations

from collections.abc import MutableMapping

TELEMETRY_OFF = {
    "ORT_DISABLE_TELEMETRY": "1",      # onnxruntime: no device id, no event queue
    "HF_HUB_DISABLE_TELEMETRY": "1",   # huggingface_hub, and transformers through it
    "DO_NOT_TRACK": "1",               # the convention the hub and others also honour
    "HF_HUB_OFFLINE": "1",             # the weights are bundled: never reach for (or cache from) the hub
    "TOKENIZERS_PARALLELISM": "false",
}


def turn_off_telemetry(environ: MutableMapping[str, str]) -> None:
    """Set TELEMETRY_OFF on `environ` (an entry point's os.environ, or a child's env)."""
    environ.update(TELEMETRY_OFF)
