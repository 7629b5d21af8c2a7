"""Embedding runtimes: one declaration per way of running the bundled MiniLM.

Each `Runtime` names the backend (the `backend` an embedder reports, shown by
status and `brain doctor model`), how to load it, and how to say why it could
not load. The daemon tries `PREFERENCE` in order: onnxruntime over the cached
ONNX export first (no torch in a process that runs all day), then
sentence-transformers, which carries the reason the first could not run
(`fallback_reason`). Both give the same vectors under the same model id
(embedder.py). A new runtime is a class meeting `embedder.Embedder` and one
entry in `RUNTIMES` (docs/architecture.md, "Extension points").

Nothing here imports a model library at module level: a runtime's `load`
does, in the daemon's background loader (model_loader.py).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from . import onnx_export, query_model

if TYPE_CHECKING:
    from .embedder import LoadedEmbedder

log = logging.getLogger("brain.embedder")

PhaseFn = Callable[[str], None]


def _type_and_message(e: Exception) -> str:
    return f"{type(e).__name__}: {e}"


@dataclass(frozen=True)
class Runtime:
    name: str                                    # the embedder's `backend`
    label: str                                   # how a fallback notice names it
    # (cache root, on_phase, cancel) → a ready embedder; raises when it cannot run here
    load: Callable[[Path, PhaseFn | None, threading.Event | None], "LoadedEmbedder"]
    why_not: Callable[[Exception], str] = _type_and_message   # the reason a later runtime carries


def _load_onnx(cache_root: Path, on_phase: PhaseFn | None, cancel: threading.Event | None):
    """onnxruntime over the cached export, exporting once (in a child process) when missing."""
    from .embedder import OnnxMiniLM

    folder = onnx_export.cached(cache_root)
    if folder is None:
        if on_phase:
            on_phase("exporting the model to ONNX (once; keyword search serves meanwhile)")
        t = time.monotonic()
        folder = onnx_export.ensure(cache_root, cancel=cancel)
        log.info("exported the embedding model to ONNX in %.1fs: %s", time.monotonic() - t, folder)
    if on_phase and not query_model.query_file(folder).is_file():
        on_phase("making a faster copy of the model for queries (once, a few seconds)")
    return query_model.attach(OnnxMiniLM(folder), folder, cancel=cancel)


def _onnx_why_not(e: Exception) -> str:
    # the export child's own last error line already says what failed
    return str(e) if isinstance(e, onnx_export.ExportFailed) else _type_and_message(e)


def _load_sentence_transformers(cache_root: Path, on_phase: PhaseFn | None, cancel: threading.Event | None):
    from .embedder import MiniLMEmbedder

    return MiniLMEmbedder()


RUNTIMES: dict[str, Runtime] = {r.name: r for r in (
    Runtime("onnxruntime", "ONNX", _load_onnx, _onnx_why_not),
    Runtime("sentence-transformers", "sentence-transformers", _load_sentence_transformers),
)}

PREFERENCE = ("onnxruntime", "sentence-transformers")   # the daemon's order: the first that loads serves


def load_runtime(name: str, cache_root: Path, on_phase: PhaseFn | None = None,
                 cancel: threading.Event | None = None) -> "LoadedEmbedder":
    """The embedder of the runtime `name` (a key of RUNTIMES), loaded now."""
    return RUNTIMES[name].load(cache_root, on_phase, cancel)


def load_preferred(cache_root: Path, on_phase: PhaseFn | None = None, cancel: threading.Event | None = None,
                   order: tuple[str, ...] = PREFERENCE) -> "LoadedEmbedder":
    """The first runtime in `order` that loads; one loaded after another failed carries
    `fallback_reason`. The last one's failure is raised, and so is ExportCancelled
    (the daemon is stopping: nothing to fall back to)."""
    failed: Runtime | None = None
    reason: str | None = None
    for i, name in enumerate(order):
        runtime = RUNTIMES[name]
        if failed is not None:
            log.warning("%s model unavailable (%s); falling back to %s", failed.label, reason, runtime.name)
            if on_phase:
                on_phase(f"loading {runtime.name} ({failed.label} unavailable)")
        try:
            embedder = runtime.load(cache_root, on_phase, cancel)
        except onnx_export.ExportCancelled:
            raise
        except Exception as e:  # no onnxruntime, no torch to export with, a failed check: the next may still work
            if i == len(order) - 1:
                raise
            failed, reason = runtime, runtime.why_not(e)
            continue
        if reason is not None:
            embedder.fallback_reason = reason
        return embedder
    raise ValueError("no embedding runtime to try")
