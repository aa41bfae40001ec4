"""The checks of the qrels alone: nulls, grades, repeated judgments, no relevant.

:func:`qrels_findings` takes the leniently read qrels and returns the
findings; their text is in :mod:`.catalog`.
"""

from __future__ import annotations

import polars as pl

from ireval_df.diagnostics.validation.catalog import emit
from ireval_df.diagnostics.validation.expressions import (
    EXAMPLES,
    first,
    no_repeats,
    quoted,
    sample,
)

__all__ = ["qrels_findings"]


def qrels_findings(qrels: pl.DataFrame, rel: int) -> list[pl.DataFrame]:
    """Find what is wrong with the qrels on their own.

    Parameters
    ----------
    qrels : pl.DataFrame
        The qrels, read leniently.
    rel : int
        The lowest relevant grade.

    Returns
    -------
    list of pl.DataFrame
        Findings, one frame per check.
    """
    if qrels.height == 0:
        return [
            emit(
                pl.DataFrame({"n": [0]}),
                "empty_input",
                "qrels",
                count=pl.col("n"),
                per_run=False,
            )
        ]
    qid, doc, grade = pl.col("query_id"), pl.col("doc_id"), pl.col("relevance")
    fractional = grade.is_not_null() & ~(grade.is_finite() & (grade == grade.floor()))
    negative = grade.is_not_null() & (grade < 0)
    totals = qrels.select(
        run_id=pl.lit(None, dtype=pl.String),
        null_ids=pl.any_horizontal(qid.is_null(), doc.is_null()).sum(),
        null_ids_example=pl.format(
            "query_id: {}, doc_id: {}", qid.null_count(), doc.null_count()
        ),
        null_grades=grade.null_count(),
        null_grades_example=first(grade.is_null()),
        fractional=fractional.sum(),
        fractional_example=first(fractional, "relevance"),
        negative=negative.sum(),
        rows=pl.len(),
    )
    levels = (
        qrels.filter(negative)
        .group_by("relevance")
        .agg(n=pl.len())
        .sort("relevance")
        .select(
            pl.format("{} ({})", pl.col("relevance").cast(pl.Int64), pl.col("n"))
            .str.join(", ")
            .alias("levels")
        )
    )
    totals = totals.with_columns(
        negative_example=pl.lit(levels["levels"].item() if levels.height else None)
    )
    return [
        emit(
            totals.filter(pl.col("null_ids") > 0),
            "null_ids",
            "qrels",
            count=pl.col("null_ids"),
            example=pl.col("null_ids_example"),
            per_run=False,
            n=pl.col("null_ids"),
        ),
        emit(
            totals.filter(pl.col("null_grades") > 0),
            "null_grades",
            "qrels",
            count=pl.col("null_grades"),
            example=pl.col("null_grades_example"),
            per_run=False,
            n=pl.col("null_grades"),
        ),
        emit(
            totals.filter(pl.col("fractional") > 0),
            "non_integer_grades",
            "qrels",
            count=pl.col("fractional"),
            example=pl.col("fractional_example"),
            per_run=False,
            n=pl.col("fractional"),
        ),
        _duplicate_judgments(qrels),
        emit(
            totals.filter(pl.col("negative") > 0),
            "negative_grades",
            "qrels",
            count=pl.col("negative"),
            value=pl.col("negative") / pl.col("rows"),
            example=pl.col("negative_example"),
            per_run=False,
            n=pl.col("negative"),
            rows=pl.col("rows"),
        ),
        _no_relevant(qrels, rel),
    ]


def _duplicate_judgments(qrels: pl.DataFrame) -> pl.DataFrame:
    """Documents judged twice for a query (with intents: for an intent of it)."""
    qid, doc = pl.col("query_id"), pl.col("doc_id")
    intents = "intent" in qrels.columns
    key = ["query_id", "intent", "doc_id"] if intents else ["query_id", "doc_id"]
    if intents:  # rows without an intent judge no intent: never repeats
        qrels = qrels.filter(pl.col("intent").is_not_null())
    if no_repeats(qrels, key):
        qrels = qrels.clear()
    shown = (
        pl.format(
            "query {} intent {} doc {} x{}",
            quoted(qid),
            quoted(pl.col("intent")),
            quoted(doc),
            pl.col("n"),
        )
        if intents
        else pl.format("query {} doc {} x{}", quoted(qid), quoted(doc), pl.col("n"))
    )
    repeated = (
        qrels.group_by(key)
        .agg(n=pl.len(), grades=pl.col("relevance").n_unique())
        .filter(pl.col("n") > 1)
        .sort(key)
        .select(
            run_id=pl.lit(None, dtype=pl.String),
            extra=(pl.col("n") - 1).sum(),
            pairs=pl.len(),
            conflicting=(pl.col("grades") > 1).sum(),
            example=shown.head(EXAMPLES).str.join(", "),
        )
        .filter(pl.col("extra") > 0)
    )
    return emit(
        repeated,
        "duplicate_judgments",
        "intents" if intents else "qrels",
        count=pl.col("extra"),
        example=pl.col("example"),
        per_run=False,
        extra=pl.col("extra"),
        pairs=pl.col("pairs"),
        conflicting=pl.col("conflicting"),
    )


def _no_relevant(qrels: pl.DataFrame, rel: int) -> pl.DataFrame:
    best = (
        qrels.filter(pl.col("query_id").is_not_null())
        .group_by("query_id")
        .agg(best=pl.col("relevance").max())
    )
    lacking = pl.col("best").is_null() | (pl.col("best") < float(rel))
    found = best.select(
        run_id=pl.lit(None, dtype=pl.String),
        queries=pl.len(),
        lacking=lacking.sum(),
        example=sample(pl.col("query_id").filter(lacking)),
    ).filter(pl.col("lacking") > 0)
    return emit(
        found,
        "no_relevant",
        "qrels",
        count=pl.col("lacking"),
        value=pl.col("lacking") / pl.col("queries"),
        example=pl.col("example"),
        per_run=False,
        n=pl.col("lacking"),
        queries=pl.col("queries"),
        rel=rel,
    )
