"""What `brain status`, `brain init` and a bare `brain` say, from the status JSON alone."""

from pathlib import Path

from brain.cli.status_view import duration, keyword_line, next_step, semantic_line

REPO = Path(__file__).resolve().parents[1]

BUILDING = {"daemon": True, "index_ready": True, "pages": 173, "chunks": 1566, "facts": 0, "last_sync": "x",
            "model_state": "ready", "vectors_ready": False, "vectors": 312, "vectors_pending": 1254}


def test_semantic_progress_with_a_measured_rate_and_with_the_daemons_own_estimate():
    assert semantic_line(BUILDING, rate=10.0) == ("semantic search: building in the background: "
                                                  "312/1,566 chunks, about 2 min")
    assert semantic_line(BUILDING) == "semantic search: building in the background: 312/1,566 chunks"
    assert semantic_line({**BUILDING, "vector_build": {"state": "building", "eta_s": 45}}).endswith("312/1,566 chunks, about 45 s")


def test_every_model_state_reads_as_what_is_true():
    assert "loading the embedding model" in semantic_line({**BUILDING, "model_state": "loading"})
    assert "off" in semantic_line({**BUILDING, "model_state": "off"})
    assert "failed" in semantic_line({**BUILDING, "model_state": "failed"})
    assert semantic_line({**BUILDING, "vectors_ready": True, "vectors": 1566}) == \
        "semantic search: ready (1,566 chunk vectors)"
    assert "daemon" in semantic_line({"daemon": False})


def test_keyword_readiness_and_the_next_step():
    assert keyword_line(BUILDING) == "keyword search: ready (173 pages, 1,566 chunks)"
    assert keyword_line({"daemon": True, "index_ready": False, "index_progress": [40, 173]}) == \
        "keyword search: building (40/173 files looked at)"
    assert keyword_line({"daemon": False, "last_sync": None}) == "keyword search: not built yet"
    assert "brain daemon start" in next_step({"daemon": False, "last_sync": None}, Path("/v"))
    assert "brain remember" in next_step(BUILDING, Path("/v")) and "claude mcp add --scope user brain -- /" in \
        next_step(BUILDING, Path("/v"))
    assert "brain recall" in next_step({**BUILDING, "facts": 3}, Path("/v"))
    assert "no Markdown pages" in next_step({**BUILDING, "pages": 0}, Path("/v"))


def test_durations_round_for_a_glance():
    assert [duration(s) for s in (0.2, 44, 100, 3 * 3600 + 600)] == ["about 1 s", "about 44 s", "about 2 min",
                                                                     "about 3 h 10 min"]


def test_the_keyword_only_reason_is_spelled_once():
    """The wire value lives in one module; everything else imports it."""
    literal = "keyword_only_no_embedding_provider"
    holders = [p.relative_to(REPO).as_posix() for folder in ("cli", "daemon", "indexer", "hooks")
               for p in (REPO / folder).rglob("*.py") if literal in p.read_text()]
    assert holders == ["indexer/embeddings/search_modes.py"]
