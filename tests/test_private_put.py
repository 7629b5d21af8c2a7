"""A remote put_page decides from the file on disk, not only from the index.

A private page the index does not hold (too large, binary, just written and
not yet indexed) is answered as an absent slug is and left as it is
(docs/protocol.md §4.8, docs/architecture.md "Private pages").
"""

from __future__ import annotations

import hashlib
import json

import anyio
import pytest
from conftest import call
from daemon_fixtures import configured, daemon, reaper, small_vault, socket_session  # noqa: F401  (fixtures)
from indexer_fixtures import open_index, write  # noqa: F401

from brain.indexer.vault.scan import MAX_PAGE_BYTES

REMOTE = {"surface": "full", "lane": "remote", "client": "test"}

UNINDEXED = {
    "vault/too-large.md": ("---\nvisibility: private\n---\n" + "owner's words " * (MAX_PAGE_BYTES // 14 + 10)).encode(),
    "vault/binary.md": b"---\nvisibility: private\n---\nowner's words \x00\x01\x02 in a binary file\n",
}
JUST_WRITTEN = {
    "vault/fresh-private.md": b"---\nvisibility: private\n---\nJust written by the owner.\n",
    "vault/fresh-unparsed.md": b"---\nvisibility: private\nowner: [x\n---\nJust written by the owner.\n",
    "vault/fresh-cased.md": b"---\nVisibility: PRIVATE\n---\nJust written by the owner.\n",
}


def _same_answer(got: dict, absent: dict) -> bool:
    return {k: v for k, v in got.items() if k not in ("slug", "path")} == \
           {k: v for k, v in absent.items() if k not in ("slug", "path")}


def test_a_page_written_after_indexing_decides_the_answer(vault, open_index, remote, local):
    write(vault, "notes/public.md", "# Public\n")
    e = open_index(vault)   # indexed, and not watching: the index never hears of what follows
    for rel, raw in {**UNINDEXED, **JUST_WRITTEN}.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_bytes(raw)
    absent, aerr = call(e, "put_page", {"slug": "vault/nothing-here", "content": "agent text"}, remote)
    assert not aerr and absent["created"] is True
    for rel, raw in {**UNINDEXED, **JUST_WRITTEN}.items():
        body, err = call(e, "put_page", {"slug": rel[:-3], "content": "agent text"}, remote)
        assert not err and _same_answer(body, absent), (rel, body)
        assert (vault / rel).read_bytes() == raw, rel
        stale, _ = call(e, "put_page", {"slug": rel[:-3], "content": "x", "expected_hash": "0" * 64}, remote)
        gone, _ = call(e, "put_page", {"slug": "vault/gone", "content": "x", "expected_hash": "0" * 64}, remote)
        assert stale["error"] == gone["error"] == "invalid_params" and "deleted" in stale["message"], rel
    held = list((vault / ".brain/held").iterdir())
    assert len(held) == len(UNINDEXED) + len(JUST_WRITTEN) and {p.read_bytes() for p in held} == {b"agent text"}
    # a world page written after indexing is still the caller's to overwrite
    (vault / "vault/fresh-world.md").write_text("---\nvisibility: world\n---\nshared\n")
    body, err = call(e, "put_page", {"slug": "vault/fresh-world", "content": "agent text"}, remote)
    assert not err and body["created"] is False and (vault / "vault/fresh-world.md").read_text() == "agent text"
    # the owner, on the local lane, still writes their own page
    body, err = call(e, "put_page", {"slug": "vault/fresh-private", "content": "owner edit"}, local)
    assert not err and body["created"] is False and (vault / "vault/fresh-private.md").read_text() == "owner edit"


@pytest.fixture
def seeded(small_vault):
    for rel, raw in UNINDEXED.items():
        (small_vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (small_vault / rel).write_bytes(raw)
    return small_vault


def test_remote_puts_over_mcp_never_overwrite_an_unindexed_private_page(seeded, daemon):
    vault = daemon["vault"]

    async def go():
        answers = {}
        async with socket_session(daemon["socket"], REMOTE) as s:
            async def put(slug, content="agent text"):
                result = await s.call_tool("put_page", {"slug": slug, "content": content})
                return json.loads(result.content[0].text)

            answers["absent"] = await put("vault/nothing-here")
            for rel in UNINDEXED:
                answers[rel] = await put(rel[:-3])
            # written by the owner a moment before the agent's put: the watcher may not have seen it
            for rel, raw in JUST_WRITTEN.items():
                (vault / rel).write_bytes(raw)
                answers[rel] = await put(rel[:-3])
        return answers

    answers = anyio.run(go)
    absent = answers.pop("absent")
    assert absent["created"] is True and absent["hash"] == hashlib.sha256(b"agent text").hexdigest()
    for rel, body in answers.items():
        assert _same_answer(body, absent), (rel, body)
    for rel, raw in {**UNINDEXED, **JUST_WRITTEN}.items():
        assert (vault / rel).read_bytes() == raw, rel



def _after_next_read(path, then):
    """Run `then()` in a thread as soon as the next reader of `path` closes it (inotify
    IN_CLOSE_NOWRITE): the moment between put_page's check and its write."""
    import ctypes
    import os
    import select
    import threading

    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    libc.inotify_add_watch(fd, os.fsencode(str(path)), 0x10)   # IN_CLOSE_NOWRITE

    def wait():
        try:
            if select.select([fd], [], [], 5)[0]:
                then()
        finally:
            os.close(fd)

    t = threading.Thread(target=wait)
    t.start()
    return t


def test_the_owner_saving_between_the_check_and_the_write_is_never_overwritten(vault, open_index, remote):
    """The owner's editor saves the page private just after a remote put_page read it to check: the
    owner's bytes stay (the write happens only if the file is still what was checked), and the agent
    is answered as for an absent slug, its text kept aside."""
    import os

    write(vault, "notes/plan.md", "# Plan\n\nshared draft\n")
    e = open_index(vault)
    path = vault / "notes/plan.md"
    overwritten, answers = 0, set()
    for i in range(40):
        path.write_text(f"# Plan\n\nshared draft {i}\n")
        e.index.apply(paths=["notes/plan.md"])   # world again, as the index knows it
        mine = f"---\nvisibility: private\n---\n# Plan\n\nthe owner's words {i}\n".encode()

        def save():
            tmp = vault / "notes/.plan.md.swp"
            tmp.write_bytes(mine)
            os.replace(tmp, path)   # as an editor saves

        t = _after_next_read(path, save)
        body, err = call(e, "put_page", {"slug": "notes/plan", "content": f"agent text {i}"}, remote)
        t.join()
        overwritten += path.read_bytes() != mine
        answers.add("error" if err else f"created {body.get('created')}")
    assert overwritten == 0, (overwritten, answers)
    # caught between check and write, the answer is an absent slug's; a save after the write simply wins
    assert "created True" in answers and answers <= {"created True", "created False"}, answers


def test_a_save_between_the_check_and_the_write_answers_as_a_stale_hash(vault, open_index, local):
    """The same conflict an expected_hash mismatch gives, naming the current hash; the save is kept."""
    import hashlib
    import os

    path = write(vault, "notes/todo.md", "# Todo\n\nfirst\n")
    e = open_index(vault)
    theirs = b"# Todo\n\nsaved by the owner's editor\n"

    def save():
        (vault / "notes/.todo.swp").write_bytes(theirs)
        os.replace(vault / "notes/.todo.swp", path)

    t = _after_next_read(path, save)
    body, err = call(e, "put_page", {"slug": "notes/todo", "content": "agent text"}, local)
    t.join()
    stale, _ = call(e, "put_page", {"slug": "notes/todo", "content": "x", "expected_hash": "0" * 64}, local)
    assert err and body["error"] == stale["error"] == "invalid_params" and "changed" in body["message"], body
    assert hashlib.sha256(theirs).hexdigest() in json.dumps(body)
    assert path.read_bytes() == theirs
