"""The int8 query model (indexer/embeddings/query_model.py): made once from the export in a
child process and checked against the full model; it embeds recall's queries only, while every
vector that is kept, and the one remember's dedup compares, stay the full model's."""

from __future__ import annotations

import os
import shutil
import time

import numpy as np
import pytest

from brain.indexer.embeddings import query_model
from brain.indexer.embeddings.embedder import OnnxMiniLM
from brain.indexer.embeddings.onnx_export import ensure
from brain.indexer.embeddings.runtimes import load_runtime
from brain.indexer.vault.visibility import Viewer
from conftest import MODEL_CACHE, call
from vectors_fixtures import minilm, model_engine  # noqa: F401  (fixtures)

pytestmark = pytest.mark.model

TEXTS = ["Zed keeps bees on the roof of the clinic", "what does Zed do at the weekend",
         "When is the board deck due?", "hotkeys"]


@pytest.fixture(scope="module")
def export_copy(tmp_path_factory):
    """A copy of the shared export without a query model: the test makes its own."""
    src = ensure(models=MODEL_CACHE)
    dst = tmp_path_factory.mktemp("export") / src.name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(query_model.QUERY_FILE, ".query-*"))
    return dst


def test_the_query_model_is_made_once_checked_and_close_to_the_full_model(export_copy):
    assert not query_model.query_file(export_copy).exists()
    light = query_model.load(export_copy)
    made = query_model.query_file(export_copy)
    assert light is not None and made.is_file()
    assert not list(export_copy.glob(".query-*"))          # no temporary file left behind
    # a quarter of the full model's size: the weights are int8
    assert made.stat().st_size < (export_copy / "model.onnx").stat().st_size / 3
    full = OnnxMiniLM(export_copy).embed(TEXTS)
    got = light.embed(TEXTS)
    cos = np.sum(full * got, axis=1)
    assert cos.min() >= query_model.QUERY_MIN_COSINE and cos.max() < 0.99999, cos  # close, not the same
    mtime = made.stat().st_mtime_ns
    assert query_model.ensure(export_copy) == made and made.stat().st_mtime_ns == mtime  # kept, not remade


def test_without_a_model_file_there_is_no_query_model_and_nothing_is_left(tmp_path, caplog):
    broken = tmp_path / "export"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not an onnx file")
    assert query_model.load(broken) is None
    assert not query_model.query_file(broken).exists() and not list(broken.glob(".query-*"))
    assert "recall embeds its queries with the full model" in caplog.text


def test_a_model_child_says_why_it_failed_and_ends_when_the_daemon_stops(tmp_path):
    import threading

    from brain.indexer.embeddings.onnx_export import ExportCancelled, ExportFailed, run_child

    with pytest.raises(ExportFailed, match="the int8 query model failed: .*model.onnx"):
        run_child("query_model", tmp_path, "making it", 60, None)   # no export there: its own error line
    stopping = threading.Event()
    stopping.set()
    with pytest.raises(ExportCancelled, match="the daemon stopped during making it"):
        run_child("query_model", tmp_path, "making it", 60, stopping)


def test_a_broken_query_file_is_removed_so_the_next_start_makes_it_again(export_copy):
    target = query_model.query_file(export_copy)
    target.write_bytes(b"half a file")
    assert query_model.load(export_copy) is None
    assert not target.exists()
    assert query_model.load(export_copy) is not None and target.is_file()


def _unrelated_model(path) -> None:
    """A real ONNX graph with the model's inputs and output whose vectors mean nothing: every
    token's vector is its id times one fixed vector."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["b", "s"])
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["b", "s", 384])
    weight = numpy_helper.from_array(np.random.default_rng(7).standard_normal((1, 1, 384)).astype(np.float32), "w")
    axes = numpy_helper.from_array(np.array([2], dtype=np.int64), "axes")
    nodes = [helper.make_node("Cast", ["input_ids"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Unsqueeze", ["f", "axes"], ["f3"]),
             helper.make_node("Mul", ["f3", "w"], ["last_hidden_state"])]
    graph = helper.make_graph(nodes, "unrelated", inputs, [out], initializer=[weight, axes])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def test_a_query_file_that_no_longer_agrees_with_the_full_model_is_removed_and_made_again(export_copy):
    target = query_model.query_file(export_copy)
    _unrelated_model(target)
    full = OnnxMiniLM(export_copy)
    assert query_model.load(export_copy) is not None      # it loads: only the check can tell
    assert query_model.load(export_copy, full=full) is None and not target.exists()
    light = query_model.load(export_copy, full=full)
    assert light is not None and target.is_file()
    cos = float(full.embed(TEXTS[:1])[0] @ light.embed(TEXTS[:1])[0])
    assert cos >= query_model.QUERY_MIN_COSINE


def test_making_it_removes_what_a_killed_child_left_but_not_a_live_ones_file(export_copy):
    query_model.query_file(export_copy).unlink(missing_ok=True)
    old, live = export_copy / ".query-killed.onnx", export_copy / ".query-running.onnx"
    for f in (old, live):
        f.write_bytes(b"half a quantized model")
    ages_ago = time.time() - query_model.MAKE_TIMEOUT_S - 60
    os.utime(old, (ages_ago, ages_ago))
    assert query_model.load(export_copy) is not None
    assert not old.exists() and live.exists()
    live.unlink()


def test_the_daemons_runtime_loads_it_sharing_the_lanes_of_the_full_model(tmp_path, monkeypatch):
    monkeypatch.setenv("BRAIN_MODEL_CACHE", str(MODEL_CACHE))
    emb = load_runtime("onnxruntime", tmp_path)
    assert emb.for_queries is not None and emb.for_queries is not emb
    # a query on the light model holds the vector build back like one on the full model
    assert emb.for_queries.lane is emb.lane


def test_recall_embeds_its_query_with_the_query_model_and_facts_keep_full_vectors(model_engine, local):
    fv = model_engine.fact_vectors
    light, full = model_engine.embedder.for_queries, model_engine.embedder
    assert light is not None and fv.queries is not fv.texts   # a cache of its own
    text = "Zed keeps bees on the roof of the clinic"
    body, err = call(model_engine, "remember", {"fact": text, "provenance": "t", "entity": "people/zed"}, local)
    assert not err and body["status"] == "inserted"
    assert fv.wait_written()
    light_calls, full_calls = light.calls, full.calls
    # the very text of the fact, as a query: by the query model, and it finds the fact
    body, err = call(model_engine, "recall", {"query": text, "limit": 3}, local)
    assert not err and body["facts"][0]["fact"] == text, body
    assert light.calls == light_calls + 1 and full.calls == full_calls
    # the kept vector is still the full model's, though the same text was just a query
    with model_engine.facts.lock:
        (blob,) = model_engine.facts.db.execute("SELECT vec FROM fact_vectors WHERE id = ?",
                                                (int(body["facts"][0]["id"]),)).fetchone()
    assert np.allclose(np.frombuffer(blob, dtype=np.float32), full.embed([text])[0], atol=1e-5)
    # and remember compares with the full model: the same text again is a duplicate, as ever
    body, err = call(model_engine, "remember", {"fact": text, "provenance": "t", "entity": "people/zed"}, local)
    assert not err and body["status"] == "duplicate", body
    assert model_engine.facts.get(int(body["id"]), Viewer.owner()) is not None


def test_status_says_which_model_embeds_queries(model_engine, local):
    body, err = call(model_engine, "status", {}, local)
    assert not err and body["model_queries"] == "int8", body
