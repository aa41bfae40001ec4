"""Qrels with intents (subtopics): one grade per document, and per intent.

Qrels may carry an ``intent`` (or ``subtopic``) column: each row then judges
a document for one intent of its query, and a document may be judged for
several (TREC's diversity qrels, which ndeval reads with the intent in the
second field of each line, where trec_eval's qrels have an ignored
iteration). :func:`read_judgments` reads any qrels into the canonical
judgments every measure reads (one grade per document: its highest over its
intents) and the intent rows beside them, which the diversity measures and
the intent analyses of :mod:`ireval_df.diagnostics` read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df._utils.frames import is_frame_like, to_polars
from ireval_df.errors import DataError, SchemaError, warn
from ireval_df.io.load import read_header
from ireval_df.io.trec import read_trec_qrels
from ireval_df.schema.checks import Check, Column, cast
from ireval_df.schema.coerce import as_qrels
from ireval_df.schema.columns import QRELS, resolve
from ireval_df.schema.sources import is_path, label_of, read_source

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "INTENT_COLUMNS",
    "Judgments",
    "checked",
    "intent_column",
    "intent_labels",
    "read_judgments",
    "source_of",
]

#: Names of the qrels column that says which intent a row judges, best first
INTENT_COLUMNS = ("intent", "subtopic")


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


def _raw(obj: Any, *, intents: bool) -> pl.LazyFrame | None:
    """Return a qrels input as a frame with its own column names.

    None for TREC text read without ``intents`` (fixed columns, no intent).
    """
    if is_path(obj):
        if read_header(obj).fmt == "trec":
            return read_trec_qrels(obj, intents=True).lazy() if intents else None
        return read_source(obj, QRELS, None, label_of(obj, "qrels")).frame.lazy()
    if is_frame_like(obj):
        return to_polars(obj).lazy()
    return None


def intent_column(names: list[str]) -> str | None:
    """Return the name of the intent column among ``names`` (any case), or None."""
    lowered = {n.strip().lower(): n for n in names}
    return next((lowered[c] for c in INTENT_COLUMNS if c in lowered), None)


def intent_labels(qrels: Any, *, intents: bool = False) -> pl.Series | None:
    """Return each qrels row's intent (String, in row order), or None without intents.

    For :func:`ireval_df.validate`, which reads the other columns leniently
    in the same row order; ``intents`` as :func:`read_judgments` takes it.
    """
    frame = _raw(qrels, intents=intents)
    if frame is None:
        return None
    column = intent_column(frame.collect_schema().names())
    if column is None:
        return None
    labels = frame.select(pl.col(column)).collect().to_series()
    if labels.dtype.is_nested() or labels.dtype == pl.Object:
        return None  # read_judgments says why when evaluating
    return labels.cast(pl.String).alias("intent")


def checked(
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


def read_judgments(
    qrels: Any, *, intents: bool = False, in_memory: bool = False
) -> Judgments:
    """Read qrels, and their intent rows when they have an intent column.

    Parameters
    ----------
    qrels : frame, path or dict
        Relevance judgments, in any form :func:`ireval_df.evaluate` takes;
        a table may add an ``intent`` (or ``subtopic``) column.
    intents : bool, default False
        Read a TREC text file as diversity qrels, ``qid subtopic docno
        relevance``: the second field is the intent (as ndeval reads it),
        not an ignored iteration (as trec_eval reads it). Tables are
        recognised by their column whatever this says.
    in_memory : bool, default False
        Read lazy qrels without intents into memory once
        (:func:`ireval_df.schema.coerce.as_qrels`).

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
    frame = _raw(qrels, intents=intents)
    names = [] if frame is None else frame.collect_schema().names()
    column = intent_column(names)
    if frame is None or column is None:
        return Judgments(as_qrels(qrels, in_memory=in_memory))
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
    data = checked(staged, {canon: src for src, canon in mapping.items()}, label)
    key = ["query_id", "intent", "doc_id"]
    repeated = data.filter(
        pl.col("intent").is_not_null() & pl.struct(key).is_duplicated()
    )
    if repeated.height:
        row = repeated.row(0, named=True)
        ids = [source_of(mapping, "query_id"), column, source_of(mapping, "doc_id")]
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


def source_of(mapping: Mapping[str, str], canon: str) -> str:
    """Return the source name mapped to ``canon``."""
    return next(src for src, dst in mapping.items() if dst == canon)
