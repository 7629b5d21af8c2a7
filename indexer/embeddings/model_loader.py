"""Loading the daemon's embedding model in the background, and saying how it goes.

Nothing here imports a model library at module level: the daemon starts a
`ModelLoader` after its socket is up and serves keyword-only search until the
model is ready. `load_minilm` takes the first embedding runtime that loads
(runtimes.py: the ONNX export, else sentence-transformers, saying why).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .search_modes import MODEL_OFF

if TYPE_CHECKING:
    from .embedder import Embedder

log = logging.getLogger("brain.embedder")


def load_minilm(cache_root: Path, on_phase: Callable[[str], None] | None = None,
                cancel: threading.Event | None = None):
    """The daemon's MiniLM: the first runtime that loads (runtimes.PREFERENCE: onnxruntime over
    the cached export, exporting once if needed, else sentence-transformers with
    `fallback_reason` saying why). `cancel` ends an export in progress
    (onnx_export.ExportCancelled: no fallback, the daemon is stopping)."""
    from .runtimes import load_preferred

    return load_preferred(cache_root, on_phase, cancel)


class ModelLoader:
    """Loads an embedder in a background thread and reports how it is going.

    state: "idle" → "loading" → "ready" | "failed"; "off" (search_modes.MODEL_OFF)
    when the settings turn embeddings off. `error` says why loading failed; `phase`
    what a long load is doing (the one-time export).
    """

    def __init__(self, factory: Callable[[], Embedder | None] | None = None, cache_root: Path | None = None,
                 cancel: threading.Event | None = None):
        self._cancel = cancel or threading.Event()   # set: end a one-time export in progress
        if factory is None:
            if cache_root is None:
                raise ValueError("ModelLoader needs a factory or the cache root to export into")
            factory = lambda: load_minilm(cache_root, on_phase=self._set_phase, cancel=self._cancel)  # noqa: E731
        self._factory = factory
        self.state = "idle"
        self.phase: str | None = None
        self.error: str | None = None
        self.embedder: Embedder | None = None
        self.ready_at: float | None = None   # time.monotonic() when the model became usable
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def _set_phase(self, phase: str) -> None:
        self.phase = phase

    def disable(self) -> None:
        self.state = MODEL_OFF
        self._done.set()

    def load(self) -> Embedder | None:
        """Load in the calling thread; None (and state "failed") when the model cannot load."""
        self.state = "loading"
        from .onnx_export import ExportCancelled

        try:
            self.embedder = self._factory()
        except ExportCancelled as e:  # the daemon is stopping: nothing went wrong
            log.info("%s", e)
            self.error = str(e)
            self.state = "failed"
        except Exception as e:  # a missing or broken model degrades search; it never stops the daemon
            log.warning("embedding model failed to load: %s", e, exc_info=True)
            self.error = f"{type(e).__name__}: {e}"
            self.state = "failed"
        else:
            self.state = "ready"
            self.ready_at = time.monotonic()
        finally:
            self.phase = None
            self._done.set()
        return self.embedder

    def start(self, then: Callable[[Embedder | None], None] | None = None,
              start_after: threading.Event | None = None) -> threading.Thread:
        """Load in a daemon thread; `then(embedder_or_None)` runs in that thread afterwards.

        `start_after`: wait for this event first (the daemon sets it once its
        socket is up, so loading never delays the first answer).
        """
        def run():
            if start_after is not None:
                start_after.wait()
            emb = self.load()
            if then is not None:
                try:
                    then(emb)
                except Exception as e:
                    log.warning("after loading the model: %s", e, exc_info=True)
                    self.error = f"{type(e).__name__}: {e}"

        self._thread = threading.Thread(target=run, name="brain-model-loader", daemon=True)
        self._thread.start()
        return self._thread

    def wait(self, timeout: float | None = None) -> bool:
        """True once loading has finished (either way)."""
        return self._done.wait(timeout)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the loader thread, including its `then` step."""
        if self._thread is not None:
            self._thread.join(timeout)

    def status(self) -> dict:
        emb = self.embedder
        return {"state": self.state, "error": self.error, "phase": self.phase,
                "model": getattr(emb, "model_id", None), "backend": getattr(emb, "backend", None),
                "fallback_reason": getattr(emb, "fallback_reason", None),
                # what embeds recall's queries: the int8 query model (query_model.py) or the full one
                "queries": None if emb is None else ("int8" if getattr(emb, "for_queries", None) else "full")}
