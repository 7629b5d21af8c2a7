"""whoami and status: what the server knows about the caller and itself."""

from __future__ import annotations

from ... import __version__
from ..protocol import Caller, Unavailable


def whoami(engine, args: dict, caller: Caller) -> dict:
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


def status(engine, args: dict, caller: Caller) -> dict:
    db = engine.page_db
    # remote callers learn how many pages they can see, not how many private ones exist
    pages_sql = "SELECT COUNT(*) FROM pages" + (" WHERE visibility != 'private'" if caller.remote else "")
    pages = db.execute(pages_sql).fetchone()[0]
    chunks = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    problems = db.execute("SELECT COUNT(*) FROM problems").fetchone()[0]
    index = engine.index
    embedder = engine.embedder
    vectors = engine.vectors
    models = engine.models.status() if engine.models is not None else None
    body = {
        "vault": str(engine.vault),
        "pages": pages,
        "chunks": chunks,
        "problems": problems,
        **engine.facts.counts(),
        "index_ready": bool(index is not None and getattr(index, "ready", True)),
        "last_sync": getattr(index, "last_sync", None),
        "pending_events": getattr(index, "pending_events", 0),
        "model": getattr(embedder, "model_id", None),
        "model_state": models["state"] if models is not None else "not loaded",
        "vectors_ready": bool(vectors is not None and getattr(vectors, "ready", False)),
    }
    if models is not None and models.get("error"):
        body["model_error"] = models["error"]  # why semantic search is off, for doctor
    if vectors is not None:
        stats = vectors.stats()
        body["vectors"] = stats.get("vectors", 0)
        body["vectors_pending"] = stats.get("pending", 0)
    if caller.remote:
        # nor where the user's files are (an error text may carry paths)
        body.pop("vault")
        body.pop("model_error", None)
    return body


def request_tools(engine, args: dict, caller: Caller) -> dict:
    """Only HTTP clients have a row to narrow; `brain serve --http` answers it before the daemon.

    A connection that reaches this (stdio, the socket) chose its surface when it started.
    """
    raise Unavailable(
        f"this {caller.transport} connection's surface ({caller.surface}) is fixed for its lifetime; "
        "request_tools narrows the surface of an HTTP client.",
        f"Start the server with the surface you want: `brain serve --surface {args['surface']}`.",
    )
