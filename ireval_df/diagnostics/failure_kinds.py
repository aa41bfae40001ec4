"""``failures()``: candidate (never retrieved) vs scoring (ranked too low) failures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import OptionError, SchemaError
from ireval_df.offline.engine import EngineOptions, label_qrels, ranked_rows
from ireval_df.schema.coerce import as_qrels, as_queries, as_run
from ireval_df.stats.frames import output, slice_columns

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["failures"]

_COUNTS = ["n_relevant", "n_top_k", "n_below_k", "n_not_retrieved"]


def failures(
    run: Any,
    qrels: Any,
    *,
    k: int = 10,
    rel: int = 1,
    queries: Any = None,
    by: str | Sequence[str] | None = None,
    columns: Mapping[str, str] | None = None,
) -> Any:
    """Where relevant documents are lost: never retrieved, or retrieved below ``k``.

    A relevant document a run never retrieved is a *candidate failure* (the
    first stage missed it); one retrieved but ranked below ``k`` is a
    *scoring failure* (the ranker put it too low).

    Parameters
    ----------
    run : frame, path, dict or list of these
        One or more runs, in any form :func:`ireval_df.evaluate` accepts.
    qrels : frame, path or dict
        Relevance judgments.
    k : int, default 10
        The cutoff: ranks ``1..k`` are "found".
    rel : int, default 1
        Lowest relevant grade.
    queries : frame or path, optional
        Query attributes joined onto the result (needed for ``by``).
    by : str or list of str, optional
        Summarise per run and slice instead of per query; ``[]`` gives one
        row per run.
    columns : mapping, optional
        Renames for the run's columns, e.g. ``{"qid": "query_id"}``.

    Returns
    -------
    Frame (pandas when ``run`` is pandas)
        Per query (``by`` None): ``run_id, query_id, n_relevant, n_top_k,
        n_below_k, n_not_retrieved, failure`` and the query attributes;
        ``failure`` is ``"found"`` (a relevant document in the top ``k``),
        ``"scoring"`` (relevant documents retrieved, all below ``k``),
        ``"candidate"`` (none retrieved) or ``"no_relevant"`` (the qrels
        hold no relevant document).

        Per slice (``by`` given): ``run_id, [by...], n_queries, n_relevant,
        n_top_k, n_below_k, n_not_retrieved, scoring_failure_rate,
        candidate_failure_rate, queries_found, queries_scoring,
        queries_candidate, queries_no_relevant``, where the rates are
        ``n_below_k / n_relevant`` and ``n_not_retrieved / n_relevant``.

    Raises
    ------
    IrevalError
        ``k`` or ``rel`` is not a positive whole number, or ``by`` without
        ``queries``.
    SchemaError
        A ``by`` column is not in ``queries``; unusable run, qrels or
        queries (as :func:`ireval_df.evaluate`).

    Notes
    -----
    Every query of the qrels counts for every run; a query the run did not
    answer has all its relevant documents as candidate failures. Ranks
    follow the library's tie rule (score descending, then ``doc_id``
    descending).

    Examples
    --------
    >>> import polars as pl
    >>> run = pl.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "c"],
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> qrels = pl.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["c", "d", "a"],
    ...                       "relevance": [1, 2, 0]})
    >>> failures(run, qrels, k=2).select(
    ...     "n_relevant", "n_top_k", "n_below_k", "n_not_retrieved", "failure").rows()
    [(2, 0, 1, 1, 'scoring')]
    """
    for name, number in (("k", k), ("rel", rel)):
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            msg = f"{name} must be a positive whole number, found {number!r}."
            raise OptionError(msg)
    slices = slice_columns(by)
    if by is not None and slices and queries is None:
        msg = (
            f"failures(by={slices!r}) needs queries= (the table holding the slice "
            "columns).\n  Hint: pass queries='data/queries.tsv' or a frame with "
            "query_id and the attributes."
        )
        raise OptionError(msg)
    run_lf = as_run(run, columns=columns)
    labelled = label_qrels(as_qrels(qrels))
    ranked = ranked_rows(run_lf, labelled, EngineOptions())
    relevant = pl.col("label") >= rel
    n_rel = labelled.group_by("query_id").agg(
        relevant.sum().cast(pl.Int64).alias("n_relevant")
    )
    grid = run_lf.select("run_id").unique().join(n_rel, how="cross")
    hits = (
        ranked.filter(relevant)
        .group_by("run_id", "query_id")
        .agg(
            (pl.col("rank") <= k).sum().cast(pl.Int64).alias("n_top_k"),
            (pl.col("rank") > k).sum().cast(pl.Int64).alias("n_below_k"),
        )
    )
    per_query = (
        grid.join(hits, on=["run_id", "query_id"], how="left")
        .with_columns(pl.col("n_top_k").fill_null(0), pl.col("n_below_k").fill_null(0))
        .with_columns(
            (pl.col("n_relevant") - pl.col("n_top_k") - pl.col("n_below_k")).alias(
                "n_not_retrieved"
            )
        )
        .with_columns(
            pl.when(pl.col("n_relevant") == 0)
            .then(pl.lit("no_relevant"))
            .when(pl.col("n_top_k") > 0)
            .then(pl.lit("found"))
            .when(pl.col("n_below_k") > 0)
            .then(pl.lit("scoring"))
            .otherwise(pl.lit("candidate"))
            .alias("failure")
        )
        .select("run_id", "query_id", *_COUNTS, "failure")
        .sort("run_id", "query_id")
        .collect()
    )
    if queries is not None:
        attributes = as_queries(queries).collect()
        absent = [c for c in slices if c not in attributes.columns]
        if absent:
            msg = (
                f"by column(s) {absent!r} are not in the queries table (found "
                f"{attributes.columns!r}).\n  Hint: choose slice columns of queries=."
            )
            raise SchemaError(msg)
        per_query = per_query.join(
            attributes, on="query_id", how="left", maintain_order="left"
        )
    settings: dict[str, Any] = {"failures_k": k, "rel": rel}
    if by is None:
        return output(per_query, run, settings)
    kind = pl.col("failure")
    summary = (
        per_query.group_by(["run_id", *slices], maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("n_queries"),
            *[pl.col(c).sum() for c in _COUNTS],
            *[
                (kind == name).sum().cast(pl.Int64).alias(f"queries_{name}")
                for name in ("found", "scoring", "candidate", "no_relevant")
            ],
        )
        .with_columns(
            (pl.col("n_below_k") / pl.col("n_relevant")).alias("scoring_failure_rate"),
            (pl.col("n_not_retrieved") / pl.col("n_relevant")).alias(
                "candidate_failure_rate"
            ),
        )
        .with_columns(
            pl.col("scoring_failure_rate", "candidate_failure_rate").fill_nan(None)
        )
        .sort(["run_id", *slices], nulls_last=True)
        .select(
            "run_id",
            *slices,
            "n_queries",
            *_COUNTS,
            "scoring_failure_rate",
            "candidate_failure_rate",
            "queries_found",
            "queries_scoring",
            "queries_candidate",
            "queries_no_relevant",
        )
    )
    settings["failures_by"] = slices
    return output(summary, run, settings)
