"""One local Spark session for every Spark test, and the helpers they share.

The session is ``local[2]`` with a C1-only JIT and small shuffles (the
tests' data is small; the first Python job of a session costs seconds, so
all tests share it). Without pyspark or Java the tests skip and say why.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from spark_helpers import skip_without_spark

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import polars as pl

DATA = Path(__file__).resolve().parents[3] / "data"


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """A ``local[2]`` SparkSession for the whole test session."""
    skip_without_spark()
    from pyspark.sql import SparkSession

    # the Python workers must be this interpreter (it has ireval_df and polars)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("ireval_df-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .config(
            "spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
        )
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def to_spark(spark: Any) -> Callable[[pl.DataFrame], Any]:
    """Send a polars frame to the session."""
    from ireval_df.spark.jobs import to_spark as send

    return lambda frame: send(spark, frame)
