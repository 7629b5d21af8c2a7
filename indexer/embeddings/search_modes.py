"""How a page search ran, as the wire names it and as a person reads it.

The protocol has one reason for a keyword-only answer (docs/protocol.md §3.1),
`search_degraded`, and its value is fixed whatever kept the vectors out. The
true cause travels beside it in `search_degraded_cause` (one of the names
below), so neither a person nor an agent is told "no embedding provider"
while the model is loaded and only the chunk vectors are still being built.
"""

KEYWORD_ONLY = "keyword_only_no_embedding_provider"

# the model's state when the settings turn it off: one name for status, init, recall and doctor
MODEL_OFF = "off"
OFF_TEXT = "off (embeddings.enabled = false)"

# why the vectors took no part, from the most to the least fundamental
INDEX_NOT_OPEN = "index_not_open"              # no page index: nothing was searched at all
EMBEDDINGS_OFF = "embeddings_off"              # the settings turn the model off
MODEL_NOT_LOADED = "model_not_loaded"          # this process never loads it (the CLI without the daemon)
MODEL_LOADING = "model_loading"
MODEL_FAILED = "model_failed"
VECTORS_BUILDING = "vectors_building"          # the model is ready; the chunk vectors are not yet
VECTOR_SEARCH_FAILED = "vector_search_failed"  # the vectors were there, and searching them raised

CAUSE_TEXT = {
    INDEX_NOT_OPEN: "no search: the page index is not open (start the daemon or run `brain index`)",
    EMBEDDINGS_OFF: (f"keyword search only: semantic search is {OFF_TEXT}; "
                     "`brain config set embeddings.enabled true` turns it on"),
    MODEL_NOT_LOADED: "keyword search only: semantic search runs in the daemon (`brain daemon start`)",
    MODEL_LOADING: "keyword search only: the embedding model is still loading",
    MODEL_FAILED: "keyword search only: the embedding model failed to load (`brain doctor model` says why)",
    VECTORS_BUILDING: "keyword search only: the page vectors are still being built (`brain status` shows progress)",
    VECTOR_SEARCH_FAILED: "keyword search only: the vector search failed (`brain daemon logs` has the error)",
}

# for an answer that names no cause (an older server)
KEYWORD_ONLY_TEXT = "keyword search only: semantic search is not ready; `brain status` says why"


def degraded_fields(cause: str | None) -> dict:
    """The response keys of a search that left the vectors out (none when it did not)."""
    if cause is None:
        return {}
    return {"search_degraded": KEYWORD_ONLY, "search_degraded_cause": cause}


def degraded_text(body: dict) -> str | None:
    """What a person reads about a degraded search answer, or None when it was not degraded."""
    if not body.get("search_degraded"):
        return None
    return CAUSE_TEXT.get(str(body.get("search_degraded_cause")), KEYWORD_ONLY_TEXT)
