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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df._utils.frames import is_frame_like, to_polars
from ireval_df.errors import DataError, SchemaError, warn
from ireval_df.io.load import read_header
from ireval_df.schema.checks import Check, Column, cast
from ireval_df.schema.coerce import as_qrels
from ireval_df.schema.columns import QRELS, QUERIES, resolve
from ireval_df.schema.sources import is_path, label_of, read_source

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "INTENT_COLUMNS",
    "Judgments",
    "intent_failures",
    "primary_intents",
    "read_intent_weights",
    "read_judgments",
]

#: Names of the qrels column that says which intent a row judges, best first
INTENT_COLUMNS = ("intent", "subtopic")
_PRIMARY = "__ireval_primary"
_SCORE = "__ireval_score"


@dataclass(frozen=True)
class Judgments:
    """Qrels as the analyses read them.

    Attributes
    ----------
    qrels : polars.LazyFrame
        ``query_id, doc_id, relevance``, one row per judged document (as
        :func:`ireval_df.schema.coerce.as_qrels` returns them); with intents,
        a document's grade is its highest over its intents.
    intents : polars.LazyFrame or None
        ``query_id, intent (String), doc_id, relevance``: one row per
        document and intent, rows without an intent left out (and counted
        in a warning); None when the qrels have no intent column.
    """

    qrels: pl.LazyFrame
    intents: pl.LazyFrame | None = None


def _raw(obj: Any) -> pl.LazyFrame | None:
    """Return a qrels input as a frame with its own column names; None for TREC text."""
    if is_path(obj):
        if read_header(obj).fmt == "trec":  # fixed columns, no intent
            return None
        return read_source(obj, QRELS, None, label_of(obj, "qrels")).frame.lazy()
    if is_frame_like(obj):
        return to_polars(obj).lazy()
    return None


def _intent_column(names: list[str]) -> str | None:
    lowered = {n.strip().lower(): n for n in names}
    return next((lowered[c] for c in INTENT_COLUMNS if c in lowered), None)


def _checked(
    frame: pl.LazyFrame, sources: Mapping[str, str], label: str
) -> pl.DataFrame:
    """Cast ``frame``'s canonical columns (``sources``: canonical -> source name).

    The same casts and value checks as the strict readers, raising the same
    errors; other columns are kept as they are.
    """
    schema = frame.collect_schema()
    checks: list[Check] = []
    casts = {
        canon: cast(Column(canon, src, schema[canon], label), checks)
        for canon, src in sources.items()
    }
    data = frame.collect()
    if checks:
        counts = data.select(
            c.count.alias(f"__ireval_check_{i}") for i, c in enumerate(checks)
        ).row(0)
        for count, check in zip(counts, checks, strict=True):
            if count:
                example = data.filter(check.bad).row(0, named=True)
                raise check.error(int(count), example)
    return data.with_columns(expr.alias(canon) for canon, expr in casts.items())


def read_judgments(qrels: Any) -> Judgments:
    """Read qrels, and their intent rows when they have an intent column.

    Parameters
    ----------
    qrels : frame, path or dict
        Relevance judgments, in any form :func:`ireval_df.evaluate` takes;
        a table may add an ``intent`` (or ``subtopic``) column.

    Returns
    -------
    Judgments

    Raises
    ------
    SchemaError, DataError, FormatError
        As :func:`ireval_df.schema.coerce.as_qrels`; with intents, a
        document judged twice for one intent of a query is a ``DataError``.

    Warns
    -----
    IrevalWarning
        Rows whose intent is null: counted, and left out of the intent
        analysis (their grades still count for the document).

    Examples
    --------
    >>> qrels = pl.DataFrame({"query_id": "1", "doc_id": ["a", "a", "b"],
    ...                       "relevance": [1, 2, 0], "intent": ["x", "y", "x"]})
    >>> judged = read_judgments(qrels)
    >>> judged.qrels.collect().rows()
    [('1', 'a', 2), ('1', 'b', 0)]
    >>> judged.intents.collect().rows()
    [('1', 'x', 'a', 1), ('1', 'y', 'a', 2), ('1', 'x', 'b', 0)]
    """
    frame = _raw(qrels)
    names = [] if frame is None else frame.collect_schema().names()
    column = _intent_column(names)
    if frame is None or column is None:
        return Judgments(as_qrels(qrels))
    label = label_of(qrels, "qrels")
    mapping = resolve([n for n in names if n != column], QRELS, None, label)
    dtype = frame.collect_schema()[column]
    if dtype.is_nested() or dtype == pl.Object:
        msg = (
            f"{label} column {column!r} has dtype {dtype}; expected intent names "
            f"(strings or integers).\n  Hint: cast it first, e.g. "
            f"pl.col({column!r}).cast(pl.String)."
        )
        raise SchemaError(msg)
    staged = frame.select(
        *(pl.col(src).alias(canon) for src, canon in mapping.items()),
        pl.col(column).cast(pl.String).alias("intent"),
    )
    data = _checked(staged, {canon: src for src, canon in mapping.items()}, label)
    key = ["query_id", "intent", "doc_id"]
    repeated = data.filter(
        pl.col("intent").is_not_null() & pl.struct(key).is_duplicated()
    )
    if repeated.height:
        row = repeated.row(0, named=True)
        ids = [_source(mapping, "query_id"), column, _source(mapping, "doc_id")]
        msg = (
            f"{label} judges a document more than once for the same intent of a "
            f"query ({repeated.height} rows), e.g. query_id={row['query_id']!r}, "
            f"intent={row['intent']!r}, doc_id={row['doc_id']!r}; each (query_id, "
            f"intent, doc_id) needs one grade.\n  Hint: keep one grade each, e.g. "
            f"qrels.unique({ids!r}, keep='last')."
        )
        raise DataError(msg)
    nulls = data["intent"].null_count()
    if nulls:
        queries = data.filter(pl.col("intent").is_null())["query_id"].n_unique()
        warn(
            f"{label} has {nulls} row(s) without an {column!r} (in {queries} "
            "quer(ies)): their grades count for the document, but they are left "
            "out of the intent analysis.\n  Hint: give every row an intent, or "
            "drop the rows that have none."
        )
    qrels_lf = (
        data.lazy()
        .group_by("query_id", "doc_id", maintain_order=True)
        .agg(pl.col("relevance").max())
    )
    intent_lf = (
        data.lazy()
        .filter(pl.col("intent").is_not_null())
        .select("query_id", "intent", "doc_id", "relevance")
    )
    return Judgments(qrels_lf, intent_lf)


def _source(mapping: Mapping[str, str], canon: str) -> str:
    """Return the source name mapped to ``canon``."""
    return next(src for src, dst in mapping.items() if dst == canon)


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
    column = _intent_column(names)
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
    query = _source(mapping, "query_id")
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
    data = _checked(staged, {"query_id": query}, label)
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
