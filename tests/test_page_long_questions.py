"""A long question is read by meaning first: a page that shares a few of its words (a title word,
"package", "release") does not outrank the page the vectors agree on, and such a keyword hit is not
labelled keyword_exact (indexer/page_policy/fusion.py KEYWORD_WORDS, indexer/page_policy/evidence.py AGREE)."""

from brain.indexer.page_policy.evidence import evidence_of
from brain.indexer.page_policy.fusion import fuse

# page 1 leads the keyword list on a few shared words; page 2 leads both meaning lists
KEYWORD = [(1, 11, 10.0), (2, 21, 4.0)]
COVER = {1: 0.6, 2: 0.2}
CHUNKS = [(2, 22, 0.6), (1, 12, 0.5)]
CARDS = [(2, 20, 0.5), (3, 30, 0.4)]


def _first(words: int) -> int:
    fused = fuse(KEYWORD, COVER, CHUNKS, CARDS, words=words)
    return max(fused, key=fused.get)


def test_the_keyword_leader_wins_a_short_query_and_the_meaning_leader_a_long_one():
    assert _first(3) == 1
    assert _first(6) == 1
    assert _first(12) == 2


def test_a_keyword_hit_the_vectors_place_far_down_is_not_keyword_exact():
    common = dict(exact=None, tokens=["coworker", "push", "releas"], title="update", cosine=0.45,
                  lexical=True, cover=0.5, share=1.0)
    assert evidence_of(**common, meaning_rank=0) == "keyword_exact"
    assert evidence_of(**common, meaning_rank=7) == "weak_semantic"
    assert evidence_of(**common, meaning_rank=None) == "keyword_exact"   # keyword-only: no vectors to ask


def test_keyword_only_a_first_hit_tied_with_the_next_page_is_not_keyword_exact():
    common = dict(exact=None, tokens=["lock", "file"], title="config", cosine=None, lexical=True,
                  cover=0.6, share=1.0, meaning_rank=None)
    assert evidence_of(**common, lead=1.5) == "keyword_exact"
    assert evidence_of(**common, lead=1.01) == "weak_semantic"
