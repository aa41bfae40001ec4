"""``ireval_df.spark.similarity``: :func:`ireval_df.similarity` on a Spark DataFrame of runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from ireval_df._utils.options import check_choice
from ireval_df.measures import parse_metrics
from ireval_df.schema.columns import RUN
from ireval_df.schema.prepare import check_schema
from ireval_df.similarity.compute import report_dropped
from ireval_df.similarity.rankings import check_two_runs, choose_baselines, compared
from ireval_df.spark.evaluation import finish, query_attributes
from ireval_df.spark.jobs import (
    BUCKET,
    bucket_of,
    canonical_id,
    frame_schema,
    large_strings,
    partitions_of,
    require_frame,
    run_id_of,
    to_polars,
)
from ireval_df.spark.kernels import (
    ORDER,
    ROW,
    SIMILARITY_SCHEMA,
    SimilarityKernel,
    as_udf1,
    spark_ddl,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from pyspark.sql import DataFrame

    from ireval_df.measures import Metric

__all__ = ["similarity"]


def similarity(
    runs: DataFrame,
    metrics: str | Metric | Iterable[str | Metric] = "RBO",
    *,
    baseline: str | Sequence[str] | None = None,
    queries: Any = None,
    missing: Literal["zero", "skip", "error"] = "zero",
    rank_from: Literal["score", "column"] = "score",
    duplicates: Literal["error", "first", "max"] = "error",
    columns: Mapping[str, str] | None = None,
    partitions: int | None = None,
) -> DataFrame:
    """Compare runs held in Spark with a baseline: :func:`ireval_df.similarity`, on a cluster.

    The rows, columns and values of :func:`ireval_df.similarity` on the same
    data (values equal to 1e-12). The queries are split into ``partitions``
    groups by a stable hash of their id; each group's rows, of every run,
    go to one Python worker, which runs the local code on them.

    Parameters
    ----------
    runs : pyspark.sql.DataFrame
        Stacked runs: ``run_id``, ``query_id``, ``doc_id``, ``score`` (and
        ``rank``), or recognised spellings, or renamed by ``columns``.
    metrics, baseline, queries, missing, rank_from, duplicates, columns
        As :func:`ireval_df.similarity`. The runs' order (the default
        baseline is the first) and ``duplicates="first"`` read the order of
        the frame's rows as Spark reads them (partition by partition).
    partitions : int, optional
        How many groups of queries; default ``spark.sql.shuffle.partitions``.

    Returns
    -------
    pyspark.sql.DataFrame
        ``run_id, baseline, query_id, metric, value`` and the query
        attributes, sorted as :func:`ireval_df.similarity` sorts; computed
        (and cached) before it is returned.

    Raises
    ------
    MetricSpecError, OptionError, SchemaError
        Before any Spark job, except for "only one run" and an unknown
        baseline, which need the run ids (one small job).
    DataError, AlignmentError
        From the executors, as :func:`ireval_df.spark.evaluate` says.

    Examples
    --------
    >>> # rows = ireval_df.spark.similarity(spark.read.parquet("runs.parquet"),
    >>> #                                   ["RBO(p=0.9)@100", "Jaccard@10"])
    """
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    check_choice("missing", missing, ("zero", "skip", "error"))
    check_choice("rank_from", rank_from, ("score", "column"))
    check_choice("duplicates", duplicates, ("error", "first", "max"))
    specs = parse_metrics(metrics, family="similarity")
    run = require_frame(runs, "runs")
    mapping = check_schema(
        frame_schema(run), RUN, columns, "run", rank=rank_from == "column"
    )
    attributes = query_attributes(queries)
    spark = run.sparkSession
    n = partitions_of(spark, partitions)
    source = {canon: src for src, canon in mapping.items()}
    run_id = run_id_of(run, source)
    # every (run, query) ranked, with its first row: the runs' order as read
    pairs = to_polars(
        run.select(
            run_id.alias("run_id"),
            canonical_id(run, source["query_id"]).alias("query_id"),
            F.monotonically_increasing_id().alias("row"),
        )
        .groupBy("run_id", "query_id")
        .agg(F.min("row").alias("row"))
        .dropna()
    )
    ids = pairs.group_by("run_id").agg(pl.col("row").min()).sort("row")["run_id"]
    check_two_runs(ids.to_list(), caller="similarity")
    baselines = choose_baselines(baseline, ids.to_list())
    # the queries ranked on one side only, counted over all groups
    compared(pairs.select("run_id", "query_id"), ids.to_list(), baselines, missing)

    kernel = SimilarityKernel(
        metrics=tuple(str(m) for m in specs),
        runs=tuple(ids.to_list()),
        baselines=tuple(baselines),
        columns=dict(columns) if columns else None,
        missing=missing,
        duplicates=duplicates,
        rank_from=rank_from,
        bucket=BUCKET,
        large=large_strings(spark),
    )
    kept = [F.col(f"`{s}`") for s in mapping]
    if duplicates == "first":
        kept.append(F.monotonically_increasing_id().alias(ROW))
    out = (
        run.select(bucket_of(run, source["query_id"], n), *kept)
        .groupBy(BUCKET)
        .applyInArrow(as_udf1(kernel), spark_ddl(SIMILARITY_SCHEMA))
    )
    result, _, names = finish(
        out,
        duplicates=duplicates,
        report=report_dropped,
        spark=spark,
        attributes=attributes,
    )
    return result.orderBy(
        "__ireval_run", "__ireval_baseline", "query_id", ORDER
    ).select("run_id", "baseline", "query_id", "metric", "value", *names)
