"""What both page backends share and that holds no connection (docs/architecture.md, "Stores").

    page_types  the plain values the pages contract answers in
    visible     the visibility predicate every page read adds for its viewer
    terms       query terms: the analyzer, stop words, keys, field weights
    fusion      keyword, chunk-vector and card lists fused into one ranking
    evidence    what a hit's match says (`evidence`, `create_safety`)
    passage     the passage of a page a snippet shows
    page_file   a page as get_page serves it, read from the file on disk
    search_limits  how far each search arm reaches, how its hits are re-scored
    name_ranking   which pages a typed name means, best first
    page_order     the order and bounds of a page's links and linked tasks

The embedded store (indexer/pages) and the PostgreSQL store (daemon/postgres)
both rank with these, so the two answer alike; neither imports the other.

May import: itself and `brain.indexer.vault`."""
