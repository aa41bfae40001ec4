"""Polars expressions the check modules share: quoted ids, samples, plurals.

Findings quote ids and values through these, so that every check shows
them alike (at most :data:`EXAMPLES` of them, long ids cut), and build their
aggregates without looping over data rows.
"""

from __future__ import annotations

import polars as pl

__all__ = [
    "EXAMPLES",
    "first",
    "no_repeats",
    "percent",
    "plural",
    "quoted",
    "run_name",
    "sample",
]

#: How many example ids a finding quotes.
EXAMPLES = 3
#: Longest id quoted in full.
_ID_CHARS = 40


def quoted(expr: pl.Expr) -> pl.Expr:
    """Quote an id for messages: ``'q1'``, long ones cut, null as None.

    Parameters
    ----------
    expr : pl.Expr
        The ids, of any dtype (cast to text).

    Returns
    -------
    pl.Expr
        The quoted text.
    """
    text = expr.cast(pl.String)
    cut = pl.format("'{}...'", text.str.slice(0, _ID_CHARS))
    return (
        pl.when(text.is_null())
        .then(pl.lit("None"))
        .when(text.str.len_chars() > _ID_CHARS)
        .then(cut)
        .otherwise(pl.format("'{}'", text))
    )


def sample(expr: pl.Expr) -> pl.Expr:
    """Join the first few distinct values in byte order, quoted (aggregation).

    Parameters
    ----------
    expr : pl.Expr
        The values of a group.

    Returns
    -------
    pl.Expr
        ``'a', 'b', 'c'``: at most :data:`EXAMPLES`, nulls left out.
    """
    return quoted(expr.drop_nulls().unique().sort().head(EXAMPLES)).str.join(", ")


def first(mask: pl.Expr, value: str | None = None) -> pl.Expr:
    """Describe the first matching row: ``query 'q1' doc 'a'`` (and ``: value``).

    Only the one row is formatted, not every row before filtering.

    Parameters
    ----------
    mask : pl.Expr
        The rows with the problem (aggregation over a group).
    value : str, optional
        A column whose value is shown after the ids.

    Returns
    -------
    pl.Expr
        The description, null when no row matches.
    """
    where = pl.format(
        "query {} doc {}",
        quoted(pl.col("query_id").filter(mask).first()),
        quoted(pl.col("doc_id").filter(mask).first()),
    )
    if value is None:
        return where
    shown = pl.col(value).filter(mask).first().cast(pl.String)
    return pl.format("{}: {}", where, shown)


def plural(n: pl.Expr, one: str, many: str) -> pl.Expr:
    """``1 query`` / ``3 queries``.

    Parameters
    ----------
    n : pl.Expr
        The count.
    one, many : str
        The noun for one, and for any other count.

    Returns
    -------
    pl.Expr
        The count and its noun.
    """
    return pl.format(
        "{} {}", n, pl.when(n == 1).then(pl.lit(one)).otherwise(pl.lit(many))
    )


def percent(share: pl.Expr) -> pl.Expr:
    """``0.25`` -> ``25.0%``.

    Parameters
    ----------
    share : pl.Expr
        A share between 0 and 1.

    Returns
    -------
    pl.Expr
        The percentage, to one decimal.
    """
    return pl.format("{}%", (share * 100).round(1))


def run_name() -> pl.Expr:
    """Name the run of a finding: ``run 'bm25'``.

    Returns
    -------
    pl.Expr
        Text from the ``run_id`` column.
    """
    return pl.format("run {}", quoted(pl.col("run_id")))


def no_repeats(frame: pl.DataFrame, keys: list[str]) -> bool:
    """Tell cheaply that no key repeats: as many distinct hashes as rows.

    False may be a hash collision; the exact count that follows decides.

    Parameters
    ----------
    frame : pl.DataFrame
        The rows.
    keys : list of str
        The columns that together should be unique.

    Returns
    -------
    bool
        True when no key repeats.
    """
    hashed = pl.lit(0, dtype=pl.UInt64)
    for seed, key in enumerate(keys, start=1):
        hashed = hashed ^ pl.col(key).hash(seed)
    return bool(frame.select(hashed.n_unique() == pl.len()).item())
