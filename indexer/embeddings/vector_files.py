"""The chunk-vector files in the cache dir: an hnswlib graph and its sidecar.

`vectors-<generation>.hnsw` is the graph; `vectors.json` holds the model id,
dimension, graph parameters and label → content hash. A save writes a new
graph file, then the sidecar that names it (each temp + fsync + rename), then
removes the old graph: a crash at any point leaves a matching pair. A sidecar
from another model or dimension is refused, so vectors of two models are
never mixed.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..vault.atomic_files import write_atomic

import hnswlib

log = logging.getLogger("brain.vectors")

SIDECAR = "vectors.json"
FORMAT = 1


@dataclass
class Stored:
    """A loaded graph and what the sidecar says about its labels."""

    index: hnswlib.Index
    labels: list[str | None]            # label → content hash
    deleted: set[int] = field(default_factory=set)
    generation: int = 0
    m: int = 0
    ef_construction: int = 0


def new_graph(dim: int, capacity: int, m: int, ef_construction: int) -> hnswlib.Index:
    index = hnswlib.Index(space="cosine", dim=dim)
    index.init_index(max_elements=capacity, ef_construction=ef_construction, M=m, allow_replace_deleted=True)
    return index


def load(directory: Path, model_id: str, dim: int) -> Stored | None:
    """The stored graph for this model and dimension; None if absent, foreign or damaged."""
    try:
        meta = json.loads((directory / SIDECAR).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        log.warning("vector sidecar unreadable (%s); re-embedding", e)
        return None
    if meta.get("format") != FORMAT or meta.get("model") != model_id or meta.get("dim") != dim:
        log.info("vector index is for model %r dim %r, now %r dim %r: discarding it and re-embedding",
                 meta.get("model"), meta.get("dim"), model_id, dim)
        return None
    graph = directory / str(meta.get("index_file", ""))
    labels = meta.get("labels") or []
    try:
        index = hnswlib.Index(space="cosine", dim=dim)
        index.load_index(str(graph), max_elements=int(meta["max_elements"]), allow_replace_deleted=True)
    except Exception as e:
        log.warning("vector index %s unreadable (%s); re-embedding", graph.name, e)
        return None
    if index.get_current_count() != sum(1 for h in labels if h is not None):
        log.warning("vector index and its sidecar disagree; re-embedding")
        return None
    return Stored(index, list(labels), set(meta.get("deleted") or []), int(meta.get("generation", 0)),
                  int(meta.get("M", 0)), int(meta.get("ef_construction", 0)))


def save(directory: Path, stored: Stored, model_id: str, dim: int) -> int:
    """Write the graph and its sidecar; returns the new generation."""
    gen = stored.generation + 1
    graph = directory / f"vectors-{gen}.hnsw"
    tmp = directory / f".vectors-{gen}.hnsw.tmp"
    try:
        stored.index.save_index(str(tmp))
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, graph)
    finally:
        tmp.unlink(missing_ok=True)
    meta = {
        "format": FORMAT, "model": model_id, "dim": dim, "space": "cosine", "M": stored.m,
        "ef_construction": stored.ef_construction, "generation": gen, "index_file": graph.name,
        "max_elements": stored.index.get_max_elements(), "labels": stored.labels, "deleted": sorted(stored.deleted),
    }
    # write_atomic syncs the folder after its rename, which makes the graph's rename above durable too
    write_atomic(directory / SIDECAR, json.dumps(meta, separators=(",", ":")).encode())
    remove(directory, keep=graph.name)
    return gen


def remove(directory: Path, keep: str | None = None) -> None:
    """Delete graph files other than `keep` (and, with no keep, the sidecar too)."""
    for p in list(directory.glob("vectors-*.hnsw")) + list(directory.glob(".vectors-*.hnsw.tmp")):
        if p.name != keep:
            p.unlink(missing_ok=True)
    if keep is None:
        (directory / SIDECAR).unlink(missing_ok=True)

