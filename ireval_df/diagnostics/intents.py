"""Intents (subtopics) of a query: reading them, the primary intent, intent failures.

Qrels may carry an ``intent`` (or ``subtopic``) column: each row then judges
a document for one intent of its query, and a document may be judged for
several (TREC's diversity qrels). :func:`read_judgments` reads such qrels
into the canonical judgments every other analysis uses (one grade per
document: its highest over the intents) and the intent rows beside them.
:func:`primary_intents` and :func:`intent_failures` find, per query, the
intent it is mostly about and whether a ranking's top k misses it while
serving another.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from ireval_df.errors import DataError, SchemaError, warn
from ireval_df.schema.columns import QUERIES, resolve
from ireval_df.schema.intents import (
    INTENT_COLUMNS,
    Judgments,
    checked,
    intent_column,
    read_judgments,
    source_of,
)
from ireval_df.schema.sources import label_of, read_source

__all__ = [
    "INTENT_COLUMNS",
    "Judgments",
    "intent_failures",
    "primary_intents",
    "read_intent_weights",
    "read_judgments",
]

_PRIMARY = "__ireval_primary"
_SCORE = "__ireval_score"


def read_intent_weights(obj: Any) -> pl.LazyFrame:
    """Read a table of intent weights: ``query_id, intent, weight``.

    Parameters
    ----------
    obj : frame or path
        A table with a query id column (any spelling the queries table
        takes), ``intent`` (or ``subtopic``) and ``weight``.

    Returns
    -------
    polars.LazyFrame
        ``query_id`` (String), ``intent`` (String), ``weight`` (Float64).

    Raises
    ------
    SchemaError
        A column is missing, or ``weight`` is not numeric.
    DataError
        A null intent or weight, a negative or NaN weight, or an intent
        listed twice for a query.

    Examples
    --------
    >>> table = pl.DataFrame({"qid": [1, 1], "intent": ["x", "y"], "weight": [3, 1]})
    >>> read_intent_weights(table).collect().rows()
    [('1', 'x', 3.0), ('1', 'y', 1.0)]
    """
    label = label_of(obj, "intents")
    frame = read_source(obj, QUERIES, None, label).frame.lazy()
    names = frame.collect_schema().names()
    column = intent_column(names)
    weight = next((n for n in names if n.strip().lower() == "weight"), None)
    if column is None or weight is None:
        msg = (
            f"{label} needs a query id, an 'intent' and a 'weight' column, found "
            f"{names!r}.\n  Hint: one row per query and intent, e.g. "
            "pl.DataFrame({'query_id': ..., 'intent': ..., 'weight': ...})."
        )
        raise SchemaError(msg)
    mapping = resolve(
        [n for n in names if n not in (column, weight)], QUERIES, None, label
    )
    query = source_of(mapping, "query_id")
    dtype = frame.collect_schema()[weight]
    if not dtype.is_numeric():
        msg = (
            f"{label} column {weight!r} has dtype {dtype}; expected numbers.\n"
            f"  Hint: cast it first, e.g. pl.col({weight!r}).cast(pl.Float64)."
        )
        raise SchemaError(msg)
    staged = frame.select(
        pl.col(query).alias("query_id"),
        pl.col(column).cast(pl.String).alias("intent"),
        pl.col(weight).cast(pl.Float64).alias("weight"),
    )
    data = checked(staged, {"query_id": query}, label)
    value = pl.col("weight")
    bad = pl.col("intent").is_null() | value.is_null() | value.is_nan() | (value < 0)
    found = data.filter(bad)
    if found.height:
        msg = (
            f"{label} has {found.height} row(s) without an intent or with a weight "
            f"that is null, NaN or negative, e.g. {found.row(0)!r}.\n  Hint: give "
            "every row an intent and a weight of at least 0."
        )
        raise DataError(msg)
    twice = data.filter(pl.struct("query_id", "intent").is_duplicated())
    if twice.height:
        msg = (
            f"{label} lists an intent more than once for a query ({twice.height} "
            f"rows), e.g. {twice.row(0)!r}.\n  Hint: keep one weight per query "
            "and intent."
        )
        raise DataError(msg)
    return data.lazy()


def primary_intents(
    intents: pl.LazyFrame, rel: int, weights: pl.LazyFrame | None = None
) -> pl.DataFrame:
    """Find the primary intent(s) of each query: ``query_id, intent``.

    A query's primary intent is, among its intents with a relevant document
    (grade >= ``rel``), the one with most relevant documents, or with
    ``weights`` the one of highest weight (an intent the table does not
    weigh ranks below every weighted one; a query the table does not list
    at all falls back on the counts, with a warning). Ties: every tied
    intent is primary. A query without a relevant document has none.

    Examples
    --------
    >>> rows = pl.LazyFrame({"query_id": "1", "intent": ["x", "x", "y", "z"],
    ...                      "doc_id": ["a", "b", "c", "d"], "relevance": [1, 1, 2, 0]})
    >>> primary_intents(rows, 1).rows()
    [('1', 'x')]
    >>> weights = pl.LazyFrame({"query_id": "1", "intent": ["y"], "weight": [2.0]})
    >>> primary_intents(rows, 1, weights).rows()
    [('1', 'y')]
    """
    counts = (
        intents.filter(pl.col("relevance") >= rel)
        .group_by("query_id", "intent")
        .agg(pl.len().cast(pl.Float64).alias(_SCORE))
    )
    if weights is not None:
        counts = counts.join(weights, on=["query_id", "intent"], how="left")
        weighed = pl.col("weight").is_not_null().any().over("query_id")
        counts = counts.with_columns(
            pl.when(weighed)
            .then(pl.col("weight").fill_null(-1.0))
            .otherwise(pl.col(_SCORE))
            .alias(_SCORE),
            weighed.alias("__ireval_weighed"),
        )
        listed = weights.select("query_id").unique()
        unlisted = (
            counts.join(listed, on="query_id", how="anti")
            .select(pl.col("query_id").n_unique())
            .collect()
            .item()
        )
        if unlisted:
            warn(
                f"intents= lists no weight for {unlisted} quer(ies) whose qrels hold "
                "relevant documents for some intent: their primary intent is the "
                "one with most relevant documents.\n  Hint: add their intents and "
                "weights to intents=."
            )
    best = pl.col(_SCORE) == pl.col(_SCORE).max().over("query_id")
    return (
        counts.filter(best)
        .select("query_id", "intent")
        .sort("query_id", "intent")
        .collect()
    )


def intent_failures(
    ranked: pl.DataFrame,
    intents: pl.LazyFrame,
    primary: pl.DataFrame,
    k: int,
    rel: int,
) -> pl.DataFrame:
    """Whether each ranking's top ``k`` serves some intent but no primary one.

    Parameters
    ----------
    ranked : polars.DataFrame
        Ranked judged rows (``run_id, query_id, doc_id, rank``).
    intents : polars.LazyFrame
        The intent rows of :class:`Judgments`.
    primary : polars.DataFrame
        :func:`primary_intents`.
    k, rel : int
        Cutoff and lowest relevant grade.

    Returns
    -------
    polars.DataFrame
        ``run_id, query_id, intent_failure (Boolean)`` for the rankings whose
        top ``k`` holds a document relevant to some intent; the others have
        no intent failure (false) when their query has a primary intent.
    """
    relevant = (
        intents.filter(pl.col("relevance") >= rel)
        .select("query_id", "doc_id", "intent")
        .join(
            primary.lazy().with_columns(pl.lit(value=True).alias(_PRIMARY)),
            on=["query_id", "intent"],
            how="left",
        )
    )
    return (
        ranked.lazy()
        .filter(pl.col("rank") <= k)
        .select("run_id", "query_id", "doc_id")
        .join(relevant, on=["query_id", "doc_id"], how="inner")
        .group_by("run_id", "query_id")
        .agg((~pl.col(_PRIMARY).fill_null(value=False).any()).alias("intent_failure"))
        .collect()
    )
