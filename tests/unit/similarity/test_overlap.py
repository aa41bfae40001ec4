"""jaccard and overlap on hand-worked rankings (derivations in the comments)."""

from __future__ import annotations

import polars as pl
import pytest

from ireval_df.errors import OptionError
from ireval_df.similarity.overlap import jaccard, overlap
from ireval_df.similarity.rankings import cut

SCHEMA = {
    "key": pl.Int64,
    "doc_id": pl.String,
    "pos": pl.Int64,
    "tie_start": pl.Int64,
    "tie_size": pl.Int64,
}


def side(*orderings: str) -> pl.LazyFrame:
    """One key per ordering (space-separated ids, no ties); ``""`` is empty."""
    rows = [
        (key, doc, pos, pos, 1)
        for key, ordering in enumerate(orderings)
        for pos, doc in enumerate(ordering.split(), start=1)
    ]
    return pl.LazyFrame(rows, schema=SCHEMA, orient="row")


def keys(n: int) -> pl.DataFrame:
    return pl.DataFrame({"key": range(n)}, schema={"key": pl.Int64})


def test_jaccard():
    # 0: {a b c} and {b c d}: 2 shared, union 4 -> 0.5
    # 1: the same set in another order -> 1
    # 2: disjoint -> 0
    # 3: one side empty -> 0 / 2 = 0
    # 4: both empty: the same (empty) set -> 1 by definition
    # 5: no rows at all: both empty -> 1
    x = side("a b c", "a b", "a", "", "")
    y = side("b c d", "b a", "b", "a b", "")
    result = jaccard(x, y, keys(6)).collect()
    assert result.rows() == [(0, 0.5), (1, 1.0), (2, 0.0), (3, 0.0), (4, 1.0), (5, 1.0)]


def test_jaccard_ignores_order_and_ties():
    x = pl.LazyFrame(
        {
            "key": 0,
            "doc_id": ["c", "a", "b"],
            "pos": [1, 2, 3],
            "tie_start": 1,
            "tie_size": 3,
        }
    )
    assert jaccard(x, side("a b c"), keys(1)).collect()["value"].item() == 1.0


def test_overlap_divides_by_k():
    # k = 3. 0: {a b c} and {c a e}: 2 shared -> 2/3
    # 1: the same two documents, both shorter than k -> 2/3, not 1
    # 2: one side empty -> 0; 3: both empty -> 0
    x = side("a b c d", "a b", "a b", "")
    y = side("c a e f", "b a", "", "")
    result = overlap(cut(x, 3), cut(y, 3), keys(4), 3).collect()
    assert result["key"].to_list() == [0, 1, 2, 3]
    assert result["value"].to_list() == pytest.approx([2 / 3, 2 / 3, 0.0, 0.0])


def test_overlap_at_one_is_whether_the_tops_agree():
    x, y = side("a b", "a b"), side("a c", "b a")
    result = overlap(cut(x, 1), cut(y, 1), keys(2), 1).collect()
    assert result["value"].to_list() == [1.0, 0.0]


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_overlap_rejects_a_cutoff_that_is_not_a_positive_integer(k):
    with pytest.raises(OptionError, match=r"k must be a positive integer"):
        overlap(side("a"), side("a"), keys(1), k)
