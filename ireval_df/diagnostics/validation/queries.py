"""The checks of the query table, alone and against the queries evaluated.

:func:`queries_findings` takes the leniently read query table and the run or
qrels it describes, and returns the findings; their text is in
:mod:`.catalog`.
"""

from __future__ import annotations

import polars as pl

from ireval_df.diagnostics.validation.catalog import emit
from ireval_df.diagnostics.validation.expressions import sample

__all__ = ["queries_findings"]


def queries_findings(
    meta: pl.DataFrame, reference: pl.DataFrame, against: str
) -> list[pl.DataFrame]:
    """Find what is wrong with a query table, and which queries it misses.

    Parameters
    ----------
    meta : pl.DataFrame
        The query table, read leniently.
    reference : pl.DataFrame
        The input whose queries are evaluated: the qrels, else the run.
    against : str
        Its name, ``"qrels"`` or ``"run"``.

    Returns
    -------
    list of pl.DataFrame
        Findings, one frame per check.
    """
    if meta.height == 0:
        return [
            emit(
                pl.DataFrame({"n": [0]}),
                "empty_input",
                "queries",
                count=pl.col("n"),
                per_run=False,
            )
        ]
    qid = pl.col("query_id")
    totals = meta.select(
        null_ids=qid.null_count(),
        extra=pl.len() - qid.drop_nulls().n_unique() - qid.null_count(),
        example=sample(qid.filter(qid.is_duplicated())),
    )
    evaluated = reference.select("query_id").drop_nulls().unique()
    described = meta.select("query_id").drop_nulls().unique()
    without = evaluated.join(described, on="query_id", how="anti")
    unused = described.join(evaluated, on="query_id", how="anti")
    return [
        emit(
            totals.filter(pl.col("null_ids") > 0),
            "null_ids",
            "queries",
            count=pl.col("null_ids"),
            per_run=False,
            n=pl.col("null_ids"),
        ),
        emit(
            totals.filter(pl.col("extra") > 0),
            "duplicate_queries",
            "queries",
            count=pl.col("extra"),
            example=pl.col("example"),
            per_run=False,
            extra=pl.col("extra"),
        ),
        emit(
            without.select(n=pl.len(), example=sample(qid)).filter(pl.col("n") > 0),
            "queries_without_metadata",
            "queries",
            count=pl.col("n"),
            value=pl.col("n") / pl.lit(evaluated.height),
            example=pl.col("example"),
            per_run=False,
            n=pl.col("n"),
            evaluated=evaluated.height,
            against=against,
        ),
        emit(
            unused.select(n=pl.len(), example=sample(qid)).filter(pl.col("n") > 0),
            "queries_only_in_metadata",
            "queries",
            count=pl.col("n"),
            value=pl.col("n") / pl.lit(described.height),
            example=pl.col("example"),
            per_run=False,
            n=pl.col("n"),
            described=described.height,
            against=against,
        ),
    ]
