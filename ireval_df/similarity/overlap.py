"""Set overlap of two rankings: Jaccard's coefficient and the overlap at a cutoff.

Both read the paired rankings of :mod:`.rankings` (``x`` = the compared run,
``y`` = the baseline) as sets of documents: order and ties do not matter.
"""

from __future__ import annotations

import polars as pl

from ireval_df.errors import OptionError
from ireval_df.similarity.rankings import KEY

__all__ = ["jaccard", "overlap"]


def jaccard(
    x: pl.LazyFrame, y: pl.LazyFrame, keys: pl.DataFrame | pl.LazyFrame
) -> pl.LazyFrame:
    """Jaccard's coefficient of the two rankings' documents: ``|A ∩ B| / |A ∪ B|``.

    Parameters
    ----------
    x : polars.LazyFrame
        The compared run's rankings (:data:`~ireval_df.similarity.rankings.RANKED`
        columns; only ``key`` and ``doc_id`` are read).
    y : polars.LazyFrame
        The baseline's rankings, same columns.
    keys : polars.DataFrame or polars.LazyFrame
        Every comparison (a ``key`` column); each gets a row, even when a
        side is empty.

    Returns
    -------
    polars.LazyFrame
        ``key, value`` (Float64), one row per key, sorted by key.

    Notes
    -----
    ``|A ∪ B| = |A| + |B| - |A ∩ B|``. Two empty rankings are the same
    (empty) set: 1.0, not NaN. One empty ranking: 0.0. Cut both rankings
    with :func:`~ireval_df.similarity.rankings.cut` first for the Jaccard
    coefficient of the top k.

    Examples
    --------
    ``{a, b, c}`` and ``{b, c, d}``: 2 shared of 4.

    >>> x = pl.LazyFrame({"key": 0, "doc_id": ["a", "b", "c"]})
    >>> y = pl.LazyFrame({"key": 0, "doc_id": ["b", "c", "d"]})
    >>> jaccard(x, y, pl.DataFrame({"key": [0, 1]})).collect().rows()
    [(0, 0.5), (1, 1.0)]
    """
    sizes = _sizes(x, y, keys)
    union = pl.col("__ireval_x") + pl.col("__ireval_y") - pl.col("__ireval_both")
    value = (
        pl.when(union > 0)
        .then(pl.col("__ireval_both").cast(pl.Float64) / union.cast(pl.Float64))
        .otherwise(1.0)
    )
    return sizes.select(KEY, value.alias("value"))


def overlap(
    x: pl.LazyFrame, y: pl.LazyFrame, keys: pl.DataFrame | pl.LazyFrame, k: int
) -> pl.LazyFrame:
    """Overlap at k: the documents of both top k, divided by k.

    Parameters
    ----------
    x : polars.LazyFrame
        The compared run's rankings, already cut at ``k``
        (:func:`~ireval_df.similarity.rankings.cut`; only ``key`` and
        ``doc_id`` are read).
    y : polars.LazyFrame
        The baseline's rankings, cut at ``k`` too.
    keys : polars.DataFrame or polars.LazyFrame
        Every comparison (a ``key`` column); each gets a row, even when a
        side is empty.
    k : int
        The cutoff, at least 1.

    Returns
    -------
    polars.LazyFrame
        ``key, value`` (Float64), one row per key, sorted by key.

    Raises
    ------
    OptionError
        ``k`` is not a positive integer.

    Notes
    -----
    ``|A_k ∩ B_k| / k``. The denominator is ``k`` even when a ranking holds
    fewer than ``k`` documents (as ``P@k`` counts missing ranks as misses),
    so two identical rankings of 3 documents overlap 0.3 at 10; two empty
    rankings overlap 0.0. Ties do not matter beyond the cut: ``cut`` keeps
    positions 1..k of the tie-broken order.

    Examples
    --------
    Top 2 of ``a b c`` and ``b d a``: ``{a, b}`` and ``{b, d}`` share one.

    >>> from ireval_df.similarity.rankings import cut
    >>> x = pl.LazyFrame({"key": 0, "doc_id": ["a", "b", "c"], "pos": [1, 2, 3],
    ...                   "tie_start": [1, 2, 3], "tie_size": 1})
    >>> y = pl.LazyFrame({"key": 0, "doc_id": ["b", "d", "a"], "pos": [1, 2, 3],
    ...                   "tie_start": [1, 2, 3], "tie_size": 1})
    >>> overlap(cut(x, 2), cut(y, 2), pl.DataFrame({"key": [0]}), 2).collect().rows()
    [(0, 0.5)]
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        msg = f"k must be a positive integer, got {k!r}.\n  Hint: pass k=10."
        raise OptionError(msg)
    sizes = _sizes(x, y, keys)
    value = pl.col("__ireval_both").cast(pl.Float64) / float(k)
    return sizes.select(KEY, value.alias("value"))


def _sizes(
    x: pl.LazyFrame, y: pl.LazyFrame, keys: pl.DataFrame | pl.LazyFrame
) -> pl.LazyFrame:
    """Count each key's documents in ``x``, in ``y`` and in both; 0 when absent."""
    x_docs = x.select(KEY, "doc_id")
    y_docs = y.select(KEY, "doc_id")
    counts = [
        x_docs.group_by(KEY).agg(pl.len().cast(pl.Int64).alias("__ireval_x")),
        y_docs.group_by(KEY).agg(pl.len().cast(pl.Int64).alias("__ireval_y")),
        x_docs.join(y_docs, on=[KEY, "doc_id"])
        .group_by(KEY)
        .agg(pl.len().cast(pl.Int64).alias("__ireval_both")),
    ]
    sizes = keys.lazy().select(KEY)
    for count in counts:
        sizes = sizes.join(count, on=KEY, how="left")
    return sizes.with_columns(
        pl.col("__ireval_x", "__ireval_y", "__ireval_both").fill_null(0)
    ).sort(KEY)
