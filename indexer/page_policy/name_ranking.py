"""Which pages a typed name means, best first: the ranking both pages stores answer with.

(docs/protocol.md §3.3, §4.4; indexer/pages/store_names.py and
daemon/postgres/pages_names.py run the lookups, each in its own SQL.)
"""

from __future__ import annotations

# an arm that matches many pages (a tail like "index") keeps its freshest few
ARM_LIMIT = 20
# the longest name worth looking up; longer input is a paste, not a name
MAX_NAME = 300
