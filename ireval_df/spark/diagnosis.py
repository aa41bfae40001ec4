"""``ireval_df.spark.failures``: :func:`ireval_df.failures` per query, on Spark DataFrames."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from ireval_df._utils.options import check_choice
from ireval_df.diagnostics.failure_kinds import report_dropped
from ireval_df.diagnostics.intents import read_intent_weights
from ireval_df.diagnostics.stages import pipeline, positive
from ireval_df.errors import OptionError
from ireval_df.schema.columns import QRELS, RUN
from ireval_df.schema.prepare import check_schema
from ireval_df.spark.evaluation import finish, query_attributes
from ireval_df.spark.jobs import (
    BUCKET,
    bucket_of,
    cogrouped,
    frame_schema,
    large_strings,
    partitions_of,
    require_frame,
    run_id_of,
    to_polars,
)
from ireval_df.spark.kernels import (
    FAILURES_SCHEMA,
    ROW,
    FailuresKernel,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from pyspark.sql import DataFrame

__all__ = ["failures"]


def failures(
    run: DataFrame,
    qrels: DataFrame,
    *,
    k: int = 10,
    rel: int = 1,
    queries: Any = None,
    columns: Mapping[str, str] | None = None,
    stages: Sequence[str] | None = None,
    stage_depth: int | None = None,
    intents: Any = None,
    duplicates: Literal["error", "first", "max"] = "error",
    partitions: int | None = None,
) -> DataFrame:
    """Name the failures of every (run, query) on Spark: :func:`ireval_df.failures` per query.

    The per-query rows, columns and values of :func:`ireval_df.failures`
    (``by=None``) on the same data. Queries are split into ``partitions``
    groups by a stable hash of their id; each group's run and qrels rows go
    to one Python worker, which runs the local code on them.

    Parameters
    ----------
    run, qrels : pyspark.sql.DataFrame
        As :func:`ireval_df.spark.evaluate`; the qrels may have an
        ``intent`` column.
    k, rel, queries, columns, stages, stage_depth, intents, duplicates
        As :func:`ireval_df.failures`. ``intents`` and ``queries`` are small
        tables, read on the driver (a Spark frame is collected).
    partitions : int, optional
        How many groups of queries; default ``spark.sql.shuffle.partitions``.

    Returns
    -------
    pyspark.sql.DataFrame
        ``run_id, query_id``, the counts, ``intent_failure``, ``failure``
        and the query attributes, sorted by run and query; computed (and
        cached) before it is returned. Document attributes (``docs=``) and
        slices (``by=``) are local only: the per-query result is small, so
        ``ie.failures`` on the collected run of the worst queries, or
        ``ie.summarize``-style grouping of this frame, is the way there.

    Raises
    ------
    OptionError, SchemaError
        Before any Spark job; bad ``stages`` after one small job (the run ids).
    DataError
        From the executors, as :func:`ireval_df.spark.evaluate` says.

    Examples
    --------
    >>> # rows = ireval_df.spark.failures(spark.read.parquet("run.parquet"),
    >>> #                                 spark.read.parquet("qrels.parquet"), k=10)
    """
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    positive("k", k)
    positive("rel", rel)
    check_choice("duplicates", duplicates, ("error", "first", "max"))
    if stages is None and stage_depth is not None:
        msg = (
            f"stage_depth={stage_depth!r} needs stages= (the run ids of one "
            "pipeline, earliest first).\n  Hint: pass stages=['bm25', 'rerank'] "
            "or leave stage_depth out."
        )
        raise OptionError(msg)
    run = require_frame(run, "run")
    qrels = require_frame(qrels, "qrels")
    run_map = check_schema(frame_schema(run), RUN, columns, "run", rank=False)
    qrels_map = check_schema(frame_schema(qrels), QRELS, None, "qrels")
    attributes = query_attributes(queries)
    weights = None if intents is None else read_intent_weights(intents).collect()
    spark = run.sparkSession
    n = partitions_of(spark, partitions)
    source = {canon: src for src, canon in run_map.items()}
    qrels_qid = next(src for src, canon in qrels_map.items() if canon == "query_id")
    run_id = run_id_of(run, source)
    ids = to_polars(run.select(run_id.alias("run_id")).distinct().dropna())
    runs = sorted(ids["run_id"].to_list())
    if stages is not None:
        pipeline(stages, stage_depth, runs)  # refused here, before the big job

    kernel = FailuresKernel(
        runs=tuple(runs),
        k=k,
        rel=rel,
        stages=None if stages is None else tuple(stages),
        stage_depth=stage_depth,
        weights=weights,
        columns=dict(columns) if columns else None,
        duplicates=duplicates,
        bucket=BUCKET,
        large=large_strings(spark),
    )
    kept = [F.col(f"`{s}`") for s in run_map]
    if duplicates == "first":
        kept.append(F.monotonically_increasing_id().alias(ROW))
    left = run.select(bucket_of(run, source["query_id"], n), *kept)
    # every qrels column: an intent column (diversity qrels) is read too
    right = qrels.select(bucket_of(qrels, qrels_qid, n), "*")
    out = cogrouped(left, right, kernel, FAILURES_SCHEMA)
    result, _, names = finish(
        out,
        duplicates=duplicates,
        report=report_dropped,
        spark=spark,
        attributes=attributes,
    )
    return result.orderBy("run_id", "query_id").select(*FAILURES_SCHEMA, *names)
