"""whoami and status: what the server knows about the caller and itself."""

from __future__ import annotations

from ... import __version__
from ..protocol.caller import Caller
from ..protocol.errors import Unavailable
from ..stores.engine import Engine


def whoami(engine: Engine, args: dict, caller: Caller) -> dict:
    return {
        "server": "brain",
        "version": __version__,
        "transport": caller.transport,
        "lane": "remote" if caller.remote else "local",
        "client_id": caller.client_id,
        "surface": caller.surface,
        "can_write": caller.can_write,
        "sees_private": not caller.remote,
    }


def status(engine: Engine, args: dict, caller: Caller) -> dict:
    # remote callers learn how many pages, chunks and problems they can see, not how
    # many private ones exist (docs/protocol.md §4.8): the store counts for the viewer
    counts = engine.pages.count_pages(caller.viewer)
    index = engine.index
    embedder = engine.embedder
    vectors = engine.vectors
    models = engine.models.status() if engine.models is not None else None
    body = {
        # a front end over a shared store names the store (daemon/server/store_engine.py)
        "vault": engine.label,
        "pages": counts.pages,
        "chunks": counts.chunks,
        "problems": counts.problems,
        **engine.facts.counts(caller.viewer),
        "index_ready": bool(index is not None and engine.index_ready),
        "last_sync": index.last_sync if index is not None else None,
        "pending_events": index.pending_events if index is not None else 0,
        "model": embedder.model_id if embedder is not None else None,
        "model_state": models["state"] if models is not None else "not loaded",
        "vectors_ready": bool(vectors is not None and vectors.ready),
    }
    if index is not None and not engine.index_ready and engine.index_progress:
        body["index_progress"] = list(engine.index_progress)  # (files looked at, files in the folder)
    if models is not None:
        body["model_backend"] = models.get("backend")  # onnxruntime, or sentence-transformers as the fallback
        if models.get("queries"):
            body["model_queries"] = models["queries"]  # int8 or full: what embeds recall's queries
        if models.get("phase"):
            body["model_phase"] = models["phase"]  # what a long load is doing (the one-time ONNX export)
        if models.get("fallback_reason"):
            body["model_fallback_reason"] = models["fallback_reason"]  # why not onnxruntime, for doctor
        if models.get("error"):
            body["model_error"] = models["error"]  # why semantic search is off, for doctor
    if vectors is not None:
        stats = vectors.stats()
        body["vectors"] = stats.get("vectors", 0)
        body["vectors_pending"] = stats.get("pending", 0)
        if stats.get("build"):
            # state, done, total, rate_chunks_per_s, eta_s, elapsed_s, workers of the current/last build
            body["vector_build"] = stats["build"]
    if caller.remote:
        # nor where the user's files are (an error text may carry paths), nor
        # vector counts (private chunks and facts have vectors too)
        body.pop("vault")
        body.pop("model_error", None)
        body.pop("model_fallback_reason", None)
        body.pop("vectors", None)
        body.pop("vectors_pending", None)
    return body


def request_tools(engine: Engine, args: dict, caller: Caller) -> dict:
    """Only HTTP clients have a row to narrow; `brain serve --http` answers it before the daemon.

    A connection that reaches this (stdio, the socket) chose its surface when it started.
    """
    raise Unavailable(
        f"this {caller.transport} connection's surface ({caller.surface}) is fixed for its lifetime; "
        "request_tools narrows the surface of an HTTP client.",
        f"Start the server with the surface you want: `brain serve --surface {args['surface']}`.",
    )
