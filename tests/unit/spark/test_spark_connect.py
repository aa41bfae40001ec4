"""``ireval_df.spark`` through Spark Connect (Databricks' shared and serverless compute).

A Spark Connect session has no ``SparkContext`` and no JVM on the client:
the entry points (``evaluate``, ``similarity``, ``failures``,
``online_metrics``, ``unit_table``) must use only the DataFrame API. pyspark starts a local
Spark Connect server with ``SparkSession.builder.remote("local[2]")``; it
runs in a fresh interpreter here, as a Spark Connect client and a classic
session do not share one process. Skips without Java or without the
``pyspark[connect]`` client libraries (grpcio, ...).

pyspark's local server always listens on port 15002 (the client finds it
there), so two test runs on one machine take turns through a lock file,
and the test skips when another program holds the port.
"""

from __future__ import annotations

import contextlib
import socket
import tempfile
import warnings
from pathlib import Path

import pytest
from spark_helpers import run_spark_python, skip_without_spark

try:
    import fcntl
except ImportError:  # Windows: no lock file, only the port check
    fcntl = None  # type: ignore[assignment]

pytestmark = pytest.mark.spark

DATA = Path(__file__).resolve().parents[3] / "data"
PORT = 15002  # pyspark's local Spark Connect server and its client both use it


@contextlib.contextmanager
def _port_to_ourselves():
    """Wait for any other run of this test, then check nothing else holds PORT."""
    lock = Path(tempfile.gettempdir(), f"ireval-df-spark-connect-{PORT}.lock")
    with lock.open("a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            with socket.socket() as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    probe.bind(("127.0.0.1", PORT))
                except OSError:
                    pytest.skip(
                        f"port {PORT} is taken by another program; pyspark's local "
                        "Spark Connect server needs it (stop that program to run this)"
                    )
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


SCRIPT = r"""
import os, sys, warnings
warnings.simplefilter("ignore")
import polars as pl
from pyspark.sql import SparkSession
import ireval_df as ie
import ireval_df.spark as isp
from ireval_df.errors import MetricSpecError

data = sys.argv[1]
spark = (
    SparkSession.builder.remote("local[2]")
    .config("spark.sql.shuffle.partitions", "4")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
assert type(spark).__module__.startswith("pyspark.sql.connect"), type(spark)
run = spark.read.parquet(f"{data}/runs.parquet")
qrels = spark.read.parquet(f"{data}/qrels.parquet")


def rows(frame):
    return pl.from_arrow(frame.toArrow())


def largest_gap(got, want):
    assert got.columns == want.columns, (got.columns, want.columns)
    assert got.height == want.height, (got.height, want.height)
    floats = [c for c, t in want.schema.items() if t.is_float()]
    others = [c for c in want.columns if c not in floats]
    assert got.select(others).cast(want.select(others).schema).equals(want.select(others))
    return max(
        [(got[c] - want[c]).abs().fill_nan(0).max() or 0.0 for c in floats] or [0.0]
    )


local_run = pl.read_parquet(f"{data}/runs.parquet")
local_qrels = pl.read_parquet(f"{data}/qrels.parquet")
gaps = {
    "evaluate": largest_gap(
        rows(isp.evaluate(run, qrels, ["nDCG@10", "AP", "RR"])),
        ie.evaluate(local_run, local_qrels, ["nDCG@10", "AP", "RR"]),
    ),
    "similarity": largest_gap(
        rows(isp.similarity(run, ["RBO(p=0.9)", "Jaccard@10"], baseline="bm25")),
        ie.similarity(local_run, ["RBO(p=0.9)", "Jaccard@10"], baseline="bm25"),
    ),
    "failures": largest_gap(
        rows(isp.failures(run, qrels)), ie.failures(local_run, local_qrels)
    ),
}
tables = {
    t: spark.read.parquet(f"{data}/log/{t}.parquet")
    for t in ("searches", "results", "events", "units")
}
log = ie.online.read_log(f"{data}/log")
online = ["CTR", "ClickRR", "PositionCTR", "TimeToFirstClick"]
gaps["online_metrics"] = largest_gap(
    rows(isp.online_metrics(tables, online, by="device")),
    ie.online.metrics(log, online, by="device"),
)
gaps["unit_table"] = largest_gap(
    rows(isp.unit_table(tables, ["CTR", "ClicksPerSearch"])),
    ie.online.unit_table(log, ["CTR", "ClicksPerSearch"]),
)
print(gaps)
assert all(gap <= 1e-12 for gap in gaps.values()), gaps
# an error found before any job is the same IrevalError as locally
try:
    isp.evaluate(run, qrels, ["nDGC@10"])
except MetricSpecError as exc:
    print("refused:", str(exc).splitlines()[0])
else:
    raise AssertionError("an unknown metric was accepted")
spark.stop()
"""


def test_the_spark_entry_points_run_through_spark_connect(tmp_path):
    skip_without_spark()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pyspark's notice about pandas 3
        try:
            from pyspark.testing.connectutils import (
                connect_requirement_message,
                should_test_connect,
            )
        except ImportError as exc:
            should_test_connect, connect_requirement_message = False, str(exc)
    if not should_test_connect:
        pytest.skip(
            f"the Spark Connect client is not installed ({connect_requirement_message}; "
            "pip install 'pyspark[connect]', in the dev extra)"
        )
    with _port_to_ourselves():
        out = run_spark_python(["-c", SCRIPT, str(DATA)], tmp_path, timeout=600).stdout
    assert "refused: " in out
