"""How a page search ran, as the wire names it and as a person reads it.

The protocol has one reason for a keyword-only answer (docs/protocol.md §3.1):
its value is fixed whatever kept the vectors out (the model is off, still
loading, still embedding the chunks, failed, or this process never loads it).
The words shown to a person must therefore not claim one of those causes.
"""

KEYWORD_ONLY = "keyword_only_no_embedding_provider"

KEYWORD_ONLY_TEXT = "keyword search only: semantic search is not ready; `brain status` says why"
