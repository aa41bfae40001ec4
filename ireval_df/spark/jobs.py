"""The driver's side: Spark frames in, checked, bucketed, run, and their notes read.

Every public function of :mod:`ireval_df.spark` follows one plan:

1. check the options, the metric names and the frames' columns and dtypes
   on the driver, with the local code, before any Spark job
   (:func:`frame_schema`, then :func:`ireval_df.schema.prepare.check_schema`);
2. give every row a bucket, ``pmod(xxhash64(id), partitions)`` of its query
   (or unit) id as the local engine reads it (:func:`canonical_id`), so that
   all rows of one query land in one group on every side;
3. ``groupBy(bucket).cogroup(...).applyInArrow(kernel)``: each group goes to
   one Python worker as Arrow tables (:mod:`ireval_df.spark.kernels`);
4. :func:`run_job`: cache the output, read its note rows (one small
   collect), raise a kernel's error as the same
   :class:`~ireval_df.errors.IrevalError`, and return the result rows.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from ireval_df import errors
from ireval_df.errors import IrevalError, OptionError, SchemaError
from ireval_df.schema.columns import DEFAULT_RUN_ID
from ireval_df.spark.kernels import KIND, TEXT, as_udf, spark_ddl

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyspark.sql import Column, DataFrame, SparkSession

__all__ = [
    "BUCKET",
    "bucket_of",
    "canonical_id",
    "frame_schema",
    "large_strings",
    "partitions_of",
    "require_frame",
    "run_job",
]

#: The column holding each row's group of queries.
BUCKET = "__ireval_bucket"


def require_frame(obj: Any, label: str) -> DataFrame:
    """Return ``obj`` if it is a Spark DataFrame, else raise :class:`SchemaError`.

    Classic and Spark Connect frames are both accepted.
    """
    try:
        from pyspark.sql import DataFrame as ClassicFrame
    except ImportError as exc:  # pragma: no cover - the functions need pyspark
        msg = (
            "ireval_df.spark needs pyspark 4: pip install 'ireval-df[spark]' "
            "(and Java 17 for a local Spark)."
        )
        raise OptionError(msg) from exc
    kinds: tuple[type, ...] = (ClassicFrame,)
    try:
        from pyspark.sql.connect.dataframe import DataFrame as ConnectFrame

        kinds = (*kinds, ConnectFrame)
    except ImportError:  # Spark Connect's extra is not installed
        pass
    if not isinstance(obj, kinds):
        msg = (
            f"{label} is a {type(obj).__name__}; ireval_df.spark takes Spark "
            f"DataFrames.\n  Hint: read it with spark.read.parquet(path), or "
            f"use ie.evaluate for local frames and files."
        )
        raise SchemaError(msg)
    return cast("DataFrame", obj)


def frame_schema(frame: DataFrame) -> dict[str, pl.DataType]:
    """Return the polars dtype of each column of a Spark frame, without a job.

    Examples
    --------
    >>> # frame_schema(spark.createDataFrame([("q1", 1.0)], "qid string, s double"))
    >>> # {'qid': String, 's': Float64}
    """
    from pyspark.sql.pandas.types import to_arrow_schema

    try:  # a time with a zone (Spark's TIMESTAMP) is read in UTC
        arrow = to_arrow_schema(frame.schema, timezone="UTC")
    except TypeError:  # pragma: no cover - a pyspark without the keyword
        arrow = to_arrow_schema(frame.schema)
    empty = pl.from_arrow(arrow.empty_table())
    assert isinstance(empty, pl.DataFrame)  # noqa: S101 - a Table gives a frame
    return dict(empty.schema)


def run_id_of(frame: DataFrame, source: dict[str, str]) -> Column:
    """Return the run's canonical ``run_id`` column (``source``: canonical -> source).

    A run without a ``run_id`` column is the default run, as locally.
    """
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    if "run_id" in source:
        return canonical_id(frame, source["run_id"])
    return F.lit(DEFAULT_RUN_ID)


def cogrouped(
    left: DataFrame,
    right: DataFrame,
    kernel: Callable[[Any, Any], Any],
    schema: dict[str, pl.DataType],
) -> DataFrame:
    """Both sides grouped by bucket, each bucket's pair of tables given to ``kernel``."""
    return (
        left.groupBy(BUCKET)
        .cogroup(right.groupBy(BUCKET))
        .applyInArrow(as_udf(kernel), spark_ddl(schema))
    )


def canonical_id(frame: DataFrame, name: str) -> Column:
    """Return column ``name`` as the id string the local engine reads.

    Integers are written in decimal and whole floats as integers, as
    :func:`ireval_df.schema.coerce.as_run` does, so that ``1``, ``1.0`` and
    ``"1"`` are one query on every side (and in one bucket).
    """
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention
    from pyspark.sql.types import (
        DecimalType,
        DoubleType,
        FloatType,
        IntegralType,
        StringType,
    )

    col = F.col(f"`{name}`")
    dtype = frame.schema[name].dataType
    if isinstance(dtype, StringType):
        return col
    if isinstance(dtype, IntegralType):
        return col.cast("string")
    if isinstance(dtype, DoubleType | FloatType | DecimalType):
        return col.cast("long").cast("string")
    return col.cast("string")


def bucket_of(frame: DataFrame, name: str, partitions: int) -> Column:
    """Return the bucket of each row: a stable hash of its id, modulo ``partitions``.

    ``xxhash64`` with Spark's fixed seed gives the same bucket on every
    executor and in every Spark version; never Python's ``hash``.
    """
    from pyspark.sql import functions as F  # noqa: N812

    key = F.xxhash64(canonical_id(frame, name))
    return F.pmod(key, F.lit(partitions)).alias(BUCKET)


def partitions_of(spark: SparkSession, partitions: int | None) -> int:
    """Return the number of query groups: ``partitions``, else ``spark.sql.shuffle.partitions``."""
    if partitions is None:
        return int(spark.conf.get("spark.sql.shuffle.partitions") or 200)
    if (
        isinstance(partitions, bool)
        or not isinstance(partitions, int)
        or partitions < 1
    ):
        msg = f"partitions must be a positive whole number, found {partitions!r}."
        raise OptionError(msg)
    return partitions


#: The first pyspark whose applyInArrow expects large_string back under
#: useLargeVarTypes (SPARK-56929; 4.0 expects string whatever the setting)
LARGE_STRINGS_FROM = (4, 3)


def large_strings(spark: SparkSession) -> bool:
    """Whether the session's Arrow exchange uses ``large_string`` (a Spark setting).

    Raises
    ------
    OptionError
        The setting is on with a pyspark older than :data:`LARGE_STRINGS_FROM`,
        whose grouped Arrow functions expect plain strings back.
    """
    import pyspark

    value = spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false")
    if str(value).lower() != "true":
        return False
    version = tuple(int(p) for p in pyspark.__version__.split(".")[:2] if p.isdigit())
    if version < LARGE_STRINGS_FROM:
        need = ".".join(map(str, LARGE_STRINGS_FROM))
        msg = (
            f"spark.sql.execution.arrow.useLargeVarTypes is true, which pyspark "
            f"{pyspark.__version__}'s applyInArrow does not follow for its results "
            f"(fixed in SPARK-56929).\n  Hint: set it to false for this job, or "
            f"use pyspark {need} or newer."
        )
        raise OptionError(msg)
    return True


_EXECUTOR_HINT = (
    "\n  Hint: the executors need ireval_df and polars installed (cluster "
    "libraries, spark-submit --archives with a packed environment, or "
    "spark.addArtifacts); in local mode, set PYSPARK_PYTHON to the Python "
    "that has them."
)


def run_job(
    out: DataFrame,
    notes: Callable[[list[tuple[str, str]]], None],
) -> tuple[DataFrame, DataFrame]:
    """Compute ``out`` (a kernel's output), hand its notes to ``notes``; return its rows.

    ``out`` is cached and computed by one collect of its note rows; errors
    the kernels returned are raised here as the same
    :class:`~ireval_df.errors.IrevalError` class, the first group's message
    with a count of the groups that failed. Warnings the kernels caught are
    issued once each; ``notes`` gets every other note ``(kind, text)``.
    Returns the result rows (read from the cache) and the cached frame
    itself: only ``unpersist()`` on that one frees the cache.
    """
    from pyspark.errors import PySparkException

    out = out.cache()
    try:
        rows = out.where(out[KIND].isNotNull()).select(KIND, TEXT).collect()
    except PySparkException as exc:
        text = str(exc)
        if "ModuleNotFoundError" in text or "No module named" in text:
            line = next(
                (s for s in text.splitlines() if "No module named" in s), text[:200]
            )
            msg = f"a Spark executor could not import ireval_df: {line.strip()}"
            raise IrevalError(msg + _EXECUTOR_HINT) from None
        raise
    pairs = sorted((str(r[0]), str(r[1])) for r in rows)
    failures = [json.loads(text) for kind, text in pairs if kind == "error"]
    if failures:
        out.unpersist()
        raise _error(failures)
    for message in dict.fromkeys(text for kind, text in pairs if kind == "warning"):
        errors.warn(message)
    notes([(kind, text) for kind, text in pairs if kind not in ("error", "warning")])
    return out.where(out[KIND].isNull()).drop(KIND, TEXT), out


def _error(failures: list[dict[str, str]]) -> IrevalError:
    """Return the error of the first failed group, as its own class."""
    first = failures[0]
    kinds = {
        cls.__name__: cls
        for cls in (
            errors.SchemaError,
            errors.FormatError,
            errors.DataError,
            errors.OptionError,
            errors.MetricSpecError,
            errors.AlignmentError,
        )
    }
    cls = kinds.get(first["class"], IrevalError)
    message = first["message"]
    if len(failures) > 1:
        message += (
            f"\n  (Spark: {len(failures)} groups of queries failed; the counts "
            f"above are those of the first.)"
        )
    return cls(message)


def to_polars(frame: DataFrame) -> pl.DataFrame:
    """Collect a small Spark frame (ids, attributes) to the driver as polars."""
    result = pl.from_arrow(frame.toArrow())
    assert isinstance(result, pl.DataFrame)  # noqa: S101 - a Table gives a frame
    return result


def to_spark(spark: SparkSession, frame: pl.DataFrame) -> DataFrame:
    """Send a small polars frame to Spark, its dtypes kept.

    Unsigned integers, which Spark lacks, are widened; a time without a zone
    (ireval_df's UTC times) stays one (``TIMESTAMP_NTZ``), whatever the
    session's ``spark.sql.timestampType``, so that it comes back unchanged.
    """
    from pyspark.sql.pandas.types import from_arrow_schema

    widened = frame.with_columns(
        pl.col(name).cast(pl.Int64)
        for name, dtype in frame.schema.items()
        if dtype in (pl.UInt8, pl.UInt16, pl.UInt32)
    )
    table = widened.to_arrow()
    schema = from_arrow_schema(table.schema, prefer_timestamp_ntz=True)
    return spark.createDataFrame(table, schema=schema)
