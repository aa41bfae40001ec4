"""Inverted pairs: two judged documents in the top k, the less relevant one above.

One self-join of each ranking's judged top-k rows (at most k x k pairs a
ranking; k is small) finds every pair at once, for all rankings; document
attributes on the rows (``source_type``, ``published_at``) tell which
inversions cross sources (calibration) or put an older document above a
newer, more relevant one (freshness).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["LOW", "inverted_pairs"]

#: Suffix of the lower-ranked (more relevant) document's columns in a pair
LOW = "__ireval_low"


def inverted_pairs(top: pl.LazyFrame, carried: Sequence[str] = ()) -> pl.LazyFrame:
    """Every inverted pair of judged documents in the top k of each ranking.

    Parameters
    ----------
    top : polars.LazyFrame
        The judged rows (``label >= 0``) ranked within k: ``run_id,
        query_id, doc_id, rank, label``, and optionally ``source_type`` and
        ``published_at`` (null where unknown) and the ``carried`` columns.
    carried : sequence of str
        Columns of the lower-ranked document to keep on each pair (slices
        by document attribute count a pair in its slice).

    Returns
    -------
    polars.LazyFrame
        One row per pair ``(upper, lower)`` with ``rank_upper < rank_lower``
        and ``grade_upper < grade_lower``: ``run_id, query_id, calibration,
        freshness`` (Boolean; null when the attribute is not on ``top``,
        false when either document's value is null), then ``carried``.
        ``calibration``: the two documents' ``source_type`` differ;
        ``freshness``: the lower-ranked document's ``published_at`` is
        later than the upper one's.

    Examples
    --------
    >>> top = pl.LazyFrame({"run_id": "r", "query_id": "1", "doc_id": ["a", "b", "c"],
    ...                     "rank": [1, 2, 3], "label": [0, 2, 1],
    ...                     "source_type": ["web", "news", "web"]})
    >>> inverted_pairs(top).collect().sort("calibration").rows()
    [('r', '1', False, None), ('r', '1', True, None)]
    """
    names = top.collect_schema().names()
    upper = top.select(
        "run_id",
        "query_id",
        "rank",
        "label",
        *(c for c in ("source_type", "published_at") if c in names),
    )
    lower = top.select(
        "run_id",
        "query_id",
        *(
            pl.col(c).alias(c + LOW)
            for c in dict.fromkeys(
                ["rank", "label", "source_type", "published_at", *carried]
            )
            if c in names
        ),
    )
    pairs = upper.join(lower, on=["run_id", "query_id"], how="inner").filter(
        (pl.col("rank") < pl.col("rank" + LOW))
        & (pl.col("label") < pl.col("label" + LOW))
    )

    def differ(column: str, test: pl.Expr) -> pl.Expr:
        if column not in names:
            return pl.lit(None, dtype=pl.Boolean).alias(column)
        return test.fill_null(value=False)

    calibration = differ(
        "source_type", pl.col("source_type") != pl.col("source_type" + LOW)
    ).alias("calibration")
    freshness = differ(
        "published_at", pl.col("published_at" + LOW) > pl.col("published_at")
    ).alias("freshness")
    return pairs.select(
        "run_id",
        "query_id",
        calibration,
        freshness,
        *(pl.col(c + LOW).alias(c) for c in carried),
    )
