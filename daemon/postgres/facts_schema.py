"""The migrations of the facts, delta-cursor and auth tables (numbered 10 to 19; schema.py applies them).

Version 1 made the tables; these finish them for the contract implementations
(facts_store.py, cursors_store.py, auth_store.py):

- fact ids come from a sequence, so front ends on one database never mint the
  same id; a call key goes with its fact;
- `change`, where each fact's last write (insert or expiry) stands in the order
  of writes: what the indexer exports to the vault's facts log
  (`PgFactsStore.facts_since`, docs/scaling.md);
- the time columns compare byte by byte (COLLATE "C"), as the embedded store
  compares its ISO strings, whatever collation the database was made with;
- `folded`, the fact's text lower-cased by Python, so recall's grep folds case
  as the embedded store does (the server's lower() folds by its own locale);
- OAuth requests waiting for the owner, which the auth contract lists,
  approves and denies;
- (11) how many facts hold each word of the keyword documents, kept by every
  insert, so a ranking's idf is a lookup instead of a count over the table
  (facts_search.py);
- (12) facts_session ends with id, so a fact's neighbours step along its
  session_id (facts_search.py, daemon/stores/fact_neighbours.py).
"""

from __future__ import annotations

FACTS_MIGRATIONS: dict[int, str] = {
    10: """
    CREATE SEQUENCE facts_id_seq OWNED BY facts.id;
    ALTER TABLE facts ALTER COLUMN id SET DEFAULT nextval('facts_id_seq');
    ALTER TABLE facts ADD COLUMN folded TEXT NOT NULL DEFAULT '';
    CREATE SEQUENCE facts_change_seq;
    ALTER TABLE facts ADD COLUMN change BIGINT NOT NULL DEFAULT nextval('facts_change_seq');
    CREATE INDEX facts_change ON facts(change);
    ALTER TABLE facts ALTER COLUMN valid_from TYPE TEXT COLLATE "C",
                      ALTER COLUMN valid_until TYPE TEXT COLLATE "C",
                      ALTER COLUMN created_at TYPE TEXT COLLATE "C",
                      ALTER COLUMN expired_at TYPE TEXT COLLATE "C";
    ALTER TABLE call_keys ADD CONSTRAINT call_keys_fact
        FOREIGN KEY (fact_id) REFERENCES facts(id) ON DELETE CASCADE;
    CREATE INDEX call_keys_fact_id ON call_keys(fact_id);
    ALTER TABLE cursors ALTER COLUMN touched_at TYPE TEXT COLLATE "C";

    CREATE TABLE oauth_pending (
        request_sha256 TEXT PRIMARY KEY,       -- only the request id's hash is kept
        user_code TEXT NOT NULL UNIQUE,
        client_id TEXT NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
        scopes TEXT[] NOT NULL,
        fields JSONB NOT NULL DEFAULT '{}',
        approved BOOLEAN NOT NULL DEFAULT false,
        denied BOOLEAN NOT NULL DEFAULT false,
        expires_at DOUBLE PRECISION NOT NULL
    );
    """,
    11: """
    CREATE TABLE fact_lexemes (lexeme TEXT PRIMARY KEY, facts BIGINT NOT NULL);
    INSERT INTO fact_lexemes (lexeme, facts) SELECT lexeme, count(*) FROM facts, unnest(document) GROUP BY lexeme;
    """,
    12: """
    DROP INDEX facts_session;
    CREATE INDEX facts_session ON facts(source_session, created_at, id);
    """,
}
