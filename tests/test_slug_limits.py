"""put_page slugs past the file system's name and path limits: `invalid_params` that names no server path."""

from __future__ import annotations

import pytest
from conftest import call
from indexer_fixtures import open_index  # noqa: F401

from brain.indexer.vault.vault_files import MAX_SEGMENT_BYTES


def _assert_refused_without_paths(body: dict, is_error: bool, vault) -> None:
    assert is_error and body["error"] == "invalid_params", body
    text = " ".join(str(body.get(k, "")) for k in ("message", "suggestion", "detail"))
    assert str(vault) not in text and str(vault.resolve()) not in text and "/tmp" not in text, text


@pytest.mark.parametrize("length", [MAX_SEGMENT_BYTES + 1, 245, 250, 252, 255])
def test_a_long_last_segment_is_invalid_params(vault, open_index, remote, length):
    engine = open_index(vault)
    body, err = call(engine, "put_page", {"slug": "notes/" + "a" * (length - 6), "content": "x"}, remote)
    if length - 6 > MAX_SEGMENT_BYTES:
        _assert_refused_without_paths(body, err, vault)
        assert "bytes" in body["message"]
    body, err = call(engine, "put_page", {"slug": "a" * length, "content": "x"}, remote)
    _assert_refused_without_paths(body, err, vault)
    assert str(MAX_SEGMENT_BYTES) in body["message"]


def test_the_longest_segment_allowed_is_written(vault, open_index, remote):
    engine = open_index(vault)
    slug = "b/" + "a" * MAX_SEGMENT_BYTES
    body, err = call(engine, "put_page", {"slug": slug, "content": "# Long\n"}, remote)
    assert not err and body["slug"] == slug, body
    assert (vault / f"{slug}.md").read_text() == "# Long\n"


def test_segments_are_measured_in_bytes_not_characters(vault, open_index, remote):
    engine = open_index(vault)
    # 130 characters, 260 bytes in UTF-8: within the 255-character slug limit, past the file name's
    body, err = call(engine, "put_page", {"slug": "people/" + "ж" * 130, "content": "x"}, remote)
    _assert_refused_without_paths(body, err, vault)
    assert "260 bytes" in body["message"]
    body, err = call(engine, "put_page", {"slug": "people/" + "ж" * 100, "content": "x"}, remote)
    assert not err, body


def test_a_slug_that_would_pass_the_whole_path_limit_is_invalid_params(tmp_path, open_index, remote):
    # a vault folder whose own path is about 3,700 bytes long (each folder well under 255)
    deep = tmp_path
    while len(str(deep).encode()) < 3700:
        deep = deep / ("d" * 200)
    deep.mkdir(parents=True)
    engine = open_index(deep)
    slug = "/".join("ж" * 60 for _ in range(4))   # 243 characters, 483 bytes
    body, err = call(engine, "put_page", {"slug": slug, "content": "x"}, remote)
    _assert_refused_without_paths(body, err, deep)
    assert "limit" in body["message"]
