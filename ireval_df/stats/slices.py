"""Slice columns from attributes: length buckets, quantile bins, positions, ages.

Each helper returns a polars expression, to be used in ``with_columns`` on a
queries table (before ``evaluate(..., queries=...)``), on a documents table,
as ``evaluate(..., by_doc=...)``, or on any frame. The labels are a
``polars.Enum`` in their natural order, so slices sort as ``1, 2-3, 4-10,
11+`` rather than alphabetically.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df.errors import OptionError
from ireval_df.schema.checks import parse_time
from ireval_df.stats.frames import check_choice

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "age_buckets",
    "age_labels",
    "bucket_labels",
    "length_buckets",
    "position_buckets",
    "quantile_bins",
]

Unit = Literal["words", "chars", "value"]

#: Default query-length buckets: 1, 2, 3, 4-5, 6+ (words).
LENGTH_EDGES = (1, 2, 3, 4, 6)
#: Default rank buckets: 1, 2-3, 4-10, 11-20, 21-50, 51-100, 101+.
POSITION_EDGES = (1, 2, 4, 11, 21, 51, 101)
#: Default document age buckets: <1d, 1d-7d, 7d-30d, 30d-365d, >=365d.
AGE_EDGES = ("1d", "7d", "30d", "365d")
#: The age labels of a document published after the query, and of an unknown age.
FUTURE, UNKNOWN = "future", "unknown"
#: Fixed-length units of an age edge (calendar months and years vary).
_UNITS = {
    "s": dt.timedelta(seconds=1),
    "m": dt.timedelta(minutes=1),
    "h": dt.timedelta(hours=1),
    "d": dt.timedelta(days=1),
    "w": dt.timedelta(weeks=1),
}


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


def _age_edge(edge: Any) -> tuple[str, dt.timedelta]:
    """Read an edge (``"7d"`` or a positive timedelta) as its label and duration."""
    if isinstance(edge, dt.timedelta) and edge > dt.timedelta(0):
        for unit in ("d", "h", "m", "s"):  # the largest whole unit: "7d", "36h"
            count, rest = divmod(edge, _UNITS[unit])
            if not rest:
                return f"{count}{unit}", edge
        return str(edge), edge  # a fraction of a second
    match = (
        re.fullmatch(r"\s*(\d+)\s*([smhdw])\s*", edge)
        if isinstance(edge, str)
        else None
    )
    if match is None or int(match[1]) == 0:
        msg = (
            f"age edges are positive durations, like '12h', '7d' or "
            f"datetime.timedelta(days=7); found {edge!r}.\n  Hint: units are "
            f"{', '.join(repr(u) for u in _UNITS)} (seconds to weeks); write a "
            f"year as '365d', since months and years vary in length."
        )
        raise OptionError(msg)
    return f"{int(match[1])}{match[2]}", int(match[1]) * _UNITS[match[2]]


def _age_edges(edges: Sequence[str | dt.timedelta]) -> list[tuple[str, dt.timedelta]]:
    if isinstance(edges, str | dt.timedelta):
        edges = [edges]
    parsed = [_age_edge(e) for e in edges]
    if not parsed or any(
        a[1] >= b[1] for a, b in zip(parsed, parsed[1:], strict=False)
    ):
        msg = (
            f"age edges must be increasing durations, found {list(edges)!r}.\n"
            f"  Hint: e.g. edges=('1d', '7d', '30d', '365d')."
        )
        raise OptionError(msg)
    return parsed


def age_labels(edges: Sequence[str | dt.timedelta] = AGE_EDGES) -> list[str]:
    """Label the age buckets cut at ``edges``, youngest first.

    Parameters
    ----------
    edges : sequence of str or datetime.timedelta, default ("1d", "7d", "30d", "365d")
        Increasing positive durations: a number and a unit, ``s``, ``m``,
        ``h``, ``d`` or ``w``, or ``timedelta`` objects.

    Returns
    -------
    list of str
        ``"future"`` (published after the query), ``"<e0"``, ``"e0-e1"``
        ..., ``">=en"``, then ``"unknown"`` (no publication or query time).

    Raises
    ------
    OptionError
        An edge is not a positive duration, or the edges do not increase.

    Examples
    --------
    >>> age_labels()
    ['future', '<1d', '1d-7d', '7d-30d', '30d-365d', '>=365d', 'unknown']
    >>> import datetime as dt
    >>> age_labels(["12h", dt.timedelta(days=2)])
    ['future', '<12h', '12h-2d', '>=2d', 'unknown']
    """
    texts = [text for text, _ in _age_edges(edges)]
    middle = [f"{a}-{b}" for a, b in zip(texts, texts[1:], strict=False)]
    return [FUTURE, f"<{texts[0]}", *middle, f">={texts[-1]}", UNKNOWN]


def age_buckets(
    column: str = "published_at",
    *,
    issued_at: str = "issued_at",
    as_of: dt.datetime | dt.date | str | None = None,
    edges: Sequence[str | dt.timedelta] = AGE_EDGES,
    name: str = "age_bucket",
) -> pl.Expr:
    """Bucket documents by age: the query's time minus the publication time.

    Parameters
    ----------
    column : str, default "published_at"
        When each document was published (``Datetime`` or ``Date``; as
        :func:`ireval_df.read_docs` reads it).
    issued_at : str, default "issued_at"
        The column that holds when each query was issued (``Datetime``):
        :func:`ireval_df.read_queries` reads it, and
        ``evaluate(..., docs=..., by_doc=age_buckets())`` joins it onto the
        documents of each query (``evaluate(as_of=...)`` fills it where a
        query has none). Not read when ``as_of`` is given.
    as_of : datetime, date or str, optional
        One time for every query instead (a ``datetime`` with a time zone is
        taken in UTC, a date at midnight, text as ISO-8601): ages as of the
        day the results were collected, say.
    edges : sequence of str or datetime.timedelta, default ("1d", "7d", "30d", "365d")
        The increasing lowest ages of the buckets after the first: a number
        and a unit (``s``, ``m``, ``h``, ``d``, ``w``) or ``timedelta``.
    name : str, default "age_bucket"
        Name of the new column.

    Returns
    -------
    polars.Expr
        An ``Enum`` column, youngest first (:func:`age_labels`):
        ``"<1d"`` for ages in [0, 1 day), ``"1d-7d"`` for [1 day, 7 days),
        ..., ``">=365d"``; ``"future"`` for a document published after the
        query (a negative age: often a leak of later documents into the
        collection), ``"unknown"`` when either time is null (a document
        missing from the documents table, a date that did not parse).

    Raises
    ------
    OptionError
        Bad ``edges`` or ``as_of``.

    Notes
    -----
    Times are naive UTC, as :func:`ireval_df.read_docs` and
    :func:`ireval_df.read_queries` return them; a bucket's lower edge is
    included, its upper edge is not.

    Examples
    --------
    >>> import datetime as dt
    >>> docs = pl.DataFrame({"published_at": [dt.datetime(2024, 1, 30, 18),
    ...                                       dt.datetime(2023, 1, 1), None,
    ...                                       dt.datetime(2024, 2, 2)]})
    >>> docs.select(age_buckets(as_of="2024-01-31"))["age_bucket"].to_list()
    ['<1d', '>=365d', 'unknown', 'future']
    """
    parsed = _age_edges(edges)
    labels = age_labels(edges)
    now = (
        pl.lit(parse_time(as_of, "as_of"), dtype=pl.Datetime("us"))
        if as_of is not None
        else pl.col(issued_at).cast(pl.Datetime("us"))
    )
    age = now - pl.col(column).cast(pl.Datetime("us"))
    # 0: future; 1..n+1: the buckets; n+2: unknown
    older = pl.sum_horizontal([(age >= delta).cast(pl.Int64) for _, delta in parsed])
    code = (
        pl.when(age.is_null())
        .then(pl.lit(len(labels) - 1, pl.Int64))
        .when(age < dt.timedelta(0))
        .then(pl.lit(0, pl.Int64))
        .otherwise(older + 1)
    )
    return (
        code.replace_strict(list(range(len(labels))), labels, return_dtype=pl.String)
        .cast(pl.Enum(labels))
        .alias(name)
    )
