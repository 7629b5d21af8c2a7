"""Facts of the vault's logs into the PostgreSQL facts store, with their own ids: the
indexer's import (docs/scaling.md, "Who writes what").

A fresh store, or `brain rebuild --store`, is filled from the logs, which are
the record; so is a fact a person's own daemon saved in the vault before the
team store existed. Ids are kept, so an id an agent was given stays good, and
the store's id sequence is moved past the highest, so the front ends' new
facts never take one a log already holds.
"""

from __future__ import annotations

from typing import Sequence

import psycopg

from ..stores.fact_dates import date_words
from ..stores.fact_scope import normalize_text
from ..stores.facts import Fact
from .facts_store import DOCUMENT, PgFactsStore
from .page_load import words

_ADOPT = f"""
INSERT INTO facts (id, fact, norm, folded, kind, entity_slug, visibility, source, source_session, context,
                   confidence, notability, valid_from, valid_until, created_at, expired_at, expire_reason,
                   superseded_by, document)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, {DOCUMENT})
ON CONFLICT (id) DO NOTHING
"""
# an expiry the log holds and the store does not yet (the earliest wins, as in the projection)
_ADOPT_EXPIRY = """
UPDATE facts SET expired_at = %s, expire_reason = %s, superseded_by = COALESCE(%s, superseded_by),
                 change = nextval('facts_change_seq')
WHERE id = %s AND (expired_at IS NULL OR expired_at > %s)
"""
_PAST_HIGHEST = """
SELECT setval('facts_id_seq', GREATEST((SELECT COALESCE(MAX(id), 0) FROM facts),
                                       (SELECT last_value FROM facts_id_seq), 1))
"""


def adopt(store: PgFactsStore, facts: Sequence[Fact]) -> int:
    """Put into the store the facts it lacks, with their ids, and the expiries it lacks; how many
    rows changed. One transaction under the facts lock: a front end's insert waits for it."""
    if not facts:
        return 0

    def work(conn: psycopg.Connection) -> int:
        changed = 0
        with conn.cursor() as cur:
            for f in facts:
                cur.execute(_ADOPT, (f.id, f.fact, normalize_text(f.fact), f.fact.lower(), f.kind, f.entity_slug,
                                     f.visibility, f.source, f.source_session, f.context, f.confidence,
                                     f.notability, f.valid_from, f.valid_until, f.created_at, f.expired_at,
                                     f.expire_reason, f.superseded_by, words(f.fact),
                                     date_words(f.valid_from, f.source, f.fact)))
                changed += cur.rowcount
                if cur.rowcount == 0 and f.expired_at is not None:
                    cur.execute(_ADOPT_EXPIRY, (f.expired_at, f.expire_reason, f.superseded_by, f.id, f.expired_at))
                    changed += cur.rowcount
            cur.execute(_PAST_HIGHEST)
        return changed

    return store._write(work)


def reset(store: PgFactsStore) -> None:
    """Empty the store's facts (and their call keys and vectors), for `brain rebuild --store`:
    the vault's logs, the record, fill it again with the same ids."""

    def work(conn: psycopg.Connection) -> None:
        conn.execute("DELETE FROM facts")

    store._write(work)
