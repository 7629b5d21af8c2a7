"""The store contracts: one typed Protocol per store, and the Engine the verbs are handed.

    pages     pages, chunks, links, aliases, timeline, tags (`pages`)
    facts     the facts logs, their projection and facts search (`facts`)
    vectors   chunk and fact vectors (`vectors`)
    cursors   delta's per-caller cursors (`cursors`)
    auth      HTTP tokens and OAuth clients (`auth`)
    engine    what a verb may use: the stores, the models, the clocks (`engine`)

What both facts backends share and that holds no connection, beside the facts contract:

    fact_scope       a FactScope and a Viewer as conditions; the columns; the same-text form
    fact_reads       the reads that are one select over those conditions (get, listed)
    fact_ranking     the ranking's words, common words, fusion and constants
    fact_neighbours  what a fact's neighbours are (the walk along a conversation)
    fact_dates       the date words a fact and a question are found by
    fact_specifics   whether two near-identical facts differ in a number, a date or a name

and what both cursors stores keep: `cursor_limits` (idle time, row caps, who loses rows).

Verbs and the CLI call these methods by intent; no SQL text and no SQL
fragment crosses a contract, and every read takes the viewer it is for and
applies visibility itself (docs/architecture.md, "Stores"). The embedded
SQLite/tantivy/hnswlib code is the first implementation of each contract;
a second backend implements the same Protocols and needs no change above them.

May import: the protocol core, `brain.indexer.vault` and `brain.indexer.page_policy`
(the types a contract names). Never an implementation: the embedded stores
(facts, indexer/pages), PostgreSQL, verbs, the server, HTTP or the CLI."""
