"""The daemon's embedder: onnxruntime over the exported MiniLM, its agreement with
sentence-transformers, the fallback, the priority lane and the build order."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, SAMPLE_BRAIN
from vectors_fixtures import ChunkTable, minilm, shared_reference  # noqa: F401  (minilm is a fixture)

pytestmark = pytest.mark.model

AGREEMENT_TEXTS = 200


def chunk_texts(vault: Path, places) -> list[str]:
    """The vault's distinct chunk texts exactly as the vector build embeds them (heading + text)."""
    from brain.daemon.server.vault_engine import VaultEngine

    e = VaultEngine(vault, places, {}, writer="test")
    try:
        e.attach_index()
        rows = e.page_db.execute("SELECT heading, text FROM chunks GROUP BY hash ORDER BY MIN(id)").fetchall()
    finally:
        e.close()
    return [f"{h}\n{t}" if h else t for h, t in rows]


def top10(vectors: np.ndarray) -> list[set[int]]:
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    return [set(np.argsort(-row)[:10].tolist()) for row in sims]


def test_daemon_embeddings_agree_with_sentence_transformers(tmp_path, places, minilm):  # noqa: F811
    """200 real chunks (sample_brain, then the bench corpus): mean cosine ≥ 0.9999, top-10 overlap ≥ 0.995."""
    sys.path.insert(0, str(REPO / "bench"))
    from corpus import generate

    sample = tmp_path / "sample"
    shutil.copytree(SAMPLE_BRAIN, sample, ignore=shutil.ignore_patterns(".brain"))
    texts = chunk_texts(sample, places)
    generate(tmp_path / "corpus", 80)
    texts += chunk_texts(tmp_path / "corpus", places)
    texts = list(dict.fromkeys(texts))[:AGREEMENT_TEXTS]
    assert len(texts) == AGREEMENT_TEXTS and len(min(texts, key=len)) < 80 < len(max(texts, key=len)) > 600

    ours = np.vstack([minilm.embed_background(texts[i:i + 8]) for i in range(0, len(texts), 8)])
    want = shared_reference().embed(texts)
    assert minilm.backend == "onnxruntime" and minilm.model_id == shared_reference().model_id
    cosines = np.sum(ours * want, axis=1)
    assert float(cosines.mean()) >= 0.9999 and float(cosines.min()) >= 0.999
    overlap = np.mean([len(a & b) / 10 for a, b in zip(top10(ours), top10(want))])
    assert overlap >= 0.995
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_one_text_embeds_alike_alone_and_in_a_padded_batch(minilm):  # noqa: F811
    """Padding must not leak into the mean: a short text beside a long one gets its own vector."""
    short, long = "quarterly planning", "A long paragraph about the launch plan. " * 30
    alone = minilm.embed([short])[0]
    batched = minilm.embed([long, short])[1]
    assert float(alone @ batched) > 0.99999
    assert minilm.embed([]).shape == (0, minilm.dim)


def test_the_export_is_cached_by_model_version_and_reused(monkeypatch, tmp_path, minilm):  # noqa: F811
    """No second export: a cached one is found under the models folder, keyed by the model package version."""
    from conftest import MODEL_CACHE

    from brain.indexer.embeddings import onnx_export
    from brain.indexer.embeddings.model_loader import load_minilm

    folder = onnx_export.cached(models=MODEL_CACHE)
    assert folder is not None and onnx_export.package_version() in folder.name
    assert json.loads((folder / "manifest.json").read_text())["model"] == minilm.model_id
    monkeypatch.setenv("BRAIN_MODEL_CACHE", str(MODEL_CACHE))
    monkeypatch.setattr(onnx_export.subprocess, "Popen", None)  # an export attempt would raise TypeError
    emb = load_minilm(tmp_path / "cache")
    assert emb.backend == "onnxruntime" and emb.fallback_reason is None


def test_the_export_writes_nothing_others_can_read(tmp_path):
    """The export child runs with the daemon's umask (077): every file it writes is 0600,
    the tokenizer copied out of the model package (0644 there) too, as doctor requires."""
    import stat

    out = tmp_path / "models" / "export"
    done = subprocess.run([sys.executable, "-m", "brain.indexer.embeddings.onnx_export", str(out)], capture_output=True,
                          text=True, timeout=600, preexec_fn=lambda: os.umask(0o077),
                          env=dict(os.environ, HF_HUB_OFFLINE="1"))
    assert done.returncode == 0, done.stderr
    modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in out.iterdir()}
    assert "tokenizer.json" in modes and set(modes.values()) == {0o600}, modes


def test_when_the_export_cannot_run_the_daemon_falls_back_and_says_so(monkeypatch, tmp_path, places, local):
    """A failed export (here: the child cannot import torch) → sentence-transformers, same model id,
    and status names the backend and the reason."""
    from conftest import call

    from brain.daemon.server.vault_engine import VaultEngine
    from brain.indexer.embeddings import onnx_export

    monkeypatch.setenv("BRAIN_MODEL_CACHE", str(tmp_path / "empty-model-cache"))
    blocker = tmp_path / "no-torch"
    blocker.mkdir()
    (blocker / "torch.py").write_text("raise ImportError('torch is not installed here')\n")
    monkeypatch.setenv("PYTHONPATH", str(blocker))
    with pytest.raises(onnx_export.ExportFailed, match="torch is not installed here"):
        onnx_export.ensure(tmp_path)
    assert onnx_export.cached(tmp_path) is None  # nothing half-written is ever trusted

    vault = tmp_path / "vault"
    shutil.copytree(SAMPLE_BRAIN, vault, ignore=shutil.ignore_patterns(".brain"))
    e = VaultEngine(vault, places, {"embeddings.enabled": True}, writer="test")
    try:
        e.attach_index()
        e.load_models(background=False)
        body, is_error = call(e, "status", {}, local)
        assert not is_error
        assert body["model_state"] == "ready" and body["model_backend"] == "sentence-transformers"
        assert "torch is not installed here" in body["model_fallback_reason"]
        assert body["model"] == onnx_export.model_id() and body["vectors_ready"]
        assert body["vector_build"]["state"] == "done" and body["vector_build"]["total"] == body["vectors"]
    finally:
        e.close()


def test_a_query_does_not_wait_behind_the_build(minilm):  # noqa: F811
    """While two workers embed long batches back to back, one-line queries keep their own pace."""
    long_batch = ["The migration plan covers billing, search and the sync service in detail. " * 12] * 8
    stop = threading.Event()
    batches = []

    def build():
        minilm.prepare_background_thread()
        while not stop.is_set():
            t = time.perf_counter()
            minilm.embed_background(long_batch)
            batches.append(time.perf_counter() - t)

    workers = [threading.Thread(target=build) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        while not batches:
            time.sleep(0.01)
        lat = []
        for i in range(10):
            t = time.perf_counter()
            minilm.embed([f"who owns the launch {i}"])
            lat.append(time.perf_counter() - t)
            time.sleep(0.02)
    finally:
        stop.set()
        for w in workers:
            w.join()
    # a query that queued behind a batch would take at least the batch's time
    assert sorted(lat)[len(lat) // 2] < min(batches) / 2, (lat, batches)


def test_background_calls_wait_for_foreground_ones_but_not_forever():
    from brain.indexer.embeddings.embed_lanes import PriorityLane

    lane = PriorityLane(hold_s=0.05, max_wait_s=0.4)
    t = time.monotonic()
    lane.wait_for_background()
    assert time.monotonic() - t < 0.04 and lane.waits == 0  # nothing in flight: straight through
    with lane.foreground():
        t = time.monotonic()
        lane.wait_for_background()  # a query that never ends must not stop the build
        assert 0.35 <= time.monotonic() - t < 2.0
    t = time.monotonic()
    lane.wait_for_background()  # just ended: hold a moment for the burst's next call
    assert 0.03 <= time.monotonic() - t < 0.4 and lane.waits == 2
    with lane.foreground():
        pass
    t = time.monotonic()
    lane.wait_for_background(hold_s=0.0)  # the fact writer: only a call in flight holds it
    assert time.monotonic() - t < 0.03 and lane.waits == 2


def test_the_build_embeds_likely_pages_first_and_reports_its_rate(tmp_path, minilm):  # noqa: F811
    """Recently retrieved, recently modified and most linked pages come first; the meter says done/total/rate."""
    from brain.indexer.pages.db import open_db
    from brain.indexer.embeddings.vectors import ChunkVectors
    from brain.indexer.pages.chunk_rows import ChunkRows

    db = open_db(tmp_path / "index.sqlite")
    table = ChunkTable(db)
    for i in range(30):
        table.put_page(f"notes/n{i:02d}", [f"Old note number {i} about gardening and tomatoes."])
    db.execute("UPDATE pages SET updated_at = '2026-02-01T00:00:00.000Z' WHERE slug = 'notes/n10'")
    db.execute("UPDATE pages SET last_retrieved_at = '2026-03-01T00:00:00.000Z' WHERE slug = 'notes/n20'")
    hub = db.execute("SELECT id FROM pages WHERE slug = 'notes/n05'").fetchone()[0]
    for i in (1, 2, 3):
        src = db.execute("SELECT id FROM pages WHERE slug = ?", (f"notes/n{i:02d}",)).fetchone()[0]
        db.execute("INSERT INTO links(from_id, target, to_id, source) VALUES (?, 'n05', ?, 'wikilink')", (src, hub))

    order = []

    class Recording:
        def __init__(self, inner):
            self.inner, self.model_id, self.dim, self.workers = inner, inner.model_id, inner.dim, 1

        def embed(self, texts):
            order.extend(texts)
            return self.inner.embed(texts)

    v = ChunkVectors(ChunkRows(db), tmp_path / "cache", Recording(minilm), batch=1)
    import brain.indexer.embeddings.vectors as vectors_mod

    old_window, vectors_mod.WINDOW = vectors_mod.WINDOW, 1  # one text per window: the order is the build order
    try:
        v.build()
    finally:
        vectors_mod.WINDOW = old_window
    assert [int(t.split()[3]) for t in order[:3]] == [20, 10, 5]  # retrieved, modified, linked
    snap = v.stats()["build"]
    assert snap["state"] == "done" and snap["done"] == snap["total"] == 30 and snap["eta_s"] == 0
    v.close()
    db.close()


def test_the_time_left_follows_the_characters_left_not_the_chunk_count():
    """Each window is embedded shortest first: 100 short chunks done fast must not
    promise that the 1,800 longer ones left go as fast (docs in BuildMeter)."""
    from brain.indexer.embeddings.build_order import BuildMeter

    m = BuildMeter(workers=2)
    m.start(1900)
    m.advance(8, 1900, work_done=80, work_left=99_920)        # the first batch: the pace is measured from here
    assert m.snapshot()["eta_s"] is None                       # one reading is no pace yet
    time.sleep(0.2)
    m.advance(100, 1900, work_done=1_000, work_left=99_000)   # 10 characters a chunk so far, 55 left on average
    snap = m.snapshot()
    chunk_eta = (1900 - 100) / snap["rate_chunks_per_s"]
    assert snap["eta_s"] >= 4 * chunk_eta          # 99,000 characters at ~4,600 a second: ~20 s, not ~4
    m.advance(1900, 1900, work_done=100_000, work_left=0)
    assert m.snapshot()["eta_s"] == 0
    plain = BuildMeter()                             # a builder that reports no work: chunks, as before
    plain.start(200)
    plain.advance(0, 200)
    time.sleep(0.2)
    plain.advance(20, 200)                           # 100 a second, 180 left: about 2 s
    assert 1 <= plain.snapshot()["eta_s"] <= 4
    m.finish()
    assert m.snapshot()["eta_s"] == 0 and m.snapshot()["rate_chunks_per_s"] is None
