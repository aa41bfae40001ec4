"""Spark sessions and Spark-readable paths, for the command line and scripts.

:func:`session` returns the active Spark session, or starts one with the
default configuration (``spark-submit``'s, ``spark-defaults.conf``, or a
local one). :func:`read_run` and :func:`read_qrels` read any path Spark
can read (``s3a://``, ``abfss://``, ``gs://``, ``hdfs://``, local), by its
ending: Parquet (``.parquet``, ``.pq``, or a folder), Delta Lake (a
``.delta`` folder, or a local folder with ``_delta_log``), CSV (``.csv``),
TSV (``.tsv``), JSON Lines (``.jsonl``, ``.ndjson``, ``.json``), else TREC
text (``qid Q0 docno rank score tag``, ``qid iter docno rel``; ``.gz`` is
read by Spark itself).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from ireval_df.errors import FormatError, OptionError, SchemaError
from ireval_df.io.files import stem
from ireval_df.schema.columns import RUN
from ireval_df.schema.prepare import check_schema, run_id_clash
from ireval_df.spark.jobs import frame_schema, to_polars

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["read_log_tables", "read_qrels", "read_run", "session", "stack_runs"]


def session() -> SparkSession:
    """Return the active Spark session, or one built from the default configuration.

    A session built here for a local master runs its Python workers with
    this interpreter (``PYSPARK_PYTHON``, unless set), which has ireval_df,
    and, unless the user configures Spark (:func:`_configured`), logs
    errors only (``log4j2.properties`` beside this module), so a command
    prints its results and warnings without Spark's start-up lines.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        msg = (
            "--engine spark needs pyspark 4: pip install 'ireval-df[spark]' "
            "(and Java 17 for a local Spark)."
        )
        raise OptionError(msg) from exc
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("ireval-df").config(
        "spark.ui.showConsoleProgress", "false"
    )
    if not _configured():  # errors only, not Spark's start-up lines
        config = Path(__file__).with_name("log4j2.properties").as_uri()
        builder = builder.config(
            "spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={config}"
        )
    return builder.getOrCreate()


def _configured() -> bool:
    """Whether the user configures Spark, or spark-submit started its JVM already.

    ``SPARK_CONF_DIR``, ``PYSPARK_SUBMIT_ARGS``, ``PYSPARK_GATEWAY_PORT``
    (a running driver) or a ``spark-defaults.conf`` or ``log4j2.properties``
    in the Spark home's ``conf`` folder: then the session keeps their
    logging and Java options.
    """
    import pyspark

    names = ("SPARK_CONF_DIR", "PYSPARK_SUBMIT_ARGS", "PYSPARK_GATEWAY_PORT")
    if any(os.environ.get(name) for name in names):
        return True
    home = Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent)
    files = ("spark-defaults.conf", "log4j2.properties")
    return any((home / "conf" / name).is_file() for name in files)


def _kind(path: str) -> str:
    """Return the format of ``path`` by its ending (see the module docstring)."""
    name = PurePosixPath(path.rstrip("/")).name.lower()
    for ending in (".gz", ".bz2"):
        name = name.removesuffix(ending)
    suffix = PurePosixPath(name).suffix
    if suffix == ".delta" or Path(path, "_delta_log").is_dir():
        return "delta"
    if suffix in (".parquet", ".pq") or (suffix == "" and Path(path).is_dir()):
        return "parquet"
    return {
        ".csv": "csv",
        ".tsv": "tsv",
        ".jsonl": "json",
        ".ndjson": "json",
        ".json": "json",
    }.get(suffix, "trec")


def _read(
    spark: SparkSession, path: str, trec: tuple[tuple[str, int, str], ...]
) -> DataFrame:
    """Read ``path``; TREC text into the columns ``trec`` names (name, field, type)."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's convention

    kind = _kind(path)
    try:
        if kind in ("parquet", "delta", "json"):
            return spark.read.format(kind).load(path)
        if kind in ("csv", "tsv"):
            return spark.read.csv(
                path, header=True, inferSchema=True, sep="\t" if kind == "tsv" else ","
            )
        lines = spark.read.text(path)
    except Exception as exc:  # Spark's own errors: Py4J or captured, by message
        raise _read_error(path, kind, exc) from None
    fields = F.split(F.trim(F.col("value")), r"\s+")
    return lines.where(F.trim(F.col("value")) != "").select(
        *(fields.getItem(i).cast(dtype).alias(name) for name, i, dtype in trec)
    )


def _read_error(path: str, kind: str, exc: Exception) -> Exception:
    """Turn Spark's error on reading ``path`` into one that says what to do.

    Spark raises a captured ``AnalysisException`` for a missing path and a
    ``Py4JJavaError`` for a data source it lacks (Delta Lake without
    ``delta-spark``); both are told apart by their error class in the text.
    Anything else is Spark's own message, in one line.
    """
    text = str(exc)
    if "PATH_NOT_FOUND" in text:
        return FormatError(f"cannot read {path!r}: no such file or folder")
    if "DATA_SOURCE_NOT_FOUND" in text and kind == "delta":
        msg = (
            f"cannot read {path!r}: it is a Delta Lake table, and this Spark "
            f"session has no Delta Lake.\n  Hint: pip install delta-spark and "
            f"start Spark with it (spark-submit --packages "
            f"io.delta:delta-spark_2.13:<version>, or "
            f"delta.configure_spark_with_delta_pip(builder))."
        )
        return OptionError(msg)
    first = next((line for line in text.splitlines() if line.strip()), text)
    return FormatError(f"cannot read {path!r} with Spark ({kind}): {first.strip()}")


def read_run(spark: SparkSession, path: str) -> DataFrame:
    """Read a run from a Spark-readable path; without a ``run_id`` it is named after its file.

    TREC text keeps each line's tag as its ``run_id``, as the local reader does.
    """
    from pyspark.sql import functions as F  # noqa: N812

    frame = _read(
        spark,
        path,
        (
            ("query_id", 0, "string"),
            ("doc_id", 2, "string"),
            ("rank", 3, "bigint"),
            ("score", 4, "double"),
            ("run_id", 5, "string"),
        ),
    )
    if "run_id" not in frame.columns:
        frame = frame.withColumn("run_id", F.lit(stem(path.rstrip("/"))))
    return frame


def stack_runs(frames: list[DataFrame]) -> DataFrame:
    """Stack runs read by :func:`read_run`, each under its canonical column names.

    A column named differently in each (``qid``, ``query_id``) is renamed
    first, as :func:`ireval_df.evaluate` does with a list of runs.
    """
    from pyspark.sql import functions as F  # noqa: N812

    if len(frames) == 1:
        return frames[0]
    parts = []
    seen: dict[str, int] = {}
    for i, frame in enumerate(frames, start=1):
        mapping = check_schema(frame_schema(frame), RUN, None, f"run #{i}")
        part = frame.select(
            *(F.col(f"`{src}`").alias(dst) for src, dst in mapping.items())
        )
        # one small job a run: the names it holds, refused when another has one
        for name in sorted(to_polars(part.select("run_id").distinct())["run_id"]):
            if name in seen:
                raise run_id_clash(name, seen[name], i)
            seen[name] = i
        parts.append(part)
    stacked = parts[0]
    for part in parts[1:]:
        stacked = stacked.unionByName(part, allowMissingColumns=True)
    return stacked


def read_qrels(spark: SparkSession, path: str, *, intents: bool = False) -> DataFrame:
    """Read qrels from a Spark-readable path (TREC text: ``qid iter docno rel``).

    ``intents``: TREC text is diversity qrels, ``qid subtopic docno rel``: the
    second field is kept as ``intent``, as ``read_qrels(path, intents=True)``
    reads it locally. Tables are read whole (an ``intent`` column is kept).
    """
    fields = [("query_id", 0, "string"), ("doc_id", 2, "string")]
    if intents:
        fields.append(("intent", 1, "string"))
    return _read(spark, path, (*fields, ("relevance", 3, "int")))


#: The tables of a search log, as ``ie.online.read_log`` names its files.
LOG_TABLES = ("searches", "results", "events", "units")


def read_log_tables(spark: SparkSession, folder: str) -> dict[str, DataFrame]:
    """Read the tables of a search log folder (``searches.parquet`` ...) with Spark.

    A local folder is listed: each table is a file or a folder named after
    it, read by its ending (Parquet, Delta, CSV, TSV, JSON Lines). A remote
    one (``s3a://`` ...) cannot be listed from here: each table is
    ``<folder>/<table>.parquet`` or the Parquet folder ``<folder>/<table>``.
    """
    found: dict[str, list[str]] = {t: [] for t in LOG_TABLES}
    if "://" not in folder:
        root = Path(folder)
        if not root.is_dir():
            msg = (
                f"--log {folder!r} is not a folder; pass the folder that holds "
                f"searches.parquet (or .csv, .jsonl) and the other tables."
            )
            raise FormatError(msg)
        for path in sorted(root.iterdir()):
            name = path.name.split(".")[0]
            if name in found and not path.name.startswith("."):
                found[name].append(str(path))
    else:
        from pyspark.errors import AnalysisException

        for table in LOG_TABLES:
            for candidate in (
                f"{folder.rstrip('/')}/{table}.parquet",
                f"{folder.rstrip('/')}/{table}",
            ):
                try:
                    spark.read.parquet(candidate).schema  # noqa: B018 - it must exist
                except AnalysisException:
                    continue
                found[table].append(candidate)
                break
    out: dict[str, DataFrame] = {}
    for table, paths in found.items():
        if len(paths) > 1:
            names = [PurePosixPath(p).name for p in paths]
            msg = (
                f"--log {folder!r} holds {len(paths)} files for the {table} table "
                f"({names}); keep one."
            )
            raise FormatError(msg)
        if paths:
            out[table] = _read(spark, paths[0], ())
    if "searches" not in out:
        msg = (
            f"--log {folder!r} has no searches table (one row per result page "
            f"served).\n  Hint: the folder holds searches.parquet (or .csv, "
            f".jsonl), and optionally results, events and units."
        )
        raise SchemaError(msg)
    return out
