"""The two Spark benches run end to end on tiny data (smoke tests, never timed).

``bench/spark.py`` (``spark.evaluate`` against ``ie.evaluate``) and
``bench/spark_online.py`` (``spark.online_metrics`` against
``online.metrics``) each start their own ``local[2]`` session, so each runs
in a fresh interpreter here, on the ``tiny`` shape and the ``log-tiny``
log, one round, and must report Spark's rows equal to the local ones.
Nothing about time or memory is asserted. Skips without pyspark or Java,
like every Spark test.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from spark_helpers import run_spark_python, skip_without_spark

pytestmark = [pytest.mark.spark, pytest.mark.slow]

BENCH = Path(__file__).resolve().parents[3] / "bench"


def test_the_spark_evaluate_bench_runs_on_the_tiny_shape(tmp_path: Path) -> None:
    skip_without_spark()
    out = run_spark_python(
        [
            str(BENCH / "spark.py"),
            *("--shape", "tiny", "--data", str(tmp_path / "data")),
            *("--rounds", "1", "--partitions", "2", "--driver-memory", "1g"),
            *("--json", str(tmp_path / "spark.json")),
        ],
        tmp_path,
    ).stdout
    assert "tiny:" in out
    equal = json.loads((tmp_path / "spark.json").read_text())["equal"]
    assert equal["keys"], equal
    assert equal["max_abs_diff"] <= 1e-12, equal


def test_the_spark_online_bench_runs_on_the_tiny_log(tmp_path: Path) -> None:
    skip_without_spark()
    log = tmp_path / "log"
    subprocess.run(
        [sys.executable, str(BENCH / "generate.py"), "log-tiny", str(log)],
        capture_output=True,
        check=True,
    )
    out = run_spark_python(
        [
            str(BENCH / "spark_online.py"),
            *("--data", str(log), "--rounds", "1", "--driver-memory", "1g"),
            *("--shuffle-partitions", "2"),
        ],
        tmp_path,
    ).stdout
    assert "| Spark, warm | 1 |" in out
    found = re.search(r"equal to the local ones: keys (\w+), values within (\S+)", out)
    assert found is not None, out[-2000:]
    assert found[1] == "True", found[0]
    assert float(found[2]) <= 1e-12, found[0]
