"""The facts store on PostgreSQL (daemon/postgres/facts_store.py) as front ends share it, on
the test session's real server: what one front end writes the other reads, remember's decisions
are taken one at a time across connections, a write is all or nothing, and what the indexer
exports to the vault's log comes in the order of the writes. The contract itself, visibility
included, is tests/test_facts_store_visibility.py (on both backends)."""

from __future__ import annotations

import threading
import time

import pytest

from brain.daemon.stores.facts import FactScope
from brain.indexer.vault.visibility import Viewer

psycopg = pytest.importorskip("psycopg")

OWNER, WORLD = Viewer.owner(), Viewer.world()


def _store(dsn):
    from brain.daemon.postgres.facts_store import PgFactsStore

    return PgFactsStore(dsn)


def _add(store, text, **kw):
    return store.insert(fact=text, kind=kw.pop("kind", "fact"), entity_slug=kw.pop("entity", None),
                        visibility=kw.pop("visibility", "world"), source=kw.pop("source", "chat"),
                        valid_until=kw.pop("valid_until", None), **kw)


@pytest.fixture
def front_ends(pg_migrated_dsn):
    one, two = _store(pg_migrated_dsn), _store(pg_migrated_dsn)
    yield one, two
    one.close()
    two.close()


def test_a_fact_written_through_one_front_end_is_read_through_the_other(front_ends):
    one, two = front_ends
    fid = _add(one, "The staging database moved to the new rack", call_key="k-1", entity="projects/infra")
    assert two.get(fid, OWNER).fact == "The staging database moved to the new rack"
    assert [f.id for f in two.listed(FactScope(entity="projects/infra"), WORLD, None)] == [fid]
    assert [f.id for f in two.ranked("databases moving", FactScope(), WORLD, 5)] == [fid]  # stemmed
    assert two.by_call_key("k-1", OWNER).id == fid
    newer = _add(two, "The staging database is back in the old rack", supersede=fid)
    old = one.get(fid, OWNER)
    assert (old.superseded_by, old.expire_reason) == (newer, f"superseded by fact #{newer}")
    assert one.supersedes(newer, OWNER) and one.count(FactScope(), OWNER, 10) == 1


def _race(dsn, decide, n=2):
    """Run `decide(store)` on n threads at once, each with a store (and connections) of its own."""
    stores = [_store(dsn) for _ in range(n)]
    for s in stores:
        s.count(FactScope(), OWNER, 1)  # connected and migrated before the race starts
    start, out, errors = threading.Barrier(n), [], []

    def run(store):
        try:
            start.wait(timeout=30)
            out.append(decide(store))
        except BaseException as e:  # every thread's failure is the test's
            errors.append(e)

    threads = [threading.Thread(target=run, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for s in stores:
        s.close()
    assert errors == []
    return out


def test_remembers_racing_with_one_call_key_write_one_fact(pg_migrated_dsn):
    def remember_like(store):
        with store.exclusive():
            done = store.by_call_key("retry-1", OWNER)
            if done is not None:
                return done.id
            time.sleep(0.2)  # the other front end tries now: it must wait for the lock
            return _add(store, "Ship the release on Friday", call_key="retry-1")

    ids = _race(pg_migrated_dsn, remember_like, n=3)
    store = _store(pg_migrated_dsn)
    assert len(set(ids)) == 1
    assert store.count(FactScope(grep="ship the release"), OWNER, 10) == 1
    store.close()


def test_exclusive_makes_two_front_ends_dedup_one_at_a_time(pg_migrated_dsn):
    """Dedup by text (no call key): only the lock keeps the second from inserting the same fact."""
    def dedup_insert(store):
        with store.exclusive():
            same = store.listed(FactScope(same_text="alice prefers tea"), OWNER, 1)
            if same:
                return same[0].id
            time.sleep(0.2)
            return _add(store, "Alice prefers  tea")

    ids = _race(pg_migrated_dsn, dedup_insert)
    store = _store(pg_migrated_dsn)
    assert len(set(ids)) == 1 and store.count(FactScope(), OWNER, 10) == 1
    store.close()


def test_one_call_key_raced_without_the_lock_still_writes_one_fact(pg_migrated_dsn):
    ids = _race(pg_migrated_dsn, lambda store: _add(store, "Book the venue", call_key="retry-2"), n=4)
    store = _store(pg_migrated_dsn)
    assert len(set(ids)) == 1 and store.count(FactScope(), OWNER, 10) == 1
    store.close()


def test_a_connection_killed_mid_insert_leaves_no_half_fact(pg_migrated_dsn):
    store = _store(pg_migrated_dsn)
    held = _add(store, "holder")
    # another session holds the call key, uncommitted: the store's insert, its fact row written,
    # waits for it inside its transaction
    blocker = psycopg.connect(pg_migrated_dsn)
    blocker.execute("INSERT INTO call_keys (key, fact_id) VALUES ('k-half', %s)", (held,))
    failed: list[BaseException] = []
    writer = threading.Thread(target=lambda: _catch(failed, lambda: _add(store, "half written", call_key="k-half")))
    writer.start()
    with psycopg.connect(pg_migrated_dsn, autocommit=True) as admin:
        pid = None
        for _ in range(200):
            row = admin.execute("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                "AND query LIKE 'INSERT INTO call_keys%'").fetchone()
            if row:
                pid = row[0]
                break
            time.sleep(0.05)
        assert pid is not None, "the insert never waited inside its transaction"
        assert admin.execute("SELECT count(*) FROM facts WHERE fact = 'half written'").fetchone()[0] == 0
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    writer.join(timeout=30)
    blocker.rollback()
    blocker.close()
    from brain.daemon.protocol.errors import Unavailable

    assert len(failed) == 1 and isinstance(failed[0], Unavailable)
    assert store.count(FactScope(grep="half written", include_expired=True), OWNER, 10) == 0
    # the dead connection is gone, and the lock with it: the retry writes the fact once
    fid = _add(store, "half written", call_key="k-half")
    assert store.by_call_key("k-half", OWNER).id == fid and store.get(fid, OWNER).fact == "half written"
    store.close()


def _catch(into, step):
    try:
        step()
    except BaseException as e:
        into.append(e)


def test_facts_since_gives_the_export_every_write_in_order(pg_migrated_dsn):
    store = _store(pg_migrated_dsn)
    a = _add(store, "first", visibility="private")
    b = _add(store, "second")
    store.expire(a, "done")
    changes = store.facts_since(0)
    assert [(f.id, f.expired_at is not None) for _, f in changes] == [(b, False), (a, True)]
    last = changes[-1][0]
    c = _add(store, "third", supersede=b)
    assert [(f.id, f.superseded_by) for _, f in store.facts_since(last)] == [(c, None), (b, c)]
    assert store.facts_since(store.facts_since(0)[-1][0]) == []
    store.close()


def test_keyword_ranking_finds_stems_dates_and_nothing_for_nothing(pg_migrated_dsn):
    store = _store(pg_migrated_dsn)
    tea = _add(store, "Alice prefers green tea in the afternoon", now="2024-03-05T10:00:00.000Z")
    _add(store, "Bob drives to work", now="2024-03-06T10:00:00.000Z")
    both = _add(store, "Alice loves tea and hosts the tea tastings every Friday", now="2024-03-07T10:00:00.000Z")
    assert [f.id for f in store.ranked("teas", FactScope(), OWNER, 5)][:2] == [both, tea]  # stemmed, by weight
    assert [f.id for f in store.ranked("what happened on 2024-03-05", FactScope(), OWNER, 5)][0] == tea
    assert store.ranked("zeppelin", FactScope(), OWNER, 5) == []
    # the word counts idf reads are kept by each insert, and rebuilt by rebuild()
    recount = "SELECT lexeme, count(*) FROM facts, unnest(document) GROUP BY lexeme"
    with psycopg.connect(pg_migrated_dsn, autocommit=True) as conn:
        assert dict(conn.execute("SELECT lexeme, facts FROM fact_lexemes").fetchall()) == \
            dict(conn.execute(recount).fetchall())
        assert dict(conn.execute("SELECT lexeme, facts FROM fact_lexemes").fetchall())["tea"] == 2
        conn.execute("UPDATE fact_lexemes SET facts = 99")
        store.rebuild()
        assert dict(conn.execute("SELECT lexeme, facts FROM fact_lexemes").fetchall()) == \
            dict(conn.execute(recount).fetchall())
    store.close()


def test_the_schema_is_made_by_the_first_front_end(pg_dsn):
    from brain.daemon.postgres import schema

    store = _store(pg_dsn)
    assert store.counts(OWNER) == {"facts": 0, "active_facts": 0, "bad_log_lines": 0}
    with psycopg.connect(pg_dsn) as conn:
        assert schema.version(conn) == schema.LATEST
    store.close()


@pytest.mark.model
def test_the_vector_arm_finds_a_paraphrase_hides_private_facts_and_reads_its_own_writes(pg_migrated_dsn):
    from vectors_fixtures import shared_minilm

    from brain.indexer.embeddings.fact_vectors import FactVectors

    store = _store(pg_migrated_dsn)
    vectors = FactVectors(store, shared_minilm())
    store.attach_vectors(vectors)
    car = _add(store, "Alice bought an electric car last week")
    secret = _add(store, "Alice purchased a new automobile for her brother", visibility="private")
    _add(store, "The quarterly budget review is on Monday")
    vectors.backfill(store.listed(FactScope(), OWNER, None))
    assert store.vector_count() == 3 and store.vectors_current(vectors.model_id)
    # no word in common with the question: only the vector arm can find them
    assert car in [f.id for f in store.ranked("vehicle purchase", FactScope(), OWNER, 5)]
    assert secret in [f.id for f in store.ranked("vehicle purchase", FactScope(), OWNER, 5)]
    assert all(f.visibility == "world" for f in store.ranked("vehicle purchase", FactScope(), WORLD, 5))
    # a vector the writer thread has not stored yet still counts for this front end's reads
    bike = _add(store, "Bob rides a bicycle to the office")
    vectors.store_later(bike, "Bob rides a bicycle to the office")
    assert bike in [f.id for f in store.ranked("cycling commute", FactScope(), OWNER, 5)]
    assert vectors.wait_written() and store.vector_count() == 4
    vectors.close()
    store.close()


@pytest.mark.model
def test_a_turn_rises_with_its_neighbour_of_the_same_session_id_whatever_its_provenance(pg_migrated_dsn):
    from vectors_fixtures import shared_minilm

    from brain.indexer.embeddings.fact_vectors import FactVectors

    store = _store(pg_migrated_dsn)
    vectors = FactVectors(store, shared_minilm())
    store.attach_vectors(vectors)
    talk = ["lol", "haha yes", "ok cool", "oh nice!", "same tbh", "wait what"]

    def turn(n, text, session="chat-7"):  # each turn its own provenance, the conversation its session_id
        return _add(store, text, source=f"chat turn {n}", source_session=session,
                    now=f"2024-03-02T10:{n:02d}:00.000Z")

    for n, line in enumerate(talk):
        turn(n, f"Tom: {line}")
    named = turn(6, "Nadia: I bought a vintage typewriter at the flea market")
    pointer = turn(7, "Tom: look at this beauty!")  # no word of the question
    for n, line in enumerate(talk, 8):
        turn(n, f"Tom: {line}")
    other = turn(6, "Sam: look at this!", session="chat-8")  # named's provenance, another conversation
    vectors.backfill(store.listed(FactScope(), OWNER, None))
    got = [f.id for f in store.ranked("What did Nadia find at the flea market?", FactScope(), OWNER, 10)]
    assert got[:2] == [named, pointer], got
    assert other not in got
    vectors.close()
    store.close()


def test_both_backends_list_the_same_facts_in_the_same_order(pg_migrated_dsn, tmp_path):
    """Every scope field and order, over the same writes: the same facts, in the same order."""
    from brain.daemon.facts.store import SqliteFactsStore
    from brain.daemon.stores.facts import Order

    embedded = SqliteFactsStore(tmp_path / "facts.jsonl", tmp_path / "facts.sqlite")
    pg = _store(pg_migrated_dsn)
    for store in (embedded, pg):
        ids = [_add(store, f"Fact {i}: Ünïcode TEA {'x' * i}", entity=("people/alice" if i % 3 else None),
                    kind=("todo" if i % 2 else "fact"), source_session=f"s{i % 2}", now=f"2024-01-0{1 + i}T10:00:00.000Z",
                    visibility=("private" if i == 4 else "world"),
                    **({"valid_until": "2024-02-01T00:00:00.000Z"} if i == 5 else {})) for i in range(8)]
        store.expire(ids[2], "done")
        _add(store, "Fact 3 again", supersede=ids[3], now="2024-01-20T10:00:00.000Z")
    scopes = [FactScope(include_expired=True, order=order) for order in Order] + [
        FactScope(), FactScope(entity="people/alice"), FactScope(filed=True, kind="todo"),
        FactScope(session="s1", order=Order.NEWEST_SAVED), FactScope(same_text="fact 1: ünïcode tea x"),
        FactScope(grep="ÜNÏCODE tea XX", include_expired=True),
        FactScope(entities_or_words=(("people/bob",), ("again", "x_y%")), include_expired=True),
        FactScope(valid_since="2024-01-03", valid_through="2024-01-06T23:00:00.000Z"),
        FactScope(saved_after=("2024-01-03T10:00:00.000Z", 4), saved_before=("2024-01-07T10:00:00.000Z", None),
                  include_expired=True),
        FactScope(replacing_only=True, ended_since="2024-01-01", include_expired=True, order=Order.LATEST_ENDED),
    ]
    for scope in scopes:
        for viewer in (OWNER, WORLD):
            def rows(store):  # an expiry's time is the clock's: whether there is one is compared
                return [(f.id, f.fact, f.expired_at is None, f.valid_until, f.superseded_by, f.created_at)
                        for f in store.listed(scope, viewer, None)]

            assert rows(pg) == rows(embedded), scope
            assert pg.count(scope, viewer, 100) == embedded.count(scope, viewer, 100)
    assert pg.counts(WORLD) == embedded.counts(WORLD) and pg.counts(OWNER) == embedded.counts(OWNER)
    embedded.close()
    pg.close()


def test_both_backends_rank_alike_through_the_one_ranking(pg_migrated_dsn, tmp_path):
    """One ranking (daemon/stores/fact_ranking.py) over each store's candidates: over the same writes a
    keyword recall finds the same facts on both backends, in scope, and never one the viewer may not see.
    (The order among hits may differ: BM25 and ts_rank weigh a fact's length differently.)"""
    from brain.daemon.facts.store import SqliteFactsStore

    embedded = SqliteFactsStore(tmp_path / "facts.jsonl", tmp_path / "facts.sqlite")
    pg = _store(pg_migrated_dsn)
    turns = [("Nadia adopted a grey cat called Mango", "world", "s1"),
             ("The cat sleeps on the radiator all winter", "world", "s1"),
             ("Mango hates the vet", "private", "s1"),
             ("Bob repaired the bike before the race", "world", "s2"),
             ("Mango turned three last week and the party had cake", "world", "s2")]
    for store in (embedded, pg):
        ids = [_add(store, text, visibility=vis, source_session=session, now=f"2024-03-02T10:0{i}:00.000Z")
               for i, (text, vis, session) in enumerate(turns)]
        store.expire(ids[1], "moved out")
    private = ids[2]
    expected = {("mango", "world", None): {ids[0], ids[4]}, ("mango", "owner", None): {ids[0], ids[2], ids[4]},
                ("mango", "owner", "s2"): {ids[4]}, ("radiator", "owner", None): set(),
                ("bike race", "world", None): {ids[3]}, ("zeppelin", "owner", None): set()}
    for (query, who, session), want in expected.items():
        viewer = OWNER if who == "owner" else WORLD
        scope = FactScope(session=session)
        got = {name: [f.id for f in store.ranked(query, scope, viewer, 10)]
               for name, store in (("embedded", embedded), ("pg", pg))}
        assert set(got["embedded"]) == set(got["pg"]) == want, (query, who, session, got)
        assert who == "owner" or private not in got["pg"]
    embedded.close()
    pg.close()


def test_a_front_end_that_dies_holding_the_lock_holds_up_no_one(pg_migrated_dsn):
    """The lock is the dead connection's transaction's: the server ends both, and the other
    front end's write goes through."""
    dying, other = _store(pg_migrated_dsn), _store(pg_migrated_dsn)
    inside, failed = threading.Event(), []

    def hold_and_die():
        try:
            with dying.exclusive():
                _add(dying, "written before dying")   # committed: it stays
                inside.set()
                time.sleep(30)                         # ended from outside long before this
        except BaseException as e:
            failed.append(e)

    holder = threading.Thread(target=hold_and_die, daemon=True)
    holder.start()
    assert inside.wait(timeout=30)
    with psycopg.connect(pg_migrated_dsn, autocommit=True) as admin:
        (pid,) = admin.execute("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted").fetchone()
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    started = time.monotonic()
    fid = _add(other, "written by the survivor")
    assert time.monotonic() - started < 10
    assert {f.fact for f in other.listed(FactScope(), OWNER, None)} == {"written before dying", "written by the survivor"}
    assert other.get(fid, OWNER) is not None
    dying.close()
    other.close()


def test_an_idle_connection_the_server_dropped_costs_no_call(pg_migrated_dsn, monkeypatch):
    """After a server restart or a dropped session, a front end's next call opens a new connection
    instead of failing on the dead one."""
    from brain.daemon.postgres import connections

    monkeypatch.setattr(connections, "RECHECK_IDLE_S", 0.0)
    store = _store(pg_migrated_dsn)
    fid = _add(store, "kept across the drop")
    with psycopg.connect(pg_migrated_dsn, autocommit=True) as admin:
        dropped = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()[0]
    assert dropped >= 1
    assert store.get(fid, OWNER).fact == "kept across the drop"
    store.close()


def test_values_postgresql_text_cannot_hold_are_answered_not_crashed_on(pg_migrated_dsn):
    """A NUL or a lone surrogate (both arrive in JSON strings from the wire) matches no stored
    fact, keys a retry like any call key, and in a fact's own text is refused naming the fix."""
    from brain.daemon.protocol.errors import InvalidParams
    from brain.daemon.stores.facts import Order

    store = _store(pg_migrated_dsn)
    kept = _add(store, "tea at noon", entity="people/alice")
    for bad in ("tea\x00", "tea\ud800"):
        for scope in (FactScope(grep=bad), FactScope(same_text=bad), FactScope(entity=bad),
                      FactScope(saved_after=(bad, 1)), FactScope(ended_since=bad, include_expired=True),
                      FactScope(session=bad, order=Order.LATEST_ENDED)):
            assert store.listed(scope, OWNER, None) == [] and store.count(scope, OWNER, 10) == 0
        assert [f.id for f in store.listed(FactScope(entities_or_words=(("people/alice", bad), (bad,))), OWNER,
                                           None)] == [kept]
        assert kept in [f.id for f in store.ranked(bad, FactScope(), OWNER, 5)]
        assert store.by_call_key(bad, OWNER) is None
        fid = _add(store, f"keyed by {bad!r}", call_key=bad)
        assert _add(store, "the retry", call_key=bad) == fid and store.by_call_key(bad, OWNER).id == fid
        with pytest.raises(InvalidParams, match="NUL"):
            _add(store, f"the text {bad}")
    store.close()


def test_both_backends_find_the_same_neighbours(pg_migrated_dsn, tmp_path):
    """A conversation is its session_id whatever each turn's provenance; without one, its provenance
    (daemon/stores/fact_neighbours.py). The same writes give the same neighbours on both backends."""
    from brain.daemon.facts.neighbours import neighbours as embedded_neighbours
    from brain.daemon.facts.store import SqliteFactsStore
    from brain.daemon.postgres.facts_search import neighbours as pg_neighbours

    # (name, provenance, session_id, entity, minute saved)
    writes = [("a0", "chat turn 0", "s-a", None, 0), ("a1", "chat turn 1", "s-a", None, 1),
              ("b0", "chat turn 1", "s-b", None, 1.5),   # a's provenance, another conversation
              ("a2", "chat turn 2", "s-a", None, 2), ("n0", "notes", None, None, 2.5),
              ("a3", "chat turn 3", "s-a", None, 3), ("n1", "notes", None, None, 3.5),
              ("a4", "chat turn 4", "s-a", None, 4), ("b1", "chat turn 2", "s-b", None, 4.5),
              ("e", "chat turn 5", "s-a", "people/nadia", 5),   # filed under an entity: a walk stops
              ("a6", "chat turn 6", "s-a", None, 6), ("n2", "notes", None, None, 20)]  # past the gap

    def stamp(minute):
        return f"2024-03-02T10:{int(minute):02d}:{int(minute % 1 * 60):02d}.000Z"

    def found(store, neighbours_of):
        ids = {name: _add(store, name, source=source, source_session=session, entity=entity, now=stamp(minute))
               for name, source, session, entity, minute in writes}
        names = {fid: name for name, fid in ids.items()}
        return {(names[f], names[n], d) for f, near in neighbours_of(sorted(ids.values())).items()
                for n, d in (near.items() if isinstance(near, dict) else near)}

    embedded = SqliteFactsStore(tmp_path / "facts.jsonl", tmp_path / "facts.sqlite")
    pg = _store(pg_migrated_dsn)
    with pg.conn() as conn:
        got = {"embedded": found(embedded, lambda ids: embedded_neighbours(embedded, ids)),
               "pg": found(pg, lambda ids: pg_neighbours(conn, ids))}
    embedded.close()
    pg.close()
    for backend, pairs in got.items():
        of = {(n, d) for f, n, d in pairs if f == "a2"}
        assert of == {("a1", 1), ("a0", 2), ("a3", 1), ("a4", 2)}, backend  # per-turn provenance, one session
        assert {(n, d) for f, n, d in pairs if f == "b0"} == {("b1", 1)}, backend  # same provenance, other session
        assert {(n, d) for f, n, d in pairs if f == "n0"} == {("n1", 1)}, backend  # no session: by provenance
        assert not {f for f, _, _ in pairs} & {"e", "a6", "n2"}, backend
    assert got["pg"] == got["embedded"]
