"""The limits the protocol states, each written once.

The tool declarations quote them in their descriptions (docs/protocol.md §2),
the handlers enforce them and the hooks respect them, all from here.
"""

# context_pack and delta use the first this many comma-separated entities
# (docs/protocol.md §3.6, §3.7)
MAX_ENTITIES = 8

# the longest fact, in characters: one claim, never a document
MAX_FACT_CHARS = 2000
# remember's provenance, after trimming (docs/protocol.md §1.5)
MAX_PROVENANCE_CHARS = 500
# every other string argument, unless its Param says otherwise (put_page's
# content is bounded by the page size limit instead)
MAX_STRING_CHARS = 10_000

# recall's `limit`, per arm (docs/protocol.md §3.1)
RECALL_LIMIT_DEFAULT, RECALL_LIMIT_MAX = 50, 100
# the page tools' `limit`
SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX = 10, 100
LIST_PAGES_LIMIT_DEFAULT, LIST_PAGES_LIMIT_MAX = 50, 1000
