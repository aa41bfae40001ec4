"""What runs on the executors: the local engine on one group of whole queries.

Spark hands each kernel the rows of one group of queries (a hash bucket of
``query_id``) as ``pyarrow`` tables, both sides of a cogroup together; the
kernel reads them with polars, runs the unchanged local code and returns
an Arrow table of the result. Nothing here imports pyspark.

A kernel never raises: Spark would turn the error into a Java stack trace.
It returns, beside its result rows, *note* rows (``__ireval_kind`` not
null): the counts the driver sums for the warnings of the whole data, the
repeated documents with an example, and any :class:`~ireval_df.errors.IrevalError`
with its class and message, which the driver raises again
(:mod:`ireval_df.spark.jobs`).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from ireval_df.errors import IrevalError, IrevalWarning
from ireval_df.measures import parse_metrics
from ireval_df.offline.engine import EngineOptions
from ireval_df.offline.evaluation import (
    evaluate_queries,
    judged_qrels,
    repeated_documents,
)
from ireval_df.schema.coerce import as_run

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import pyarrow as pa

__all__ = [
    "KIND",
    "ROW",
    "TEXT",
    "EvaluateKernel",
    "FailuresKernel",
    "SimilarityKernel",
    "Note",
    "arrow_type",
    "as_udf",
    "spark_type",
    "as_udf1",
    "run_kernel",
    "spark_ddl",
]

#: The note columns every kernel's output has (null on result rows).
KIND, TEXT = "__ireval_kind", "__ireval_text"
#: The position of a metric among those asked for, to sort as locally.
ORDER = "__ireval_order"
#: A run row's position in the input, numbered before the shuffle.
ROW = "__ireval_row"

#: Spark's name of each polars dtype a kernel returns (by the dtype's name).
_SPARK_TYPES = {
    "String": "string",
    "Float64": "double",
    "Float32": "float",
    "Int64": "bigint",
    "Int32": "int",
    "Int16": "smallint",
    "Int8": "tinyint",
    "Boolean": "boolean",
    "Date": "date",
}


def spark_type(dtype: pl.DataType) -> str | None:
    """Return Spark's name of a polars dtype a kernel can return, or None.

    A time without a zone (ireval_df's UTC times) is Spark's ``timestamp_ntz``.

    Examples
    --------
    >>> spark_type(pl.Int32), spark_type(pl.Datetime("us")), spark_type(pl.List(pl.Int64))
    ('int', 'timestamp_ntz', None)
    """
    if isinstance(dtype, pl.Datetime) and dtype.time_zone is None:
        return "timestamp_ntz"
    return _SPARK_TYPES.get(str(dtype))


def spark_ddl(schema: Mapping[str, pl.DataType]) -> str:
    """Return the Spark DDL of a kernel's output, note columns included.

    Examples
    --------
    >>> spark_ddl({"run_id": pl.String, "value": pl.Float64})
    '`run_id` string, `value` double, `__ireval_kind` string, `__ireval_text` string'
    """
    fields = [*schema.items(), (KIND, pl.String()), (TEXT, pl.String())]
    return ", ".join(f"`{name}` {spark_type(dtype)}" for name, dtype in fields)


def arrow_type(dtype: pl.DataType, *, large: bool) -> pa.DataType:
    """Return the Arrow type Spark expects for ``dtype`` (its strings by session setting)."""
    import pyarrow as pa

    if dtype == pl.String:
        return pa.large_string() if large else pa.string()
    if isinstance(dtype, pl.Datetime):
        return pa.timestamp("us")
    return {
        "Float64": pa.float64(),
        "Float32": pa.float32(),
        "Int64": pa.int64(),
        "Int32": pa.int32(),
        "Int16": pa.int16(),
        "Int8": pa.int8(),
        "Boolean": pa.bool_(),
        "Date": pa.date32(),
    }[str(dtype)]


@dataclass
class Note:
    """The note rows of one kernel call: counts, repeated documents, warnings, an error."""

    rows: list[dict[str, Any]] = field(default_factory=list)

    def add(self, kind: str, text: str) -> None:
        """Add one note of ``kind`` (``error``, ``warning``, or a kernel's own count)."""
        self.rows.append({KIND: kind, TEXT: text})


def run_kernel(
    body: Callable[[Note], pl.DataFrame | None],
    schema: Mapping[str, pl.DataType],
    *,
    large: bool,
) -> pa.Table:
    """Run ``body``, catching warnings and errors as notes; return result and notes as Arrow."""
    import pyarrow as pa

    notes = Note()
    result: pl.DataFrame | None = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = body(notes)
        except IrevalError as exc:
            notes.add(
                "error", json.dumps({"class": type(exc).__name__, "message": str(exc)})
            )
    for warning in caught:  # ours, for the driver to issue; others stay in the log
        if issubclass(warning.category, IrevalWarning):
            notes.add("warning", str(warning.message))
    frames = []
    if result is not None and result.height:
        frames.append(
            result.select(list(schema)).with_columns(
                pl.lit(None, dtype=pl.String).alias(KIND),
                pl.lit(None, dtype=pl.String).alias(TEXT),
            )
        )
    if notes.rows:
        frames.append(
            pl.DataFrame(notes.rows, schema={KIND: pl.String, TEXT: pl.String})
            .with_columns(
                pl.lit(None, dtype=dtype).alias(name) for name, dtype in schema.items()
            )
            .select(*schema, KIND, TEXT)
        )
    full: dict[str, pl.DataType] = {**schema, KIND: pl.String(), TEXT: pl.String()}
    target = pa.schema(
        [pa.field(name, arrow_type(dtype, large=large)) for name, dtype in full.items()]
    )
    if not frames:
        return target.empty_table()
    out = pl.concat(frames, how="diagonal").select(
        pl.col(name).cast(dtype) for name, dtype in full.items()
    )
    return out.to_arrow().cast(target)


def _empty_run(*, rank: bool) -> pl.LazyFrame:
    """Return a canonical run without rows, for a group of queries only the qrels have."""
    schema: dict[str, pl.DataType] = {
        "run_id": pl.String(),
        "query_id": pl.String(),
        "doc_id": pl.String(),
        "score": pl.Float64(),
    }
    if rank:
        schema["rank"] = pl.UInt32()
    return pl.LazyFrame(schema=schema)


def read_run_side(
    run: pa.Table, *, columns: Mapping[str, str] | None, rank: bool, drop: str
) -> pl.LazyFrame:
    """Read one group's run (it may be empty) into a canonical frame.

    ``drop`` is the bucket column Spark grouped on. A shuffle loses the
    order of rows: a run column :data:`ROW` (the row's position in the
    input, numbered before the shuffle) puts it back.
    """
    frame = pl.from_arrow(run)
    assert isinstance(frame, pl.DataFrame)  # noqa: S101 - a Table gives a frame
    if ROW in frame.columns:  # the input order, for duplicates="first"
        frame = frame.sort(ROW).drop(ROW)
    frame = frame.drop(drop, strict=False)
    if frame.height == 0:
        return _empty_run(rank=rank)
    return as_run(frame, columns=columns, rank=rank, in_memory=True)


def read_sides(
    run: pa.Table,
    qrels: pa.Table,
    *,
    columns: Mapping[str, str] | None,
    rank: bool,
    drop: str,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Read one group's run and qrels (either may be empty) into canonical frames.

    Qrels with an intent column keep their judgments per intent, for the
    diversity measures, as :func:`ireval_df.evaluate` reads them.
    """
    qrels_frame = pl.from_arrow(qrels)
    assert isinstance(qrels_frame, pl.DataFrame)  # noqa: S101
    run_lf = read_run_side(run, columns=columns, rank=rank, drop=drop)
    return run_lf, judged_qrels(qrels_frame.drop(drop, strict=False), in_memory=True)


def as_udf1(kernel: Callable[[pa.Table], pa.Table]) -> Callable[[pa.Table], pa.Table]:
    """Wrap a kernel object in a function of one table, for ``groupBy().applyInArrow``.

    Its parameter has no annotation: pyspark 4 fails on a function whose
    parameters are annotated in part (see :func:`as_udf`).
    """

    def apply(table):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202 - Spark reads hints
        return kernel(table)

    return apply


def as_udf(
    kernel: Callable[[pa.Table, pa.Table], pa.Table],
) -> Callable[[pa.Table, pa.Table], pa.Table]:
    """Wrap a kernel object in a function of two tables, as ``cogroup.applyInArrow`` wants.

    Spark counts a callable's parameters to choose how to call it, on the
    driver without ``self`` and on the workers with it: an object's
    ``__call__`` passes one check and fails the other, a function passes both.
    """

    def apply(left, right):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202 - Spark reads hints
        return kernel(left, right)

    return apply


#: The per-query result of ``evaluate`` as the kernel returns it.
EVALUATE_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "query_id": pl.String(),
    "metric": pl.String(),
    "value": pl.Float64(),
    ORDER: pl.Int64(),
}


@dataclass(frozen=True)
class EvaluateKernel:
    """:func:`ireval_df.evaluate` on one group of whole queries (see the module docstring).

    Notes: ``unjudged`` (the sum and count of the unjudged shares of the top
    10, for the warning), ``dropped`` (rows dropped by ``duplicates``),
    ``repeats`` (documents twice in one ranking, with the first as example).
    """

    metrics: tuple[str, ...]
    run_ids: tuple[str, ...]
    columns: Mapping[str, str] | None
    missing: str
    depth: int | None
    duplicates: str
    rank_from: str
    compat: str
    bucket: str
    large: bool
    #: the highest grade of all the qrels, for max_rel=0 (None: not needed)
    top_grade: int | None = None

    def __call__(self, run: pa.Table, qrels: pa.Table) -> pa.Table:
        """Evaluate one group: its per-query rows and its notes, as Arrow."""
        return run_kernel(
            lambda notes: self._evaluate(run, qrels, notes),
            EVALUATE_SCHEMA,
            large=self.large,
        )

    def _evaluate(self, run: pa.Table, qrels: pa.Table, notes: Note) -> pl.DataFrame:
        run_lf, qrels_lf = read_sides(
            run,
            qrels,
            columns=self.columns,
            rank=self.rank_from == "column",
            drop=self.bucket,
        )
        options = EngineOptions(rank_from=self.rank_from)  # type: ignore[arg-type]
        if self.duplicates == "error" and _repeats(run_lf, options, notes):
            return pl.DataFrame(schema=EVALUATE_SCHEMA)
        long, shares, dropped = evaluate_queries(
            run_lf,
            qrels_lf,
            parse_metrics(list(self.metrics), family="offline"),
            run_ids=self.run_ids,
            missing=self.missing,  # type: ignore[arg-type]
            depth=self.depth,
            duplicates=self.duplicates,  # type: ignore[arg-type]
            rank_from=self.rank_from,  # type: ignore[arg-type]
            compat=self.compat,  # type: ignore[arg-type]
            top_grade=self.top_grade,
        )
        share = shares["share"]
        notes.add("unjudged", json.dumps([float(share.sum()), share.len()]))
        if dropped:
            notes.add("dropped", str(dropped))
        return long.with_columns(
            pl.int_range(pl.len(), dtype=pl.Int64)
            .over("run_id", "query_id")
            .alias(ORDER)
        )


#: The rows of ``similarity`` as the kernel returns them, with the positions
#: of the run and the baseline among the runs, to sort as locally.
SIMILARITY_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "baseline": pl.String(),
    "query_id": pl.String(),
    "metric": pl.String(),
    "value": pl.Float64(),
    "__ireval_run": pl.Int64(),
    "__ireval_baseline": pl.Int64(),
    ORDER: pl.Int64(),
}


@dataclass(frozen=True)
class SimilarityKernel:
    """:func:`ireval_df.similarity` on one group of whole queries (every run's rows of each).

    ``runs`` are the runs of the whole data in order of first appearance,
    ``baselines`` those chosen on the driver. Notes: ``dropped`` and
    ``repeats``, as :class:`EvaluateKernel`'s.
    """

    metrics: tuple[str, ...]
    runs: tuple[str, ...]
    baselines: tuple[str, ...]
    columns: Mapping[str, str] | None
    missing: str
    duplicates: str
    rank_from: str
    bucket: str
    large: bool

    def __call__(self, run: pa.Table) -> pa.Table:
        """Compare the runs on one group: its rows and its notes, as Arrow."""
        return run_kernel(
            lambda notes: self._compare(run, notes), SIMILARITY_SCHEMA, large=self.large
        )

    def _compare(self, run: pa.Table, notes: Note) -> pl.DataFrame:
        from ireval_df.offline.evaluation import check_ranks, unique_rankings
        from ireval_df.similarity.compute import similarity_rows

        rank = self.rank_from == "column"
        run_lf = read_run_side(run, columns=self.columns, rank=rank, drop=self.bucket)
        options = EngineOptions(rank_from=self.rank_from)  # type: ignore[arg-type]
        if self.duplicates == "error" and _repeats(run_lf, options, notes):
            return pl.DataFrame(schema=SIMILARITY_SCHEMA)
        run_lf, found, dropped = unique_rankings(
            run_lf,
            options,
            self.duplicates,  # type: ignore[arg-type]
        )
        if dropped:
            notes.add("dropped", str(dropped))
        if rank:
            check_ranks(run_lf)
        rows = similarity_rows(
            run_lf,
            found,
            parse_metrics(list(self.metrics), family="similarity"),
            list(self.runs),
            list(self.baselines),
            missing=self.missing,  # type: ignore[arg-type]
            rank_from=self.rank_from,  # type: ignore[arg-type]
            report=False,  # the driver reported them, for all groups
        )
        position = {name: i for i, name in enumerate(self.runs)}
        return rows.with_columns(
            pl.col("run_id")
            .replace_strict(position, return_dtype=pl.Int64)
            .alias("__ireval_run"),
            pl.col("baseline")
            .replace_strict(position, return_dtype=pl.Int64)
            .alias("__ireval_baseline"),
            pl.int_range(pl.len(), dtype=pl.Int64)
            .over("run_id", "baseline", "query_id")
            .alias(ORDER),
        )


def _repeats(run: pl.LazyFrame, options: EngineOptions, notes: Note) -> bool:
    """Note the documents repeated in one ranking of ``run``; whether there are any."""
    counts = repeated_documents(run, options)
    if counts is None:
        return False
    extra = int(counts["n"].sum()) - counts.height
    text = {
        "documents": counts.height,
        "extra": extra,
        "example": counts.row(0, named=True),
    }
    notes.add("repeats", json.dumps(text))
    return True


#: The per-query rows of ``failures`` (see :func:`ireval_df.failures`).
FAILURES_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "query_id": pl.String(),
    **{
        name: pl.Int64()
        for name in (
            "n_relevant",
            "n_top_k",
            "n_candidate",
            "n_scoring",
            "n_dropped",
            "n_inverted_pairs",
            "n_calibration_pairs",
            "n_freshness_pairs",
        )
    },
    "intent_failure": pl.Boolean(),
    "failure": pl.String(),
}


@dataclass(frozen=True)
class FailuresKernel:
    """:func:`ireval_df.failures` per query on one group of whole queries.

    ``runs`` are the runs of the whole data; ``weights`` the intents'
    weights (``intents=``), read on the driver. Notes: ``dropped`` and
    ``repeats``, as :class:`EvaluateKernel`'s.
    """

    runs: tuple[str, ...]
    k: int
    rel: int
    stages: tuple[str, ...] | None
    stage_depth: int | None
    weights: pl.DataFrame | None
    columns: Mapping[str, str] | None
    duplicates: str
    bucket: str
    large: bool

    def __call__(self, run: pa.Table, qrels: pa.Table) -> pa.Table:
        """Count one group's failures: its per-query rows and notes, as Arrow."""
        return run_kernel(
            lambda notes: self._count(run, qrels, notes),
            FAILURES_SCHEMA,
            large=self.large,
        )

    def _count(self, run: pa.Table, qrels: pa.Table, notes: Note) -> pl.DataFrame:
        from ireval_df.diagnostics.failure_kinds import failure_rows
        from ireval_df.diagnostics.intents import read_judgments
        from ireval_df.diagnostics.stages import pipeline
        from ireval_df.offline.evaluation import unique_rankings

        run_lf = read_run_side(run, columns=self.columns, rank=False, drop=self.bucket)
        options = EngineOptions()
        if self.duplicates == "error" and _repeats(run_lf, options, notes):
            return pl.DataFrame(schema=FAILURES_SCHEMA)
        run_lf, rankings, dropped = unique_rankings(
            run_lf,
            options,
            self.duplicates,  # type: ignore[arg-type]
        )
        if dropped:
            notes.add("dropped", str(dropped))
        if qrels.num_rows == 0:  # queries only in the run: not counted
            return pl.DataFrame(schema=FAILURES_SCHEMA)
        frame = pl.from_arrow(qrels)
        assert isinstance(frame, pl.DataFrame)  # noqa: S101 - a Table gives a frame
        judged = read_judgments(frame.drop(self.bucket, strict=False))
        runs = list(self.runs)
        found = (
            None
            if self.stages is None
            else pipeline(list(self.stages), self.stage_depth, runs)
        )
        per_query, _, _ = failure_rows(
            run_lf,
            rankings,
            runs,
            judged,
            None if self.weights is None else self.weights.lazy(),
            k=self.k,
            rel=self.rel,
            found=found,
        )
        return per_query
