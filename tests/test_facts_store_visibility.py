"""Visibility once, inside the facts store (docs/architecture.md, "Stores").

Every public method of the FactsStore contract is called for `Viewer.world()`
over a real store holding private and world facts that match every call, and
no private fact may come back, in any shape. The table of calls must name
every method of the contract: a new method without an entry fails here.
Every test runs on both backends: the embedded store and PostgreSQL
(daemon/postgres/facts_store.py, on the test session's real server).
"""

import dataclasses
import inspect

import pytest

from brain.daemon.facts.store import SqliteFactsStore
from brain.daemon.stores.facts import Fact, FactScope, FactsStore, Order
from brain.indexer.vault.visibility import Viewer

MARK = "zqsecret"          # in every private fact's text and entity, in no world fact
WORLD = Viewer.world()
ENTITY = "people/alice"    # world and private facts are both about her


def open_store(backend, request, tmp_path):
    """An empty facts store of the backend: the embedded one, or PostgreSQL on a fresh database."""
    if backend == "embedded":
        return SqliteFactsStore(tmp_path / "v" / "facts.jsonl", tmp_path / "c" / "facts.sqlite")
    from brain.daemon.postgres.facts_store import PgFactsStore

    return PgFactsStore(request.getfixturevalue("pg_migrated_dsn"))


@pytest.fixture(params=["embedded", "postgres"])
def store(request, tmp_path):
    s = open_store(request.param, request, tmp_path)

    def add(text, visibility, entity=ENTITY, **kw):
        return s.insert(fact=text, kind=kw.pop("kind", "commitment"), entity_slug=entity, visibility=visibility,
                        source=kw.pop("source", "chat"), valid_until=None, source_session="s1", **kw)

    ids = {
        "world": add("Alice ships the quarterly report", "world"),
        "world_old": add("Alice drafts the quarterly report", "world"),
    }
    ids["private"] = add(f"Alice quarterly report salary {MARK}", "private")
    ids["private_other"] = add(f"quarterly report bonus {MARK}", "private", entity=f"people/{MARK}")
    ids["private_keyed"] = add(f"Alice quarterly keyed {MARK}", "private", call_key="remote k1")
    # a private fact that replaced a world one, and a private fact since expired
    ids["private_successor"] = add(f"Alice quarterly report moved {MARK}", "private", supersede=ids["world_old"])
    ids["private_gone"] = add(f"Alice quarterly report old {MARK}", "private")
    s.expire(ids["private_gone"], "done")
    ids["world_successor"] = add("Alice quarterly report is due Friday", "world", supersede=ids["private"])
    s.ids = ids
    yield s
    s.close()


def _scopes(ids):
    """Scopes that each hold private facts (for the owner)."""
    text = f"Alice quarterly report salary {MARK}"
    return [
        FactScope(),
        FactScope(include_expired=True, order=Order.ID),
        FactScope(entity=ENTITY, kind="commitment"),
        FactScope(entity=f"people/{MARK}"),
        FactScope(session="s1", order=Order.NEWEST_SAVED),
        FactScope(same_text=text, entity=ENTITY, include_expired=True),
        FactScope(grep=MARK, include_expired=True),
        FactScope(entities_or_words=((ENTITY, f"people/{MARK}"), ("quarterly", MARK))),
        FactScope(valid_since="2000-01-01T00:00:00.000Z", valid_through="2999-01-01T00:00:00.000Z"),
        FactScope(saved_since="2000-01-01T00:00:00.000Z", saved_after=("2000-01-01T00:00:00.000Z", None),
                  saved_before=("2999-01-01T00:00:00.000Z", 10 ** 9), order=Order.NEWEST_SAVED),
        FactScope(replacing_only=True, ended_since="2000-01-01T00:00:00.000Z", include_expired=True,
                  order=Order.LATEST_ENDED),
        FactScope(order=Order.ID_DESC, include_expired=True),
    ]


def _world_count(store, scope):
    return sum(1 for f in store.listed(scope, Viewer.owner(), None) if f.visibility == "world")


# method -> calls: (args after self, the result a world viewer must get, or None to only walk it)
def _reads(store):
    ids, scopes = store.ids, _scopes(store.ids)
    private = [v for k, v in ids.items() if k.startswith("private")]
    return {
        "get": [((fid, WORLD), None) for fid in ids.values()],
        "listed": [((scope, WORLD, None), None) for scope in scopes],
        "ranked": [((q, scope, WORLD, 20), None) for q in ("quarterly report", MARK, "salary bonus")
                   for scope in scopes],
        "count": [((scope, WORLD, 100), _world_count(store, scope)) for scope in scopes],
        "counts": [((WORLD,), {"facts": 3, "active_facts": 2, "bad_log_lines": 0})],
        "by_call_key": [(("remote k1", WORLD), None)],
        "supersedes": [((fid, WORLD), False) for fid in private],
        "count_filed": [((ENTITY, WORLD), _world_count(store, FactScope(entity=ENTITY))),
                        ((f"people/{MARK}", WORLD), 0)],
        "filed_without_page": [((WORLD,), [])],
    }


# methods that hand back no fact: they take no viewer, and what they return names none
WRITES = {
    "vectors_current": lambda s: (("model",), {}),
    "insert": lambda s: ((), {"fact": "Bob likes tea", "kind": "fact", "entity_slug": None,
                              "visibility": "world", "source": "t", "valid_until": None}),
    "expire": lambda s: ((s.ids["world_successor"], "checked"), {}),
    "exclusive": lambda s: ((), {}),
    "rebuild": lambda s: ((), {}),
    # a slug, never a fact: where facts filed under a name belong now (docs/architecture.md, "Entity identity")
    "home_of": lambda s: ((ENTITY,), {}),
    "record_moves": lambda s: (([("people/bob", "people/robert")], "test"), {}),
}


def _walk(value, where="result"):
    """Fail on any private fact, or any trace of one, anywhere in `value`."""
    if isinstance(value, Fact):
        assert value.visibility == "world", f"{where}: private fact #{value.id}"
        _walk(dataclasses.astuple(value), where)
    elif isinstance(value, str):
        assert MARK not in value, f"{where}: {value!r}"
    elif isinstance(value, dict):
        for k, v in value.items():
            _walk(k, where)
            _walk(v, f"{where}[{k!r}]")
    elif isinstance(value, (list, tuple, set, frozenset)):
        for i, v in enumerate(value):
            _walk(v, f"{where}[{i}]")


def _contract_methods():
    return sorted(name for name, _ in inspect.getmembers(FactsStore, inspect.isfunction)
                  if not name.startswith("_"))


def test_the_table_covers_every_method_of_the_contract(store):
    reads = _reads(store)
    assert set(reads) | set(WRITES) == set(_contract_methods())
    assert not set(reads) & set(WRITES)
    for name in _contract_methods():
        takes_viewer = "viewer" in inspect.signature(getattr(FactsStore, name)).parameters
        assert takes_viewer == (name in reads), f"{name}: a read takes the viewer it is for"


def test_the_owner_sees_the_private_facts_the_table_asks_about(store):
    """The calls below would find private facts if the store let them through."""
    owner = Viewer.owner()
    for scope in _scopes(store.ids):
        assert any(f.visibility == "private" for f in store.listed(scope, owner, None)), scope
    assert any(f.visibility == "private" for f in store.ranked(MARK, FactScope(), owner, 20))
    assert store.by_call_key("remote k1", owner).id == store.ids["private_keyed"]
    assert store.supersedes(store.ids["private_successor"], owner)


def test_no_read_of_the_contract_gives_a_world_viewer_a_private_fact(store):
    assert isinstance(store, FactsStore)
    for name, calls in _reads(store).items():
        for args, expected in calls:
            got = getattr(store, name)(*args)
            _walk(got, f"{name}{args!r}")
            if expected is not None:
                assert got == expected, f"{name}{args!r}"


def test_the_writes_of_the_contract_run_and_name_no_private_fact(store):
    for name, make in WRITES.items():
        args, kwargs = make(store)
        got = getattr(store, name)(*args, **kwargs)
        if name == "exclusive":
            with got:
                pass
        else:
            _walk(got, name)
