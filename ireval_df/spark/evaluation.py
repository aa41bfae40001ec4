"""``ireval_df.spark.evaluate``: :func:`ireval_df.evaluate` on Spark DataFrames."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ireval_df.errors import DataError
from ireval_df.measures import parse_metrics
from ireval_df.offline.conventions import UNJUDGED_WARN
from ireval_df.offline.evaluation import (
    check_alignment,
    check_options,
    needs_top_grade,
    refuse_preference_measures,
    repeats_error,
    report_dropped,
    report_unjudged,
)
from ireval_df.schema.coerce import as_queries
from ireval_df.schema.columns import QRELS, RUN
from ireval_df.schema.intents import INTENT_COLUMNS
from ireval_df.schema.prepare import check_schema
from ireval_df.spark.jobs import (
    BUCKET,
    bucket_of,
    canonical_id,
    cogrouped,
    frame_schema,
    large_strings,
    partitions_of,
    require_frame,
    run_id_of,
    run_job,
    to_polars,
    to_spark,
)
from ireval_df.spark.kernels import (
    EVALUATE_SCHEMA,
    ORDER,
    ROW,
    EvaluateKernel,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    import polars as pl
    from pyspark.sql import DataFrame, SparkSession

    from ireval_df.measures import Metric
    from ireval_df.offline.evaluation import (
        Compat,
        Duplicates,
        Missing,
        RankFrom,
    )

__all__ = ["Counts", "evaluate", "query_attributes"]


def evaluate(
    run: DataFrame,
    qrels: DataFrame,
    metrics: str | Metric | Iterable[str | Metric],
    *,
    queries: Any = None,
    missing: Missing | None = None,
    depth: int | None = None,
    duplicates: Duplicates = "error",
    rank_from: RankFrom = "score",
    columns: Mapping[str, str] | None = None,
    warn_unjudged: float | None = UNJUDGED_WARN,
    compat: Compat = "10",
    partitions: int | None = None,
) -> DataFrame:
    """Score runs held in Spark against qrels: :func:`ireval_df.evaluate`, on a cluster.

    The result has exactly the rows, columns and values of
    :func:`ireval_df.evaluate` on the same data (values equal to 1e-12).
    The queries are split into ``partitions`` groups by a stable hash of
    their id; each group's run and qrels rows go to one Python worker,
    which runs the local engine on them. The run is never collected to the
    driver: only its distinct (run, query) pairs are, to check the
    alignment as :func:`ireval_df.evaluate` does.

    Parameters
    ----------
    run : pyspark.sql.DataFrame
        ``query_id``, ``doc_id``, ``score``, optionally ``run_id`` (stacked
        runs; without it the run is named ``run``) and ``rank``, or any
        spelling :func:`ireval_df.evaluate` recognises (``qid``, ``docno``,
        ``sim`` ...), or renamed by ``columns``.
    qrels : pyspark.sql.DataFrame
        ``query_id``, ``doc_id``, ``relevance``.
    metrics : str, Metric or list of them
        As :func:`ireval_df.evaluate`; checked on the driver.
    queries : Spark DataFrame, frame or path, optional
        Query attributes joined onto the result (small: collected to the
        driver and checked there).
    missing, depth, duplicates, rank_from, columns, warn_unjudged, compat
        As :func:`ireval_df.evaluate`.
    partitions : int, optional
        How many groups of queries (Python calls) to split the work into;
        default ``spark.sql.shuffle.partitions``. A group is held in one
        Python worker's memory, about 200 bytes a run row: raise it for
        runs of billions of rows. The numbers never depend on it.

    Returns
    -------
    pyspark.sql.DataFrame
        ``run_id, query_id, metric, value`` and the query attributes,
        sorted as :func:`ireval_df.evaluate` sorts. It is computed (and
        cached) before this function returns, so that warnings and errors
        are raised here; ``pl.from_arrow(result.toArrow())`` gives the
        polars frame that :func:`ireval_df.summarize` and
        :func:`ireval_df.compare` take.

    Raises
    ------
    MetricSpecError, OptionError
        A bad metric name or option, before any Spark job.
    SchemaError
        A missing column or unusable dtype, before any Spark job; an input
        that is not a Spark DataFrame.
    DataError, AlignmentError
        As :func:`ireval_df.evaluate`, from the executors. Repeated
        documents are counted over the whole run; for other data errors
        found in several groups of queries the message is the first
        group's and says how many groups failed.

    See Also
    --------
    ireval_df.evaluate : the same on one machine.

    Examples
    --------
    >>> # per_query = ireval_df.spark.evaluate(spark.read.parquet("run.parquet"),
    >>> #                                      spark.read.parquet("qrels.parquet"),
    >>> #                                      ["nDCG@10", "AP"])
    >>> # ie.summarize(pl.from_arrow(per_query.toArrow()))
    """
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    missing = check_options(
        missing=missing,
        depth=depth,
        duplicates=duplicates,
        rank_from=rank_from,
        warn_unjudged=warn_unjudged,
        compat=compat,
    )
    specs = parse_metrics(metrics, family="offline")
    refuse_preference_measures(specs)
    run = require_frame(run, "run")
    qrels = require_frame(qrels, "qrels")
    run_map = check_schema(
        frame_schema(run), RUN, columns, "run", rank=rank_from == "column"
    )
    qrels_map = check_schema(frame_schema(qrels), QRELS, None, "qrels")
    attributes = query_attributes(queries)
    spark = run.sparkSession
    n = partitions_of(spark, partitions)
    source = {canon: src for src, canon in run_map.items()}
    qrels_qid = next(src for src, canon in qrels_map.items() if canon == "query_id")

    run_id = run_id_of(run, source)
    pairs = to_polars(
        run.select(
            run_id.alias("run_id"),
            canonical_id(run, source["query_id"]).alias("query_id"),
        )
        .distinct()
        .dropna()
    )
    if pairs.height == 0:
        msg = (
            "run has no rows: there is nothing to evaluate.\n  Hint: a run lists "
            "at least one retrieved document; if a filter emptied it, check the "
            "filter (queries it has no rows for are scored by missing=)."
        )
        raise DataError(msg)
    qids = to_polars(
        qrels.select(canonical_id(qrels, qrels_qid).alias("query_id"))
        .distinct()
        .dropna()
    )
    check_alignment(pairs, qids.lazy(), missing)
    top_grade = None
    if needs_top_grade(specs):  # max_rel=0: the highest grade of all the qrels
        relevance = next(s for s, canon in qrels_map.items() if canon == "relevance")
        top = qrels.agg(F.max(F.col(f"`{relevance}`").cast("double"))).first()
        top_grade = None if top is None or top[0] is None else int(top[0])

    kernel = EvaluateKernel(
        metrics=tuple(str(m) for m in specs),
        run_ids=tuple(sorted(pairs["run_id"].unique().to_list())),
        columns=dict(columns) if columns else None,
        missing=missing,
        depth=depth,
        duplicates=duplicates,
        rank_from=rank_from,
        compat=compat,
        bucket=BUCKET,
        large=large_strings(spark),
        top_grade=top_grade,
    )
    kept = [F.col(f"`{s}`") for s in run_map]
    if duplicates == "first":  # "first in input order": number rows before the shuffle
        kept.append(F.monotonically_increasing_id().alias(ROW))
    left = run.select(bucket_of(run, source["query_id"], n), *kept)
    # diversity qrels: their intent column goes along (the kernel reads it)
    intent = [c for c in qrels.columns if c in INTENT_COLUMNS][:1]
    right = qrels.select(
        bucket_of(qrels, qrels_qid, n),
        *(F.col(f"`{s}`") for s in [*qrels_map, *intent]),
    )
    out = cogrouped(left, right, kernel, EVALUATE_SCHEMA)
    result, counts, names = finish(
        out,
        duplicates=duplicates,
        report=report_dropped,
        spark=spark,
        attributes=attributes,
    )
    if warn_unjudged is not None:
        share = counts.share_sum / counts.share_n if counts.share_n else None
        report_unjudged(share, warn_unjudged)
    return result.orderBy("run_id", "query_id", ORDER).select(
        "run_id", "query_id", "metric", "value", *names
    )


class Counts:
    """The notes of the kernels (:mod:`ireval_df.spark.kernels`), summed over groups."""

    def __init__(self) -> None:
        self.dropped = 0
        self.share_sum = 0.0
        self.share_n = 0
        self.repeats: list[dict[str, Any]] = []

    def read(self, notes: list[tuple[str, str]]) -> None:
        """Add one job's notes."""
        for kind, text in notes:
            if kind == "dropped":
                self.dropped += int(text)
            elif kind == "unjudged":
                total, n = json.loads(text)
                self.share_sum += total
                self.share_n += n
            elif kind == "repeats":
                self.repeats.append(json.loads(text))

    def repeats_error(
        self, error: Callable[[int, int, dict[str, Any]], Exception]
    ) -> Exception:
        """Return ``error`` for the repeated documents of every group together.

        Each (run, query, document) is in one group, so the counts add up and
        the first example of all is the least of the groups' first.
        """
        documents = sum(r["documents"] for r in self.repeats)
        extra = sum(r["extra"] for r in self.repeats)
        first = min(
            (r["example"] for r in self.repeats),
            key=lambda e: (e["run_id"], e["query_id"], e["doc_id"]),
        )
        return error(documents, extra, first)


def query_attributes(queries: Any) -> pl.DataFrame | None:
    """Read query attributes (a Spark frame is collected: one row a query) and check them."""
    if queries is None:
        return None
    try:
        from pyspark.sql import DataFrame as SparkFrame
    except ImportError:  # pragma: no cover - the callers need pyspark
        SparkFrame = ()  # type: ignore[assignment,misc]  # noqa: N806
    if isinstance(queries, SparkFrame):
        queries = to_polars(queries)
    return as_queries(queries).collect()


def finish(
    out: DataFrame,
    *,
    duplicates: str,
    report: Callable[[int, Any], None],
    spark: SparkSession,
    attributes: pl.DataFrame | None,
) -> tuple[DataFrame, Counts, list[str]]:
    """Run a job of kernels and report its notes as the local function does.

    Repeated documents raise :func:`~ireval_df.offline.evaluation.repeats_error`
    over every group; the rows dropped by ``duplicates`` go to ``report``
    (the family's own warning); the query attributes, if any, are joined on.
    Returns the result, the summed notes and the attribute columns' names.
    """
    counts = Counts()
    result, _ = run_job(out, counts.read)  # the cache stays: the result reads it
    if counts.repeats:
        raise counts.repeats_error(repeats_error)
    report(counts.dropped, duplicates)
    names: list[str] = []
    if attributes is not None:
        names = attributes.columns[1:]
        result = result.join(to_spark(spark, attributes), on="query_id", how="left")
    return result, counts, names
