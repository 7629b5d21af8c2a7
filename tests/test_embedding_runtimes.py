"""Embedding runtimes in one table (indexer/embeddings/runtimes.py): the daemon takes the
first that loads, a fallback carries why the earlier could not run, and a runtime is
chosen by name."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from brain.indexer.embeddings import onnx_export, runtimes
from brain.indexer.embeddings.model_loader import ModelLoader


class HashEmbedder:
    """A small real embedder: one unit vector per text, from its bytes."""

    backend = "hash"
    fallback_reason = None
    model_id = "hash-8"
    dim = 8

    def embed(self, texts):
        rows = np.array([[b for b in (t.encode() + bytes(8))[:8]] for t in texts], dtype=np.float32) + 1
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _refuse(message: str, error=RuntimeError):
    def load(cache_root, on_phase, cancel):
        raise error(message)
    return load


@pytest.fixture
def table(monkeypatch):
    monkeypatch.setitem(runtimes.RUNTIMES, "accel", runtimes.Runtime("accel", "Accel", _refuse("no accelerator here")))
    monkeypatch.setitem(runtimes.RUNTIMES, "hash", runtimes.Runtime("hash", "hash", lambda *_: HashEmbedder()))
    monkeypatch.setitem(runtimes.RUNTIMES, "stopping", runtimes.Runtime(
        "stopping", "Stopping", _refuse("the daemon stopped during the ONNX export", onnx_export.ExportCancelled)))
    return runtimes.RUNTIMES


def test_the_first_runtime_that_loads_serves_and_carries_why_the_earlier_did_not(table, tmp_path, caplog):
    phases = []
    emb = runtimes.load_preferred(tmp_path, phases.append, order=("accel", "hash"))
    assert isinstance(emb, HashEmbedder)
    assert emb.fallback_reason == "RuntimeError: no accelerator here"
    assert phases == ["loading hash (Accel unavailable)"]
    assert "Accel model unavailable (RuntimeError: no accelerator here); falling back to hash" in caplog.text
    first = runtimes.load_preferred(tmp_path, order=("hash", "accel"))
    assert first.fallback_reason is None


def test_the_last_runtimes_failure_is_raised_and_a_cancelled_export_is_not_fallen_back_from(table, tmp_path):
    with pytest.raises(RuntimeError, match="no accelerator here"):
        runtimes.load_preferred(tmp_path, order=("accel",))
    with pytest.raises(onnx_export.ExportCancelled):
        runtimes.load_preferred(tmp_path, order=("stopping", "hash"))


def test_a_runtime_is_chosen_by_name_and_the_loader_reports_it(table, tmp_path):
    assert runtimes.load_runtime("hash", tmp_path).embed(["a"]).shape == (1, 8)
    loader = ModelLoader(factory=lambda: runtimes.load_preferred(tmp_path, order=("accel", "hash")),
                         cancel=threading.Event())
    loader.load()
    assert loader.status() == {"state": "ready", "error": None, "phase": None, "model": "hash-8", "backend": "hash",
                               "fallback_reason": "RuntimeError: no accelerator here", "queries": "full"}


def test_the_daemons_order_is_onnx_then_sentence_transformers():
    assert runtimes.PREFERENCE == ("onnxruntime", "sentence-transformers")
    assert [runtimes.RUNTIMES[n].name for n in runtimes.PREFERENCE] == list(runtimes.PREFERENCE)
    failed = onnx_export.ExportFailed("ONNX export failed: ModuleNotFoundError: No module named 'torch'")
    assert runtimes.RUNTIMES["onnxruntime"].why_not(failed) == str(failed)
    assert runtimes.RUNTIMES["onnxruntime"].why_not(ImportError("no onnxruntime")) == "ImportError: no onnxruntime"
