"""Slice columns from query attributes: length buckets, quantile bins, positions.

Each helper returns a polars expression, to be used in ``with_columns`` on a
queries table (before ``evaluate(..., queries=...)``) or on any frame. The
labels are a ``polars.Enum`` in their natural order, so slices sort as
``1, 2-3, 4-10, 11+`` rather than alphabetically.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import polars as pl

from ireval_df.errors import OptionError
from ireval_df.stats.frames import check_choice

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["bucket_labels", "length_buckets", "position_buckets", "quantile_bins"]

Unit = Literal["words", "chars", "value"]

#: Default query-length buckets: 1, 2, 3, 4-5, 6+ (words).
LENGTH_EDGES = (1, 2, 3, 4, 6)
#: Default rank buckets: 1, 2-3, 4-10, 11-20, 21-50, 51-100, 101+.
POSITION_EDGES = (1, 2, 4, 11, 21, 51, 101)


def _check_edges(edges: Sequence[int]) -> list[int]:
    values = list(edges)
    ok = (
        len(values) > 0
        and all(isinstance(e, int) and not isinstance(e, bool) for e in values)
        and all(a < b for a, b in zip(values, values[1:], strict=False))
    )
    if not ok:
        msg = (
            f"edges must be increasing whole numbers, found {tuple(edges)!r}.\n"
            "  Hint: give each bucket's lowest value, e.g. edges=(1, 2, 4, 11)."
        )
        raise OptionError(msg)
    return values


def bucket_labels(edges: Sequence[int]) -> list[str]:
    """Label the buckets that start at ``edges``: below, ranges, the last open one.

    Parameters
    ----------
    edges : sequence of int
        Increasing lowest values of the buckets.

    Returns
    -------
    list of str
        ``"<e0"``, then ``"a"`` or ``"a-b"`` per bucket, then ``"last+"``.

    Raises
    ------
    IrevalError
        ``edges`` is empty, not whole numbers or not increasing.

    Examples
    --------
    >>> bucket_labels([1, 2, 4, 11])
    ['<1', '1', '2-3', '4-10', '11+']
    """
    values = _check_edges(edges)
    labels = [f"<{values[0]}"]
    for low, nxt in zip(values, values[1:], strict=False):
        labels.append(str(low) if nxt - 1 == low else f"{low}-{nxt - 1}")
    labels.append(f"{values[-1]}+")
    return labels


def _buckets(value: pl.Expr, edges: Sequence[int], name: str) -> pl.Expr:
    values = _check_edges(edges)
    labels = bucket_labels(values)
    index = pl.sum_horizontal([(value >= edge).cast(pl.Int64) for edge in values])
    return (
        pl.when(value.is_not_null())
        .then(index)
        .replace_strict(list(range(len(labels))), labels, return_dtype=pl.String)
        .cast(pl.Enum(labels))
        .alias(name)
    )


def length_buckets(
    column: str = "text",
    *,
    unit: Unit = "words",
    edges: Sequence[int] = LENGTH_EDGES,
    name: str = "length_bucket",
) -> pl.Expr:
    """Bucket queries by length.

    Parameters
    ----------
    column : str, default "text"
        The query text, or a column that already holds a length
        (``unit="value"``).
    unit : {"words", "chars", "value"}, default "words"
        Count whitespace-separated words or characters of ``column``, or take
        its values as they are.
    edges : sequence of int, default (1, 2, 3, 4, 6)
        Lowest length of each bucket; lengths below the first edge form a
        bucket of their own (``"<1"``: empty queries).
    name : str, default "length_bucket"
        Name of the new column.

    Returns
    -------
    polars.Expr
        An ``Enum`` column: ``"<1", "1", "2", "3", "4-5", "6+"`` by default.

    Raises
    ------
    IrevalError
        Bad ``edges`` or ``unit``.

    Examples
    --------
    >>> import polars as pl
    >>> texts = ["weather", "cheap flights paris", "how do I bake bread at home"]
    >>> queries = pl.DataFrame({"text": texts})
    >>> queries.select(length_buckets())["length_bucket"].to_list()
    ['1', '3', '6+']
    """
    check_choice("unit", unit, ("words", "chars", "value"))
    col = pl.col(column)
    if unit == "words":
        value = col.str.count_matches(r"\S+")
    elif unit == "chars":
        value = col.str.len_chars()
    else:
        value = col
    return _buckets(value, edges, name)


def position_buckets(
    column: str = "rank",
    *,
    edges: Sequence[int] = POSITION_EDGES,
    name: str = "position_bucket",
) -> pl.Expr:
    """Bucket result positions (ranks): ``1, 2-3, 4-10, 11-20, 21-50, 51-100, 101+``.

    Parameters
    ----------
    column : str, default "rank"
        A rank column (1 = top), for example of a run, or the rank of the
        first relevant document of each query.
    edges : sequence of int, default (1, 2, 4, 11, 21, 51, 101)
        Lowest rank of each bucket.
    name : str, default "position_bucket"
        Name of the new column.

    Returns
    -------
    polars.Expr
        An ``Enum`` column; nulls (not retrieved) stay null.

    Raises
    ------
    IrevalError
        Bad ``edges``.

    Examples
    --------
    >>> import polars as pl
    >>> ranks = pl.DataFrame({"rank": [1, 3, 10, 11, None]})
    >>> ranks.select(position_buckets())["position_bucket"].to_list()
    ['1', '2-3', '4-10', '11-20', None]
    """
    return _buckets(pl.col(column), edges, name)


def quantile_bins(
    column: str,
    q: int = 4,
    *,
    labels: Sequence[str] | None = None,
    name: str | None = None,
) -> pl.Expr:
    """Equal-frequency bins of a numeric or temporal attribute (popularity, freshness).

    Parameters
    ----------
    column : str
        The attribute; numbers, dates or datetimes.
    q : int, default 4
        Number of bins (4: quartiles).
    labels : sequence of str, optional
        One label per bin, lowest values first; default ``"Q1"`` ... ``"Qq"``.
    name : str, optional
        Name of the new column; default ``"<column>_bin"``.

    Returns
    -------
    polars.Expr
        An ``Enum`` column. Bin ``i`` holds the values ``x`` with
        ``Q((i-1)/q) < x <= Q(i/q)``, ``Q`` the empirical quantile function
        (inverted distribution function): ``1 + floor(q (r - 1) / n)`` for a
        value with ``r - 1`` of the ``n`` non-null values below it. Tied
        values share a bin; bins hold about ``n / q`` values each. Nulls stay
        null.

    Raises
    ------
    IrevalError
        ``q`` is not a whole number >= 2, or ``labels`` has not ``q`` items.

    Notes
    -----
    The bins are computed over the frame the expression runs on: apply it to
    the queries table (one row per query), not to per-query results, where
    each query appears once per run and metric.

    Examples
    --------
    >>> import polars as pl
    >>> queries = pl.DataFrame({"clicks": [5, 1, 9, 3, 7, 3, None, 2]})
    >>> queries.select(quantile_bins("clicks", 2))["clicks_bin"].to_list()
    ['Q2', 'Q1', 'Q2', 'Q1', 'Q2', 'Q1', None, 'Q1']
    """
    if isinstance(q, bool) or not isinstance(q, int) or q < 2:
        msg = f"q must be a whole number of bins >= 2, found {q!r}."
        raise OptionError(msg)
    names = [f"Q{i}" for i in range(1, q + 1)] if labels is None else list(labels)
    if len(names) != q or len(set(names)) != q:
        msg = f"labels must name the {q} bins once each, found {list(names)!r}."
        raise OptionError(msg)
    col = pl.col(column)
    n = col.count().cast(pl.Int64)
    index = ((col.rank("min").cast(pl.Int64) - 1) * q) // n
    return (
        index.replace_strict(list(range(q)), names, return_dtype=pl.String)
        .cast(pl.Enum(names))
        .alias(name or f"{column}_bin")
    )
