"""How the vector build cuts its batches (indexer/embeddings/vectors.py `cut_batches`): few long
texts per call, many short ones, none lost or reordered."""

from hypothesis import given, strategies as st

from brain.indexer.embeddings.vectors import BATCH_CHARS, EMBED_BATCH, TRUNCATED_CHARS, cut_batches


def test_long_texts_go_a_few_at_a_time_and_short_ones_many():
    long = [f"l{i}" for i in range(6)]
    short = [f"s{i}" for i in range(20)]
    size = {**{h: 40 for h in short}, **{h: 5000 for h in long}}
    batches = cut_batches(short + long, size.get, EMBED_BATCH)
    assert [len(b) for b in batches] == [8, 8, 4, 2, 2, 2]
    # 8 texts at the model's cap in one call was the build's memory peak
    assert max(len(b) for b in batches if b[0].startswith("l")) * TRUNCATED_CHARS <= BATCH_CHARS


@given(st.lists(st.integers(min_value=0, max_value=3000), max_size=60), st.integers(min_value=1, max_value=16))
def test_every_text_once_in_order_within_both_limits(lengths, most):
    ordered = [f"h{i}" for i in range(len(lengths))]
    size = dict(zip(ordered, sorted(lengths)))
    batches = cut_batches(ordered, size.get, most)
    assert [h for b in batches for h in b] == ordered
    for b in batches:
        assert 1 <= len(b) <= most
        assert len(b) == 1 or len(b) * min(size[b[-1]], TRUNCATED_CHARS) <= BATCH_CHARS
